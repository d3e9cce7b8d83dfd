// The step between the q, k, v products and cached attention, in one dispatch instead of three:
// the queries rotated by RoPE (as rope.wgsl), the keys rotated the same way and written into
// their cache, the values written into theirs (as kv_cache.wgsl with and without ROPE). One
// invocation per token and four frequencies 4i .. 4i+3 (D/2 a multiple of 4): it takes one cos
// and sin per (token, frequency) and applies them to the quads at 4i and 4i + D/2 of every query
// head and kv head, and copies the value quads at the same places. A token at a position outside
// the cache (negative: padding) gets its queries rotated and writes nothing; two tokens of one
// slot at the same position race, as in kv_cache.wgsl.
// Bindings (all vec4 arrays but positions): q [S, Tn, H, D], k and v [S, Tn, Hkv, D] (or q, k and
// v all one buffer [S, Tn, (H + 2 Hkv) D], each token's q, k and v side by side: the rows and
// offsets in params say which), positions [S, Tn] (i32), inv_freq [D/2] (read); q_out [S, Tn, H,
// D] (write), k_cache and v_cache [S, Tmax, Hkv, D] (read_write); params.
// index j = token * D/8 + i = (wid.x + wid.y * nwg.x) * WG + lid.
// #include rotary

override WG: u32 = 64u;

struct Params {
  tokens: u32,   // S * Tn
  tn: u32,       // new tokens per slot
  tmax: u32,     // cache length
  heads: u32,
  kv_heads: u32,
  quads: u32,    // D / 8: frequency quads per head
  q_row: u32,    // vec4s from one token's queries to the next's
  kv_row: u32,   // vec4s from one token's keys (values) to the next's
  k_at: u32,     // vec4 of a token's first key in k
  v_at: u32,     // vec4 of a token's first value in v
}

@group(0) @binding(0) var<storage, read> q: array<vec4f>;
@group(0) @binding(1) var<storage, read> k: array<vec4f>;
@group(0) @binding(2) var<storage, read> v: array<vec4f>;
@group(0) @binding(3) var<storage, read> positions: array<i32>;
@group(0) @binding(4) var<storage, read> inv_freq: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> q_out: array<vec4f>;
@group(0) @binding(6) var<storage, read_write> k_cache: array<vec4f>;
@group(0) @binding(7) var<storage, read_write> v_cache: array<vec4f>;
@group(0) @binding(8) var<uniform> p: Params;

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let j = (wid.x + wid.y * nwg.x) * WG + lid;
  if (j >= p.tokens * p.quads) { return; }
  let i = j % p.quads;
  let token = j / p.quads;
  let pos = positions[token];
  let cs = rotations4(pos, inv_freq[i]);
  let head_quads = 2u * p.quads;
  for (var h = 0u; h < p.heads; h++) {
    let src = token * p.q_row + h * head_quads + i;
    let lo = (token * p.heads + h) * head_quads + i;
    let r = rotate_pairs4(q[src], q[src + p.quads], cs);
    q_out[lo] = r[0];
    q_out[lo + p.quads] = r[1];
  }
  if (pos < 0 || u32(pos) >= p.tmax) { return; }
  let cache_row = ((token / p.tn) * p.tmax + u32(pos)) * p.kv_heads;
  for (var h = 0u; h < p.kv_heads; h++) {
    let src = token * p.kv_row + h * head_quads + i;
    let dst = (cache_row + h) * head_quads + i;
    let r = rotate_pairs4(k[p.k_at + src], k[p.k_at + src + p.quads], cs);
    k_cache[dst] = r[0];
    k_cache[dst + p.quads] = r[1];
    v_cache[dst] = v[p.v_at + src];
    v_cache[dst + p.quads] = v[p.v_at + src + p.quads];
  }
}
