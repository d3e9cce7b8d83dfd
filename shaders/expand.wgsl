// Broadcasts x to a larger shape: out[i] = x[(i / inner) % n] (x read as (outer, n, inner)).
// Bindings: x (read), out (write), params.

override WG: u32 = 256u;

struct Params {
  total: u32,
  n: u32,
  inner: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.total) { return; }
  out[i] = x[(i / p.inner) % p.n];
}
