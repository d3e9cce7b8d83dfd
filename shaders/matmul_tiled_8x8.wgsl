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

// acc[4 (2 r + s) + i] = C[row0 + r BM / 2 + 4 lid.y + i, col0 + s BN / 2 + 4 lid.x .. +4].
var<private> acc: array<vec4f, 16>;

// acc[base + i] += a_quad[i] * b_quad for the 4 rows i of a row quad.
fn outer4(base: u32, av: vec4f, bv: vec4f) {
  acc[base] = fma(vec4f(av.x), bv, acc[base]);
  acc[base + 1u] = fma(vec4f(av.y), bv, acc[base + 1u]);
  acc[base + 2u] = fma(vec4f(av.z), bv, acc[base + 2u]);
  acc[base + 3u] = fma(vec4f(av.w), bv, acc[base + 3u]);
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
      outer4(0u, a0, b0);
      outer4(4u, a0, b1);
      outer4(8u, a1, b0);
      outer4(12u, a1, b1);
    }
    workgroupBarrier();
  }
  let c_base = wid.z * p.stride_c;
  for (var i = 0u; i < 4u; i++) {
    let row = row0 + 4u * lid.y + i;
    let col = col0 + 4u * lid.x;
    store_quad(c_base, row, col, acc[i]);
    store_quad(c_base, row, col + BN / 2u, acc[4u + i]);
    store_quad(c_base, row + BM / 2u, col, acc[8u + i]);
    store_quad(c_base, row + BM / 2u, col + BN / 2u, acc[12u + i]);
  }
}
