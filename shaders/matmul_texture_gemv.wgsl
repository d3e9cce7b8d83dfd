// Matmul of a few rows of A by a packed weight, for decode on CPU adapters: C[b] = A[b] @ op(B)
// (C[b] += ... with ACCUMULATE), A read from its buffer (K a multiple of 4, not transposed: one
// vec4 load per four values of k, against 16 texel loads of B, so a texture copy of A before
// every launch would cost more than it saves) and B, one matrix shared by the batch, from the
// texture pack_weight.wgsl fills: the 8 invocations of a workgroup load neighbouring texels at
// every step. Each invocation computes ROWS rows by 16 columns, four k at a time, with nothing
// else in its loop: at one row (a batch-1 decode) each weight value is read once and used once,
// and llvmpipe's texel loads are the whole cost, so the block is kept as small as that allows
// (matmul_texture.wgsl's 4-row blocks load and multiply three rows for nothing there).
//
// Bindings: a (read) A [batch][M, K] as vec4s; batch stride p.stride_a
//           tb (texture) op(B) packed (pack_weight.wgsl); p.stride_b unused
//           c (write) C [batch][M, N] as vec4s (scalar stores unless VEC4_C), stride p.stride_c
//           p (uniform) Params
// Grid: x = ceil(N / 128), y = ceil(M / ROWS), z = batch.

override TEX_W: u32 = 8192u; // texels per texture row, a power of two
override ROWS: u32 = 1u; // 1..4 rows of A per invocation
override VEC4_C: bool = false; // N % 4 == 0: C rows are whole vec4s, stored as such
override ACCUMULATE: bool = false;

// #include matmul_params
// #include packed_b
@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var tb: texture_storage_2d<rgba32float, read>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;

// acc[4r + v] = C[row0 + r, col0 + 4v .. +4].
var<private> acc: array<vec4f, 16>;

// acc of row r += (A at row row0+r and the current four values of k) @ the four column quads.
fn multiply_row(r: u32, ar: vec4f, b0: mat4x4f, b1: mat4x4f, b2: mat4x4f, b3: mat4x4f) {
  acc[4u * r] += b0 * ar;
  acc[4u * r + 1u] += b1 * ar;
  acc[4u * r + 2u] += b2 * ar;
  acc[4u * r + 3u] += b3 * ar;
}

// #include matmul_vec4_store

// Row r of the block (when below M) at the columns below N.
fn store_block_row(c_base: u32, row0: u32, col0: u32, r: u32) {
  let row = row0 + r;
  if (row >= p.m) { return; }
  let i = c_base + row * p.n + col0;
  if (col0 < p.n) { store_row(i, col0, acc[4u * r]); }
  if (col0 + 4u < p.n) { store_row(i + 4u, col0 + 4u, acc[4u * r + 1u]); }
  if (col0 + 8u < p.n) { store_row(i + 8u, col0 + 8u, acc[4u * r + 2u]); }
  if (col0 + 12u < p.n) { store_row(i + 12u, col0 + 12u, acc[4u * r + 3u]); }
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
  let b_first = wid.x * k4 * 128u + lid.x;
  for (var kq = 0u; kq < k4; kq++) {
    let t = b_first + kq * 128u;
    let b0 = packed_columns(t);
    let b1 = packed_columns(t + 32u);
    let b2 = packed_columns(t + 64u);
    let b3 = packed_columns(t + 96u);
    multiply_row(0u, a[a0 + kq], b0, b1, b2, b3);
    if (ROWS > 1u) { multiply_row(1u, a[a1 + kq], b0, b1, b2, b3); }
    if (ROWS > 2u) { multiply_row(2u, a[a2 + kq], b0, b1, b2, b3); }
    if (ROWS > 3u) { multiply_row(3u, a[a3 + kq], b0, b1, b2, b3); }
  }
  let c_base = wid.z * p.stride_c;
  let col0 = wid.x * 128u + lid.x * 16u;
  store_block_row(c_base, row0, col0, 0u);
  if (ROWS > 1u) { store_block_row(c_base, row0, col0, 1u); }
  if (ROWS > 2u) { store_block_row(c_base, row0, col0, 2u); }
  if (ROWS > 3u) { store_block_row(c_base, row0, col0, 3u); }
}
