// Packs the B operand of a matmul (a weight) into the texture layout the packed-B matmul kernels
// read (matmul_texture.wgsl with PACKED_B, matmul_texture_gemv.wgsl): output columns in strips of
// 32 (the 8 invocations of a workgroup, 4 columns each), four strips to a block of 128, and within
// a block, for every four values of K, the 128 columns' texels side by side, so that the 8
// invocations' loads of one strip at one step are 8 consecutive texels and a workgroup taking a
// block's 4 strips streams through its texels in order:
//
//   column n = 128 b + 32 v + 4 l + c (block b, strip v of it, invocation l, its column c)
//   kq = k / 4, K4 = ceil(K / 4)
//   texel (b * K4 + kq) * 128 + 32 v + 8 c + l = op(B)[4 kq .. 4 kq + 3, n]
//   texel t sits at (t % TEX_W, t / TEX_W)
//
// A reader's workgroup takes 1 to 4 strips (its COL_QUADS), so it can cover 32, 64, 96 or 128
// columns: N = 576 splits into 6 workgroups of 96 columns, which two CPU threads share evenly (5
// of 128 take three rounds). Values past K are zeros; columns past N are left as they are (never
// stored by the readers). On CPU adapters a texel load is far cheaper when the lanes of a load
// read neighbouring memory: in the linear layout each invocation reads its own columns' rows, K
// values apart.
//
// Bindings: b (read) B [K, N], or B^T [N, K] with TRANS_B, from column first_block * 128 on;
//           32-bit words: f32 values, or with B_FORMAT two half-precision values each (element
//           2i in the low half of word i; a half B is packed per run, never kept)
//           (with TRANS_B the binding may start there: a weight larger than one storage binding
//           is packed in several launches of whole blocks)
//           out (storage texture) the packed texture, TEX_W texels wide
//           p (uniform) Params
// Grid: x = 2 * K4 (64 invocations per workgroup, 128 texels per kq), y = blocks of this launch.

override TEX_W: u32 = 8192u;
override TRANS_B: bool = true;
// How b's words hold values: 0 f32, 1 two bfloat16, 2 two IEEE binary16.
// #include half_weights
override B_FORMAT: u32 = 0u;

struct Params {
  n: u32,
  k: u32,
  first_block: u32,
}

@group(0) @binding(0) var<storage, read> b: array<u32>;
@group(0) @binding(1) var out: texture_storage_2d<rgba32float, write>;
@group(0) @binding(2) var<uniform> p: Params;

// Element i of b as f32.
fn element(i: u32) -> f32 {
  if (B_FORMAT == 0u) { return bitcast<f32>(b[i]); }
  return half_at(B_FORMAT, b[i / 2u], i);
}

// op(B)[k, n] for a column n of this launch, zero past K.
fn value(k: u32, n: u32) -> f32 {
  if (k >= p.k) { return 0.0; }
  if (TRANS_B) { return element((n - p.first_block * 128u) * p.k + k); }
  return element(k * p.n + n);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(workgroup_id) wid: vec3u) {
  let k4 = (p.k + 3u) / 4u;
  let kq = gid.x / 128u;
  let slot = gid.x % 128u; // 32 v + 8 c + l
  let block = p.first_block + wid.y;
  let n = block * 128u + 32u * (slot / 32u) + 4u * (slot % 8u) + (slot % 32u) / 8u;
  if (kq >= k4 || n >= p.n) { return; }
  let k = 4u * kq;
  let texel = vec4f(value(k, n), value(k + 1u, n), value(k + 2u, n), value(k + 3u, n));
  let t = (block * k4 + kq) * 128u + slot;
  textureStore(out, vec2u(t % TEX_W, t / TEX_W), texel);
}
