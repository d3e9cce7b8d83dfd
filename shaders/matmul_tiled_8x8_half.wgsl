// The 8 x 8 workgroup-tile matmul (lib/matmul_8x8_core.wgsl, as matmul_tiled_8x8.wgsl) with B a
// weight of halves: C[b] = op(A[b]) @ op(B[b]) where B's elements are bf16 or f16 (B_FORMAT)
// packed two per u32 (element 2i in the low half), widened to f32 as they are staged; all sums
// in f32. Same layouts and limits as matmul_tiled_8x8.wgsl (the contiguous dimension of each
// stored operand a multiple of 4). The matmul variants `tiled_8x8_*` with a half B.
//
// Bindings: a (read)  A [batch][M, K], or [batch][K, M] with TRANS_A, as vec4s
//           b (read)  B [batch][K, N], or [batch][N, K] with TRANS_B, as u32 pairs of halves;
//                     batch stride p.stride_b (elements; 0: one B shared by every batch)
//           c (write) C [batch][M, N]
//           p (uniform) Params
// Grid: x = ceil(N / BN), y = ceil(M / BM), z = batch. Workgroup: (BN / 8, BM / 8).
// #include matmul_tile_overrides
// #include matmul_8x8_core
// #include matmul_params
// #include matmul_vec4_tiles
// #include register_blocks
// #include half_weights

override B_FORMAT: u32 = 1u; // 1 bf16, 2 f16 (lib/half_weights.wgsl)

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec2u>;

// Elements i .. i+3 (i a multiple of 4) of A (src 0) or of B (src 1: two u32 words).
fn operand_quad(src: u32, i: u32) -> vec4f {
  if (src == 0u) { return a[i / 4u]; }
  let u = b[i / 4u];
  return vec4f(halves(B_FORMAT, u.x), halves(B_FORMAT, u.y));
}
