// Workgroup-memory tiled matmul with 8 x 8 outputs per invocation, for GPUs: C[b] = op(A[b]) @
// op(B[b]) where op transposes when TRANS_A / TRANS_B. The tiles are staged as in
// matmul_tiled_vec4.wgsl (lib/matmul_vec4_tiles.wgsl: k-major vec4 rows, zeros past the edges,
// the contiguous dimension of each stored operand a multiple of 4), but each invocation keeps
// two row quads x two column quads of C in registers, half a tile apart (rows 4 ty + i and
// BM / 2 + 4 ty + i, columns likewise), so every k reads 4 vec4s of workgroup memory for 64
// multiply-adds (the 4 x 4 kernel: 2 for 16). The register block is written out with literal
// indices so that a GPU compiler keeps it in registers.
//
// Bindings: a (read)  A [batch][M, K], or [batch][K, M] with TRANS_A, as vec4s; batch stride
//                     p.stride_a (elements)
//           b (read)  B [batch][K, N], or [batch][N, K] with TRANS_B, as vec4s; batch stride
//                     p.stride_b (elements; 0: one B shared by every batch)
//           c (write) C [batch][M, N], batch stride p.stride_c
//           p (uniform) Params
// Grid: x = ceil(N / BN), y = ceil(M / BM), z = batch. Workgroup: (BN / 8, BM / 8).
// #include matmul_tile_overrides
// #include matmul_8x8_core
// #include matmul_params
// #include matmul_vec4_tiles
// #include register_blocks
// #include matmul_f32_operands
