// The staged tiles of the vec4 workgroup-tile matmuls (matmul_tiled_vec4.wgsl,
// matmul_tiled_8x8.wgsl, matmul_tiled_8x8_half.wgsl): k-major vec4 rows of A and B in workgroup memory, loaded four elements
// at a time with zeros past the edges, and the guarded stores of C. The including shader declares
// the overrides BM, BN, BK, TRANS_A, TRANS_B and ACCUMULATE, includes matmul_params, binds A and B
// at 0 and 1 and defines `operand_quad(src, i) -> vec4f`: elements i .. i+3 (i a multiple of 4) of
// A (src 0) or B (src 1) as stored (lib/matmul_f32_operands.wgsl for f32 operands).

@group(0) @binding(2) var<storage, read_write> c: array<f32>;

// tile_a[kk * BM / 4 + i] = A[row0 + 4i .. +4, k0 + kk]; tile_b[kk * BN / 4 + j] = B[k0 + kk,
// col0 + 4j .. +4].
var<workgroup> tile_a: array<vec4f, BM * BK / 4u>;
var<workgroup> tile_b: array<vec4f, BK * BN / 4u>;

// The vec4 of a stored [rows, cols] matrix (cols a multiple of 4) at element `base` + row r and
// columns c .. c+3, or zeros when r or c is outside.
fn quad(src: u32, base: u32, r: u32, c4: u32, rows: u32, cols: u32) -> vec4f {
  if (r >= rows || c4 >= cols) { return vec4f(0.0); }
  return operand_quad(src, base + r * cols + c4);
}

// The 4 x 4 block of a stored [rows, cols] matrix at element `base` + rows r .. r+3 and columns
// c .. c+3 (zeros outside), transposed: block[j] = the four rows' elements of column c + j. The
// stagers write these whole vec4s; storing single components of workgroup vec4s instead (one per
// row) made the NN and NT products ~20x slower per k on an H100 than the TN product.
fn quad_block_t(src: u32, base: u32, r: u32, c4: u32, rows: u32, cols: u32) -> array<vec4f, 4> {
  let q0 = quad(src, base, r, c4, rows, cols);
  let q1 = quad(src, base, r + 1u, c4, rows, cols);
  let q2 = quad(src, base, r + 2u, c4, rows, cols);
  let q3 = quad(src, base, r + 3u, c4, rows, cols);
  return array<vec4f, 4>(
    vec4f(q0.x, q1.x, q2.x, q3.x),
    vec4f(q0.y, q1.y, q2.y, q3.y),
    vec4f(q0.z, q1.z, q2.z, q3.z),
    vec4f(q0.w, q1.w, q2.w, q3.w),
  );
}

// The number of staging steps of the A tile: vec4s along M with TRANS_A, else 4 x 4 blocks.
fn a_steps() -> u32 {
  if (TRANS_A) { return BM * BK / 4u; }
  return BM * BK / 16u;
}

// The number of staging steps of the B tile: vec4s along N, else (TRANS_B) 4 x 4 blocks.
fn b_steps() -> u32 {
  if (TRANS_B) { return BK * BN / 16u; }
  return BK * BN / 4u;
}

// Stages step q (of a_steps()) of the A tile at k0.
fn stage_a(q: u32, base: u32, row0: u32, k0: u32) {
  if (TRANS_A) {
    // Stored [K, M]: the quad runs along M, a whole vec4 of the tile.
    let kk = q / (BM / 4u);
    let i = q % (BM / 4u);
    tile_a[q] = quad(0u, base, k0 + kk, row0 + 4u * i, p.k, p.m);
    return;
  }
  // Stored [M, K]: a block of rows 4 i .. 4 i + 3 and K kk .. kk + 3, four tile vec4s.
  let i = q / (BK / 4u);
  let kk = 4u * (q % (BK / 4u));
  let t = quad_block_t(0u, base, row0 + 4u * i, k0 + kk, p.m, p.k);
  tile_a[kk * (BM / 4u) + i] = t[0];
  tile_a[(kk + 1u) * (BM / 4u) + i] = t[1];
  tile_a[(kk + 2u) * (BM / 4u) + i] = t[2];
  tile_a[(kk + 3u) * (BM / 4u) + i] = t[3];
}

// Stages step q (of b_steps()) of the B tile at k0.
fn stage_b(q: u32, base: u32, col0: u32, k0: u32) {
  if (TRANS_B) {
    // Stored [N, K]: a block of columns 4 j .. 4 j + 3 and K kk .. kk + 3, four tile vec4s.
    let j = q / (BK / 4u);
    let kk = 4u * (q % (BK / 4u));
    let t = quad_block_t(1u, base, col0 + 4u * j, k0 + kk, p.n, p.k);
    tile_b[kk * (BN / 4u) + j] = t[0];
    tile_b[(kk + 1u) * (BN / 4u) + j] = t[1];
    tile_b[(kk + 2u) * (BN / 4u) + j] = t[2];
    tile_b[(kk + 3u) * (BN / 4u) + j] = t[3];
    return;
  }
  // Stored [K, N]: the quad runs along N, a whole vec4 of the tile.
  let kk = q / (BN / 4u);
  let j = q % (BN / 4u);
  tile_b[q] = quad(1u, base, k0 + kk, col0 + 4u * j, p.k, p.n);
}

// Stages both tiles at k0, invocation `li` of `threads` taking every threads-th step.
fn stage_tiles(li: u32, threads: u32, a_base: u32, b_base: u32, row0: u32, col0: u32, k0: u32) {
  for (var q = li; q < a_steps(); q += threads) { stage_a(q, a_base, row0, k0); }
  for (var q = li; q < b_steps(); q += threads) { stage_b(q, b_base, col0, k0); }
}

// Stores v as C[row, col .. col+3] of the batch at c_base (adding what C holds with ACCUMULATE),
// skipping what lies past M or N. The including shader declares ACCUMULATE and the binding c.
fn store_quad(c_base: u32, row: u32, col: u32, v: vec4f) {
  if (row >= p.m) { return; }
  for (var j = 0u; j < 4u; j++) {
    if (col + j < p.n) {
      let at = c_base + row * p.n + col + j;
      var value = v[j];
      if (ACCUMULATE) { value += c[at]; }
      c[at] = value;
    }
  }
}
