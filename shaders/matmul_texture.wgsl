// Register-blocked matmul reading its operands from rgba32float storage textures (read-only:
// llvmpipe loads their texels ~1.6x as fast as a sampled texture's): C[b] = op(A[b]) @
// op(B[b]) where op transposes when TRANS_A / TRANS_B (C[b] += ... with ACCUMULATE: C holds a
// running sum, e.g. of micro-batches' weight gradients). Blocked like matmul_regblock.wgsl (a
// (4*ROW_GROUPS) x (4*COL_QUADS) block of C per invocation; fewer row groups waste less work on
// skinny M, e.g. decode), but a textureLoad costs a fraction of a storage-buffer load on CPU
// adapters (llvmpipe runs those a lane at a time). Columns go by strips of 32 as the packed
// layout (pack_weight.wgsl) has them: a workgroup of 8 invocations takes COL_QUADS strips, and
// invocation l columns 4l .. 4l+3 of each (fewer strips per workgroup split N into more
// workgroups: 576 columns into 6 of 96, which two CPU threads share evenly, not 5 of 128).
//
// The op copies each operand's buffer into a texture before the launch, as linear texels: element
// e is component e % 4 of texel e / 4, and texel t sits at (t % TEX_W, t / TEX_W). A load brings
// four elements that start at a multiple of 4, so the contiguous dimension of each stored operand
// (K of A, M of A^T, N of B, K of B^T) must be a multiple of 4. M and N are otherwise free: rows
// and columns past them are computed from whatever the texture holds there and never stored. K is
// free when neither operand is contiguous along it (A^T with B): values past K read as zeros.
// With PACKED_B (a weight shared by the batch) B comes packed by pack_weight.wgsl
// instead, its stored rows packed as output columns: with TRANS_B the layout
// matmul_texture_gemv.wgsl reads, so one texture per weight serves prefill, decode and the
// forward of training; without, B [K, N] read from that same texture, so the backward product
// by the same weight shares it too. (In this kernel, whose loop is bound by more than B's loads,
// the packed layout measured within +-25% of the linear one on llvmpipe, by shape.)
//
// Bindings: ta (texture) A [batch][M, K], or [batch][K, M] with TRANS_A; batch stride p.stride_a
//           tb (texture) B [batch][K, N], or [batch][N, K] with TRANS_B; batch stride p.stride_b;
//              or with PACKED_B op(B) packed (pack_weight.wgsl)
//           c (write) C [batch][M, N] as vec4s (scalar stores unless VEC4_C), stride p.stride_c
//           p (uniform) Params (a stride of 0 shares that operand across the batch)
// Grid: x = ceil(ceil(N / 32) / COL_QUADS), y = ceil(M / (4*ROW_GROUPS)), z = batch.

override TEX_W: u32 = 8192u; // texels per texture row, a power of two
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ROW_GROUPS: u32 = 8u; // 1..8 groups of 4 rows per invocation
override COL_QUADS: u32 = 4u; // 1..4 strips per workgroup, a column quad of each per invocation
override VEC4_C: bool = false; // N % 4 == 0: C rows are whole vec4s, stored as such
override ACCUMULATE: bool = false;
override PACKED_B: bool = false; // B is a weight packed by pack_weight.wgsl (shared by the batch)

// #include matmul_params
// #include packed_b
@group(0) @binding(0) var ta: texture_storage_2d<rgba32float, read>;
@group(0) @binding(1) var tb: texture_storage_2d<rgba32float, read>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4f>;

// acc[4r + v] = C[row0 + r, column_of(v) .. +4] (rows past 4*ROW_GROUPS, quads past COL_QUADS
// unused).
var<private> acc: array<vec4f, 128>;
// B at the current four values of k: column kk of bk[v] = B[k0 + kk, column_of(v) .. +4].
var<private> bk: array<mat4x4f, 4>;
var<private> a_base: u32;
var<private> b_base: u32;
var<private> row0: u32;
// This invocation's first strip, and its lane.
var<private> strip0: u32;
var<private> lane: u32;

// The first of the four columns of this invocation's quad v: in strip strip0 + v.
fn column_of(v: u32) -> u32 {
  return 32u * (strip0 + v) + 4u * lane;
}

// The operands, for quad(): A's texture or B's.
const SRC_A = 0u;
const SRC_B = 1u;

// Texel i of A's texture (texel_b's twin: GLSL takes no storage texture as a parameter).
fn texel_a(i: u32) -> vec4f {
  return textureLoad(ta, vec2u(i % TEX_W, i / TEX_W));
}

// Elements e .. e+3 (e a multiple of 4) of operand src (SRC_A or SRC_B).
fn quad(src: u32, e: u32) -> vec4f {
  if (src == SRC_A) { return texel_a(e / 4u); }
  return texel_b(e / 4u);
}


// A quad along M or N at the kk-th of the current k values, zeros when that k is not among the
// kv values inside K.
fn quad_at_k(src: u32, e: u32, kk: u32, kv: u32) -> vec4f {
  return select(vec4f(0.0), quad(src, e), kk < kv);
}

// A at rows row0+4g .. +4 and the current four values of k: column j holds row row0+4g+j.
fn load_a(g: u32, k0: u32, kv: u32) -> mat4x4f {
  let r = row0 + 4u * g;
  if (TRANS_A) {
    let e = a_base + k0 * p.m + r;
    let m = p.m;
    return transpose(mat4x4f(
      quad_at_k(SRC_A, e, 0u, kv),
      quad_at_k(SRC_A, e + m, 1u, kv),
      quad_at_k(SRC_A, e + 2u * m, 2u, kv),
      quad_at_k(SRC_A, e + 3u * m, 3u, kv),
    ));
  }
  let e = a_base + r * p.k + k0;
  let k = p.k;
  return mat4x4f(
    quad(SRC_A, e),
    quad(SRC_A, e + k),
    quad(SRC_A, e + 2u * k),
    quad(SRC_A, e + 3u * k),
  );
}

// B at the current four values of k and the columns of quad v, into bk[v].
fn load_b(v: u32, k0: u32, kv: u32) {
  let col = column_of(v);
  if (PACKED_B && !TRANS_B) {
    // B [K, N] packed by its rows (as B^T of the NT product with this weight): B[k, col..+3] is
    // one texel of row k's block.
    let n4 = (p.n + 3u) / 4u;
    bk[v] = mat4x4f(
      select(vec4f(0.0), texel_b(packed_row_texel(k0, col, n4)), 0u < kv),
      select(vec4f(0.0), texel_b(packed_row_texel(k0 + 1u, col, n4)), 1u < kv),
      select(vec4f(0.0), texel_b(packed_row_texel(k0 + 2u, col, n4)), 2u < kv),
      select(vec4f(0.0), texel_b(packed_row_texel(k0 + 3u, col, n4)), 3u < kv),
    );
    return;
  }
  if (PACKED_B) {
    // This invocation's columns of strip strip0 + v at the current four values of k.
    bk[v] = packed_columns(packed_strip_texel(strip0 + v, k0 / 4u, p.k / 4u, lane));
    return;
  }
  if (TRANS_B) {
    let e = b_base + col * p.k + k0;
    let k = p.k;
    bk[v] = transpose(
      mat4x4f(quad(SRC_B, e), quad(SRC_B, e + k), quad(SRC_B, e + 2u * k), quad(SRC_B, e + 3u * k)),
    );
    return;
  }
  let e = b_base + k0 * p.n + col;
  let n = p.n;
  bk[v] = mat4x4f(
    quad_at_k(SRC_B, e, 0u, kv),
    quad_at_k(SRC_B, e + n, 1u, kv),
    quad_at_k(SRC_B, e + 2u * n, 2u, kv),
    quad_at_k(SRC_B, e + 3u * n, 3u, kv),
  );
}

// acc[4r + v] += bk[v] * (A at row row0+r and the current four values of k), for every v.
fn multiply_row(r: u32, ar: vec4f) {
  acc[4u * r] += bk[0] * ar;
  if (COL_QUADS > 1u) { acc[4u * r + 1u] += bk[1] * ar; }
  if (COL_QUADS > 2u) { acc[4u * r + 2u] += bk[2] * ar; }
  if (COL_QUADS > 3u) { acc[4u * r + 3u] += bk[3] * ar; }
}

fn multiply_group(g: u32, k0: u32, kv: u32) {
  let ag = load_a(g, k0, kv);
  multiply_row(4u * g, ag[0]);
  multiply_row(4u * g + 1u, ag[1]);
  multiply_row(4u * g + 2u, ag[2]);
  multiply_row(4u * g + 3u, ag[3]);
}

// #include matmul_vec4_store

fn store_group(c_base: u32, g: u32) {
  store_block(c_base, g, 0u);
  if (COL_QUADS > 1u) { store_block(c_base, g, 1u); }
  if (COL_QUADS > 2u) { store_block(c_base, g, 2u); }
  if (COL_QUADS > 3u) { store_block(c_base, g, 3u); }
}

// #include matmul_row_groups

@compute @workgroup_size(8)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  row0 = wid.y * 4u * ROW_GROUPS;
  strip0 = wid.x * COL_QUADS;
  lane = lid.x;
  a_base = wid.z * p.stride_a;
  b_base = wid.z * p.stride_b;
  for (var k0 = 0u; k0 < p.k; k0 += 4u) {
    let kv = min(4u, p.k - k0);
    load_b(0u, k0, kv);
    if (COL_QUADS > 1u) { load_b(1u, k0, kv); }
    if (COL_QUADS > 2u) { load_b(2u, k0, kv); }
    if (COL_QUADS > 3u) { load_b(3u, k0, kv); }
    multiply(k0, kv);
  }
  store(wid.z * p.stride_c);
}
