// Writes new keys or values into a KV cache in place: a scatter of rows along the time axis,
// with ROPE the keys rotated on the way (HF's default RoPE at the row's position, as rope.wgsl:
// one dispatch instead of a rope and a write). Nothing is read from the cache and nothing but the
// addressed rows is written.
// Bindings: x [S, Tn, W] (read), positions [S, Tn] (i32, read), inv_freq [D/2] (read, f32; with
// ROPE only, else any buffer), cache [S, Tmax, W] (read_write), params; W = kv_heads * D.
// cache[s, positions[s, t], :] = x[s, t, :] (rotated with ROPE) for every (s, t) with
// 0 <= positions[s, t] < Tmax; other positions (negative: padding) are skipped. Two tokens of one
// slot at the same position race: which one lands is unspecified.
// One invocation per element of x, or with ROPE per rotated pair (i, i + D/2) of one head;
// index = (wid.x + wid.y * nwg.x) * WG + lid.
// #include rotary

override WG: u32 = 256u;
override ROPE: bool = false;

struct Params {
  rows: u32,    // S * Tn
  tn: u32,      // new tokens per slot
  tmax: u32,    // cache length
  width: u32,   // W
  half: u32,    // D / 2 (ROPE only)
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> positions: array<i32>;
@group(0) @binding(2) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(3) var<storage, read_write> cache: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  let per_row = select(p.width, p.width / 2u, ROPE);
  if (i >= p.rows * per_row) { return; }
  let row = i / per_row;
  let pos = positions[row];
  if (pos < 0 || u32(pos) >= p.tmax) { return; }
  let slot = row / p.tn;
  let dst = (slot * p.tmax + u32(pos)) * p.width;
  if (!ROPE) {
    cache[dst + i % p.width] = x[i];
    return;
  }
  let pair = i % per_row;
  let j = pair % p.half;
  let lo = (pair / p.half) * 2u * p.half + j; // within the row
  let r = rotate_pair(x[row * p.width + lo], x[row * p.width + lo + p.half], rotation(pos, inv_freq[j]));
  cache[dst + lo] = r.x;
  cache[dst + lo + p.half] = r.y;
}
