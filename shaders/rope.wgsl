// Rotary position embedding with HF's rotate-half convention (LlamaRotaryEmbedding followed by
// apply_rotary_pos_emb) of x viewed as [tokens, heads, D], and its inverse rotation (the
// gradient with respect to x). One thread per token and frequency i < D/2, rotating the pair
// (i, i + D/2) of every head by the one angle (a cos and sin per token and frequency, not per
// head):
//   angle = f32(pos[token]) * inv_freq[i]   (one rounded f32 product, as HF's f32 matmul)
//   out[i]       = x[i] * cos(angle) - x[i + D/2] * sin(angle)
//   out[i + D/2] = x[i + D/2] * cos(angle) + x[i] * sin(angle)
// INVERSE (override): rotate by -angle instead. Threads index j = token * D/2 + i = gid.x + gid.y
// * nwg.x * WG. main4 (D/2 a multiple of 4): one thread per token and four frequencies 4i .. 4i+3,
// j = token * D/8 + i, x, inv_freq and out bound as vec4 arrays (on CPU adapters a load or store
// costs per access, not per element).
// The angle must stay a rounded product, as in HF: WGSL lets a compiler fuse it into the first
// subtraction of reduce_angle (an fma), which would keep its exact value. llvmpipe does not (the
// tests pin the rounded angle at positions up to 4e5); other drivers are untested.
// Bindings: x [tokens, heads, D] (read), pos [tokens] (read, i32; u32 positions below 2^31
// read the same), inv_freq [D/2] (read, HF's f32 table from the host: `ropeInvFreq`),
// out [tokens, heads, D] (write), params (pairs = tokens * heads * D/2, half = D/2,
// token_pairs = heads * D/2).
// #include rotary

override INVERSE: bool = false;
override WG: u32 = 256u;

struct Params {
  pairs: u32,
  half: u32,
  token_pairs: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> pos: array<i32>;
@group(0) @binding(2) var<storage, read> inv_freq: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;
// The same buffers as vec4s, for main4 (never used by the same entry point as the above).
@group(0) @binding(0) var<storage, read> x4: array<vec4f>;
@group(0) @binding(2) var<storage, read> inv_freq4: array<vec4f>;
@group(0) @binding(3) var<storage, read_write> out4: array<vec4f>;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let j = gid.x + gid.y * nwg.x * WG;
  let heads = p.token_pairs / p.half;
  if (j >= p.pairs / heads) { return; }
  let i = j % p.half;
  let token = j / p.half;
  let cs = rotation(pos[token], inv_freq[i]);
  let csi = select(cs, vec2f(cs.x, -cs.y), INVERSE);
  for (var h = 0u; h < heads; h++) {
    let lo = (token * heads + h) * 2u * p.half + i;
    let hi = lo + p.half;
    let r = rotate_pair(x[lo], x[hi], csi);
    out[lo] = r.x;
    out[hi] = r.y;
  }
}

@compute @workgroup_size(WG)
fn main4(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let j = gid.x + gid.y * nwg.x * WG;
  let heads = p.token_pairs / p.half;
  let quads = p.half / 4u; // per head half
  if (j >= p.pairs / heads / 4u) { return; }
  let i = j % quads;
  let token = j / quads;
  var cs = rotations4(pos[token], inv_freq4[i]);
  if (INVERSE) { cs[1] = -cs[1]; }
  for (var h = 0u; h < heads; h++) {
    let lo = (token * heads + h) * 2u * quads + i;
    let hi = lo + quads;
    let r = rotate_pairs4(x4[lo], x4[hi], cs);
    out4[lo] = r[0];
    out4[hi] = r[1];
  }
}
