// A window of columns along the last axis, and its adjoint.
// Bindings (both entry points): src (read), out (write), params.
// slice: src [rows, wide], out [rows, narrow]:  out[r, j] = src[r, start + j]
// pad:   src [rows, narrow], out [rows, wide]:  out[r, c] = src[r, c - start] inside the window, else 0

override WG: u32 = 256u;

struct Params {
  rows: u32,
  wide: u32,    // columns of the full tensor
  narrow: u32,  // columns of the window
  start: u32,   // first column of the window
}

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

fn linear_id(gid: vec3u, nwg: vec3u) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size(WG)
fn slice(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = linear_id(gid, nwg);
  if (i >= p.rows * p.narrow) { return; }
  let r = i / p.narrow;
  let j = i % p.narrow;
  out[i] = src[r * p.wide + p.start + j];
}

@compute @workgroup_size(WG)
fn pad(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = linear_id(gid, nwg);
  if (i >= p.rows * p.wide) { return; }
  let r = i / p.wide;
  let c = i % p.wide;
  var v = 0.0;
  if (c >= p.start && c < p.start + p.narrow) {
    v = src[r * p.narrow + c - p.start];
  }
  out[i] = v;
}
