// Writes new keys or values into a KV cache in place: a scatter of rows along the time axis,
// with ROPE the keys rotated on the way (HF's default RoPE at the row's position, as rope.wgsl:
// one dispatch instead of a rope and a write). Nothing is read from the cache and nothing but the
// addressed rows is written.
// Bindings: x [S, Tn, W] (read), positions [S, Tn] (i32, read), inv_freq [D/2] (read, f32; with
// ROPE only, else any buffer), cache [S, Tmax, W] (read_write), params; W = kv_heads * D.
// cache[s, positions[s, t], :] = x[s, t, :] (rotated with ROPE) for every (s, t) with
// 0 <= positions[s, t] < Tmax; other positions (negative: padding) are skipped. Two tokens of one
// slot at the same position race: which one lands is unspecified.
// main: one invocation per element of x, or with ROPE per rotated pair (i, i + D/2) of one head;
// main4 (W a multiple of 4; with ROPE, D/2 a multiple of 4): the same four elements, or four
// neighbouring pairs, at a time (x, inv_freq and the cache bound as vec4 arrays: on CPU adapters
// a load or store costs per access, not per element).
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
// The same buffers as vec4s, for main4 (never used by the same entry point as the above).
@group(0) @binding(0) var<storage, read> x4: array<vec4f>;
@group(0) @binding(2) var<storage, read> inv_freq4: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> cache4: array<vec4f>;

// Whether position `pos` is a row of the cache (negative: padding).
fn in_cache(pos: i32) -> bool {
  return pos >= 0 && u32(pos) < p.tmax;
}

// The first element of the cache row at position `pos` of the slot of x's row `row`.
fn cache_start(row: u32, pos: i32) -> u32 {
  return ((row / p.tn) * p.tmax + u32(pos)) * p.width;
}

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
  if (!in_cache(pos)) { return; }
  let dst = cache_start(row, pos);
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

@compute @workgroup_size(WG)
fn main4(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  let per_row = select(p.width, p.width / 2u, ROPE) / 4u;
  if (i >= p.rows * per_row) { return; }
  let row = i / per_row;
  let pos = positions[row];
  if (!in_cache(pos)) { return; }
  let dst = cache_start(row, pos) / 4u;
  if (!ROPE) {
    cache4[dst + i % per_row] = x4[i];
    return;
  }
  let pair = 4u * (i % per_row);
  let j = pair % p.half;
  let lo = ((pair / p.half) * 2u * p.half + j) / 4u; // within the row, in quads
  let hi = lo + p.half / 4u;
  let r = rotate_pairs4(
    x4[row * p.width / 4u + lo],
    x4[row * p.width / 4u + hi],
    rotations4(pos, inv_freq4[j / 4u]),
  );
  cache4[dst + lo] = r[0];
  cache4[dst + hi] = r[1];
}
