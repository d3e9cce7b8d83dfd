// Sums a broadcast gradient back to its operand's shape: the input is read as (outer, n, inner)
// and out[j] = sum over outer and inner of x[o, j, k]. One workgroup per output element; the
// workgroup strides over outer*inner and reduces in workgroup memory.
// Bindings: x (read), out (write), params.

override WG: u32 = 64u;

struct Params {
  outer: u32,
  n: u32,
  inner: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

// #include workgroup_reduce

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let j = wid.x + wid.y * nwg.x;
  let count = p.outer * p.inner;
  var acc = 0.0;
  if (j < p.n) {
    for (var t = lid; t < count; t += WG) {
      let o = t / p.inner;
      let k = t % p.inner;
      acc += x[(o * p.n + j) * p.inner + k];
    }
  }
  let total = workgroup_reduce(acc, lid, false);
  if (lid == 0u && j < p.n) { out[j] = total; }
}
