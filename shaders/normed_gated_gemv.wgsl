// The input of a Llama MLP's down product at one token row, in one pass, for CPU adapters:
//   out = f(x @ Wg^T) * (x @ Wu^T),  x = HF's RMSNorm of h with weight gamma (+ WEIGHT_OFFSET,
//   Gemma's 1 + gamma),
// i.e. the norm, the gate and up products and the gated activation (SwiGLU with f = silu): one
// launch where a batch-1 decode step had four. The norm's scale 1/rms(h) is a per-row factor, so
// each invocation multiplies (h * gamma) into the weights and scales its sums at the end, by the
// squares of h it summed along the way. Weights come from the textures pack_weight.wgsl fills (as
// matmul_texture_gemv.wgsl reads them): a workgroup takes 4 strips (a block of 128 columns) of
// both weights, its 8 invocations one column quad of each strip, so that per four values of k an
// invocation loads 32 texels, and a workgroup reads whole rows of a block of each weight (with 2
// strips, two workgroups shared each row and the pass ran ~1.3x slower on llvmpipe).
//
// Bindings: h (read) [M, K] as vec4s (K a multiple of 4)
//           gamma (read) [K] as vec4s
//           tb (texture) Wg [N, K] packed; tu (texture) Wu [N, K] packed
//           out (write) [M, N] as vec4s (N a multiple of 4)
//           p (uniform) Params
// Grid: x = ceil(ceil(N / 32) / 4), y = M.

override TEX_W: u32 = 8192u; // texels per texture row, a power of two
override OP: u32 = 6u; // the gate's activation f (lib/activation.wgsl codes; 6 silu)
override WEIGHT_OFFSET: f32 = 0.0; // added to gamma (Gemma's RMSNorm: 1)

// #include activation
// #include packed_b

struct Params {
  m: u32,
  n: u32,
  k: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> h: array<vec4f>;
@group(0) @binding(1) var<storage, read> gamma: array<vec4f>;
@group(0) @binding(2) var tb: texture_storage_2d<rgba32float, read>;
@group(0) @binding(3) var tu: texture_storage_2d<rgba32float, read>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(5) var<uniform> p: Params;

// Packed Wu at four values of k and four columns from texel i (packed_columns of tu).
fn up_columns(i: u32) -> mat4x4f {
  return transpose(mat4x4f(
    textureLoad(tu, texel_at(i)),
    textureLoad(tu, texel_at(i + 8u)),
    textureLoad(tu, texel_at(i + 16u)),
    textureLoad(tu, texel_at(i + 24u)),
  ));
}

// f(gate) * up for four columns, both sums scaled by the norm's factor.
fn gated4(gate: vec4f, up: vec4f, scale: f32) -> vec4f {
  let g = gate * scale;
  return vec4f(
    activation(g.x, 1.0, 0.0),
    activation(g.y, 1.0, 0.0),
    activation(g.z, 1.0, 0.0),
    activation(g.w, 1.0, 0.0),
  ) * (up * scale);
}

// Strips of 32 columns per workgroup, of each weight.
const STRIPS: u32 = 4u;

@compute @workgroup_size(8)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let k4 = p.k / 4u;
  let row = wid.y;
  let strip0 = wid.x * STRIPS;
  let lane = lid.x;
  let h0 = row * k4;
  // gate[v], up[v]: the sums of this invocation's column quad in strip strip0 + v.
  var gate: array<vec4f, STRIPS>;
  var up: array<vec4f, STRIPS>;
  var squares = 0.0;
  for (var kq = 0u; kq < k4; kq++) {
    let hv = h[h0 + kq];
    squares += dot(hv, hv);
    let x = hv * (gamma[kq] + WEIGHT_OFFSET);
    for (var v = 0u; v < STRIPS; v++) {
      let t = packed_strip_texel(strip0 + v, kq, k4, lane);
      gate[v] += packed_columns(t) * x;
      up[v] += up_columns(t) * x;
    }
  }
  let scale = inverseSqrt(squares / f32(p.k) + p.eps);
  for (var v = 0u; v < STRIPS; v++) {
    let col = 32u * (strip0 + v) + 4u * lane;
    if (col < p.n) { out[(row * p.n + col) / 4u] = gated4(gate[v], up[v], scale); }
  }
}
