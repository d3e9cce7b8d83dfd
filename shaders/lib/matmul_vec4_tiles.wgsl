// The operand bindings and staged tiles of the vec4 workgroup-tile matmuls (matmul_tiled_vec4.wgsl,
// matmul_tiled_8x8.wgsl): k-major vec4 rows of A and B in workgroup memory, loaded four elements at
// a time with zeros past the edges, and the guarded stores of C. The including shader declares the
// overrides BM, BN, BK, TRANS_A, TRANS_B and ACCUMULATE and includes matmul_params.

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

// tile_a[kk * BM / 4 + i] = A[row0 + 4i .. +4, k0 + kk]; tile_b[kk * BN / 4 + j] = B[k0 + kk,
// col0 + 4j .. +4].
var<workgroup> tile_a: array<vec4f, BM * BK / 4u>;
var<workgroup> tile_b: array<vec4f, BK * BN / 4u>;

// The vec4 of a stored [rows, cols] matrix (cols a multiple of 4) at element `base` + row r and
// columns c .. c+3, or zeros when r or c is outside.
fn quad(src: u32, base: u32, r: u32, c4: u32, rows: u32, cols: u32) -> vec4f {
  if (r >= rows || c4 >= cols) { return vec4f(0.0); }
  let i = (base + r * cols + c4) / 4u;
  if (src == 0u) { return a[i]; }
  return b[i];
}

// Stages quad q (of BM * BK / 4) of the A tile at k0.
fn stage_a(q: u32, base: u32, row0: u32, k0: u32) {
  if (TRANS_A) {
    // Stored [K, M]: the quad runs along M, a whole vec4 of the tile.
    let kk = q / (BM / 4u);
    let i = q % (BM / 4u);
    tile_a[q] = quad(0u, base, k0 + kk, row0 + 4u * i, p.k, p.m);
    return;
  }
  // Stored [M, K]: the quad runs along K, one component of four tile vec4s.
  let r = q / (BK / 4u);
  let kk = 4u * (q % (BK / 4u));
  let v = quad(0u, base, row0 + r, k0 + kk, p.m, p.k);
  for (var j = 0u; j < 4u; j++) { tile_a[(kk + j) * (BM / 4u) + r / 4u][r % 4u] = v[j]; }
}

// Stages quad q (of BK * BN / 4) of the B tile at k0.
fn stage_b(q: u32, base: u32, col0: u32, k0: u32) {
  if (TRANS_B) {
    // Stored [N, K]: the quad runs along K, one component of four tile vec4s.
    let col = q / (BK / 4u);
    let kk = 4u * (q % (BK / 4u));
    let v = quad(1u, base, col0 + col, k0 + kk, p.n, p.k);
    for (var j = 0u; j < 4u; j++) { tile_b[(kk + j) * (BN / 4u) + col / 4u][col % 4u] = v[j]; }
    return;
  }
  // Stored [K, N]: the quad runs along N, a whole vec4 of the tile.
  let kk = q / (BN / 4u);
  let j = q % (BN / 4u);
  tile_b[q] = quad(1u, base, k0 + kk, col0 + 4u * j, p.k, p.n);
}

// Stages both tiles at k0, invocation `li` of `threads` taking every threads-th quad.
fn stage_tiles(li: u32, threads: u32, a_base: u32, b_base: u32, row0: u32, col0: u32, k0: u32) {
  for (var q = li; q < BM * BK / 4u; q += threads) { stage_a(q, a_base, row0, k0); }
  for (var q = li; q < BK * BN / 4u; q += threads) { stage_b(q, b_base, col0, k0); }
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
