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
// #include matmul_params
// #include matmul_vec4_tiles

override BM: u32 = 128u; // multiple of 8
override BN: u32 = 128u; // multiple of 8
override BK: u32 = 8u; // multiple of 4
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false; // C += op(A) @ op(B): C holds a running sum

// The 4 x 4 block q of C plus the outer product of a row quad av and a column quad bv:
// q[i] + av[i] * bv. Blocks are passed and returned by value, every index literal, so that a GPU
// compiler keeps the 64 accumulators in registers (a private array indexed through a helper's
// parameter ran ~10x slower than the 4 x 4 kernel on an H100).
fn outer4(q: array<vec4f, 4>, av: vec4f, bv: vec4f) -> array<vec4f, 4> {
  return array<vec4f, 4>(
    fma(vec4f(av.x), bv, q[0]),
    fma(vec4f(av.y), bv, q[1]),
    fma(vec4f(av.z), bv, q[2]),
    fma(vec4f(av.w), bv, q[3]),
  );
}

// Stores block q as C[row .. row+3, col .. col+3] of the batch at c_base.
fn store_block(c_base: u32, row: u32, col: u32, q: array<vec4f, 4>) {
  store_quad(c_base, row, col, q[0]);
  store_quad(c_base, row + 1u, col, q[1]);
  store_quad(c_base, row + 2u, col, q[2]);
  store_quad(c_base, row + 3u, col, q[3]);
}

@compute @workgroup_size(BN / 8u, BM / 8u)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  let threads = (BN / 8u) * (BM / 8u);
  let row0 = wid.y * BM;
  let col0 = wid.x * BN;
  let a_base = wid.z * p.stride_a;
  let b_base = wid.z * p.stride_b;
  // q_rs = C[row0 + r BM / 2 + 4 lid.y .. +4, col0 + s BN / 2 + 4 lid.x .. +4].
  var q00 = array<vec4f, 4>();
  var q01 = array<vec4f, 4>();
  var q10 = array<vec4f, 4>();
  var q11 = array<vec4f, 4>();
  for (var k0 = 0u; k0 < p.k; k0 += BK) {
    stage_tiles(li, threads, a_base, b_base, row0, col0, k0);
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      let a_row = kk * (BM / 4u) + lid.y;
      let b_row = kk * (BN / 4u) + lid.x;
      let a0 = tile_a[a_row];
      let a1 = tile_a[a_row + BM / 8u];
      let b0 = tile_b[b_row];
      let b1 = tile_b[b_row + BN / 8u];
      q00 = outer4(q00, a0, b0);
      q01 = outer4(q01, a0, b1);
      q10 = outer4(q10, a1, b0);
      q11 = outer4(q11, a1, b1);
    }
    workgroupBarrier();
  }
  let c_base = wid.z * p.stride_c;
  let row = row0 + 4u * lid.y;
  let col = col0 + 4u * lid.x;
  store_block(c_base, row, col, q00);
  store_block(c_base, row, col + BN / 2u, q01);
  store_block(c_base, row + BM / 2u, col, q10);
  store_block(c_base, row + BM / 2u, col + BN / 2u, q11);
}
