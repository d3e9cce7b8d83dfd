// The 8 x 8 workgroup-tile matmuls (matmul_tiled_8x8.wgsl: f32 operands;
// matmul_tiled_8x8_half.wgsl: B of halves) but for their operands: the entry point and the register block's loop over K. See
// matmul_tiled_8x8.wgsl for the algorithm. The including shader includes matmul_tile_overrides
// first, then this library, matmul_params, matmul_vec4_tiles and register_blocks, and binds A and
// B with their `operand_quad`.

@compute @workgroup_size(BN / 8u, BM / 8u)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) li: u32,
) {
  tiled_8x8(wid, lid, li);
}

// Stores block q as C[row .. row+3, col .. col+3] of the batch at c_base.
fn store_block(c_base: u32, row: u32, col: u32, q: array<vec4f, 4>) {
  store_quad(c_base, row, col, q[0]);
  store_quad(c_base, row + 1u, col, q[1]);
  store_quad(c_base, row + 2u, col, q[2]);
  store_quad(c_base, row + 3u, col, q[3]);
}

// The product of the workgroup's tile.
fn tiled_8x8(wid: vec3u, lid: vec3u, li: u32) {
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
