// In-place accumulation of a gradient into its accumulator: acc[i] += grad[i]. Used where
// autodiff sums two gradients of one tensor, and to sum the gradients of micro-batches before one
// optimizer update.
// Bindings: grad [n] (read), acc [n] (read_write), params. One invocation per element,
// index = (wid.x + wid.y * nwg.x) * WG + lid.

override WG: u32 = 256u;

struct Params {
  n: u32,
}

@group(0) @binding(0) var<storage, read> grad: array<f32>;
@group(0) @binding(1) var<storage, read_write> acc: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= p.n) { return; }
  acc[i] = acc[i] + grad[i];
}
