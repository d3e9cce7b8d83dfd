// Workgroup-memory tiled matmul with vec4 loads, for GPUs: C[b] = op(A[b]) @ op(B[b]) where op
// transposes when TRANS_A / TRANS_B. Like matmul_tiled.wgsl, a workgroup computes a BM x BN tile
// of C and each invocation a 4x4 block of it, but every global load brings four elements (one
// vec4) and the staged tiles are k-major vec4 rows, so the inner loop reads one vec4 of A and one
// of B per k. The contiguous dimension of each stored operand (K of A, M of A^T, N of B, K of
// B^T) must be a multiple of 4, which also makes every batch stride one; M, N and K are otherwise
// free: staged values past the edges are zeros and stores past M or N are skipped.
//
// Bindings: a (read)  A [batch][M, K], or [batch][K, M] with TRANS_A, as vec4s; batch stride
//                     p.stride_a (elements)
//           b (read)  B [batch][K, N], or [batch][N, K] with TRANS_B, as vec4s; batch stride
//                     p.stride_b (elements; 0: one B shared by every batch)
//           c (write) C [batch][M, N], batch stride p.stride_c
//           p (uniform) Params
// Grid: x = ceil(N / BN), y = ceil(M / BM), z = batch. Workgroup: (BN / 4, BM / 4).
// #include matmul_params
// #include matmul_vec4_tiles
// #include matmul_f32_operands

override BM: u32 = 64u; // multiple of 4
override BN: u32 = 64u; // multiple of 4
override BK: u32 = 16u; // multiple of 4
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false; // C += op(A) @ op(B): C holds a running sum

@compute @workgroup_size(BN / 4u, BM / 4u)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let threads = (BN / 4u) * (BM / 4u);
  let row0 = wid.y * BM;
  let col0 = wid.x * BN;
  let a_base = wid.z * p.stride_a;
  let b_base = wid.z * p.stride_b;
  // acc[i] = C[row0 + 4 lid.y + i, col0 + 4 lid.x .. +4].
  var acc = array<vec4f, 4>(vec4f(0.0), vec4f(0.0), vec4f(0.0), vec4f(0.0));
  for (var k0 = 0u; k0 < p.k; k0 += BK) {
    stage_tiles(li, threads, a_base, b_base, row0, col0, k0);
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      let av = tile_a[kk * (BM / 4u) + lid.y];
      let bv = tile_b[kk * (BN / 4u) + lid.x];
      acc[0] = fma(vec4f(av.x), bv, acc[0]);
      acc[1] = fma(vec4f(av.y), bv, acc[1]);
      acc[2] = fma(vec4f(av.z), bv, acc[2]);
      acc[3] = fma(vec4f(av.w), bv, acc[3]);
    }
    workgroupBarrier();
  }
  let c_base = wid.z * p.stride_c;
  for (var i = 0u; i < 4u; i++) { store_quad(c_base, row0 + 4u * lid.y + i, col0 + 4u * lid.x, acc[i]); }
}
