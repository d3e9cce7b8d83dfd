// Writes new keys or values into a KV cache in place: a scatter of rows along the time axis.
// Nothing is read from the cache and nothing but the addressed rows is written.
// Bindings: x [S, Tn, W] (read), positions [S, Tn] (i32, read), cache [S, Tmax, W] (read_write),
// params; W = kv_heads * head_dim.
// cache[s, positions[s, t], :] = x[s, t, :] for every (s, t) with 0 <= positions[s, t] < Tmax;
// other positions (negative: padding) are skipped. Two tokens of one slot at the same position
// race: which one lands is unspecified.
// One invocation per element of x, index = (wid.x + wid.y * nwg.x) * WG + lid.

override WG: u32 = 256u;

struct Params {
  rows: u32,    // S * Tn
  tn: u32,      // new tokens per slot
  tmax: u32,    // cache length
  width: u32,   // W
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> positions: array<i32>;
@group(0) @binding(2) var<storage, read_write> cache: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= p.rows * p.width) { return; }
  let row = i / p.width;
  let pos = positions[row];
  if (pos < 0 || u32(pos) >= p.tmax) { return; }
  let slot = row / p.tn;
  cache[(slot * p.tmax + u32(pos)) * p.width + i % p.width] = x[i];
}
