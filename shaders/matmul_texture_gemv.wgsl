// Matmul of a few rows of A by a packed weight, for decode on CPU adapters: C[b] = A[b] @ op(B)
// (C[b] += ... with ACCUMULATE), A read from its buffer (K a multiple of 4, not transposed: one
// vec4 load per four values of k, against 16 texel loads of B, so a texture copy of A before
// every launch would cost more than it saves) and B, one matrix shared by the batch, from the
// texture pack_weight.wgsl fills: the 8 invocations of a workgroup load neighbouring texels at
// every step. A workgroup takes 4 strips of 32 columns; each invocation computes ROWS rows by one
// column quad of each strip (16 columns), four k at a time, with nothing else in its loop: at one
// row (a batch-1 decode) each weight value is read once and used once, and llvmpipe's texel loads
// are the whole cost, so the block is kept as small as that allows (matmul_texture.wgsl's 4-row
// blocks load and multiply three rows for nothing there). (Fewer strips per workgroup, as the
// texture variants take, measured no faster here: a batch-1 product is ~60-170 us, half of it
// the dispatch.)
//
// Bindings: a (read) A [batch][M, K] as vec4s; batch stride p.stride_a
//           tb (texture) op(B) packed (pack_weight.wgsl); p.stride_b unused
//           c (write) C [batch][M, N] as vec4s (scalar stores unless VEC4_C), stride p.stride_c
//           p (uniform) Params
// Grid: x = ceil(ceil(N / 32) / 4), y = ceil(M / ROWS), z = batch.

override TEX_W: u32 = 8192u; // texels per texture row, a power of two
override ROWS: u32 = 1u; // 1..4 rows of A per invocation
override VEC4_C: bool = false; // N % 4 == 0: C rows are whole vec4s, stored as such
override ACCUMULATE: bool = false;

// #include matmul_params
// #include packed_b
@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var tb: texture_storage_2d<rgba32float, read>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;

// acc[4r + v] = C[row0 + r, the four columns of quad v] (see column_of).
var<private> acc: array<vec4f, 16>;
// This invocation's first strip, and its lane.
var<private> strip0: u32;
var<private> lane: u32;

// The first of the four columns of this invocation's quad v: in strip strip0 + v.
fn column_of(v: u32) -> u32 {
  return 32u * (strip0 + v) + 4u * lane;
}

// acc of row r += (A at row row0+r and the current four values of k) @ the column quads.
fn multiply_row(r: u32, ar: vec4f, b0: mat4x4f, b1: mat4x4f, b2: mat4x4f, b3: mat4x4f) {
  acc[4u * r] += b0 * ar;
  acc[4u * r + 1u] += b1 * ar;
  acc[4u * r + 2u] += b2 * ar;
  acc[4u * r + 3u] += b3 * ar;
}

// Quad v's texels at the four values of k from 4 kq.
fn quad_b(v: u32, kq: u32, k4: u32) -> mat4x4f {
  return packed_columns(packed_strip_texel(strip0 + v, kq, k4, lane));
}

// #include matmul_vec4_store

// Quad v of row r of the block, when its columns start below N.
fn store_quad(c_base: u32, row: u32, r: u32, v: u32) {
  let col = column_of(v);
  if (col < p.n) { store_row(c_base + row * p.n + col, col, acc[4u * r + v]); }
}

// Row r of the block (when below M) at the columns below N.
fn store_block_row(c_base: u32, row0: u32, r: u32) {
  let row = row0 + r;
  if (row >= p.m) { return; }
  store_quad(c_base, row, r, 0u);
  store_quad(c_base, row, r, 1u);
  store_quad(c_base, row, r, 2u);
  store_quad(c_base, row, r, 3u);
}

@compute @workgroup_size(8)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let k4 = p.k / 4u;
  let row0 = wid.y * ROWS;
  // A's vec4 at row row0 and k 0; rows past M read row M-1 (they are not stored).
  let a_first = (wid.z * p.stride_a) / 4u;
  let a0 = a_first + min(row0, p.m - 1u) * k4;
  let a1 = a_first + min(row0 + 1u, p.m - 1u) * k4;
  let a2 = a_first + min(row0 + 2u, p.m - 1u) * k4;
  let a3 = a_first + min(row0 + 3u, p.m - 1u) * k4;
  strip0 = wid.x * 4u;
  lane = lid.x;
  for (var kq = 0u; kq < k4; kq++) {
    let b0 = quad_b(0u, kq, k4);
    let b1 = quad_b(1u, kq, k4);
    let b2 = quad_b(2u, kq, k4);
    let b3 = quad_b(3u, kq, k4);
    multiply_row(0u, a[a0 + kq], b0, b1, b2, b3);
    if (ROWS > 1u) { multiply_row(1u, a[a1 + kq], b0, b1, b2, b3); }
    if (ROWS > 2u) { multiply_row(2u, a[a2 + kq], b0, b1, b2, b3); }
    if (ROWS > 3u) { multiply_row(3u, a[a3 + kq], b0, b1, b2, b3); }
  }
  let c_base = wid.z * p.stride_c;
  store_block_row(c_base, row0, 0u);
  if (ROWS > 1u) { store_block_row(c_base, row0, 1u); }
  if (ROWS > 2u) { store_block_row(c_base, row0, 2u); }
  if (ROWS > 3u) { store_block_row(c_base, row0, 3u); }
}
