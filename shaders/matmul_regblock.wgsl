// Register-blocked matmul: C[b] = op(A[b]) @ op(B[b]) where op transposes when TRANS_A / TRANS_B
// (C[b] += ... with ACCUMULATE: C holds a running sum, e.g. of micro-batches' weight gradients).
// Each invocation keeps a (4*ROW_GROUPS) x (4*COL_GROUPS) block of C in registers as vec4 rows
// and walks K four values at a time; no workgroup memory. The WG_X invocations of a workgroup
// lie side by side along N. Any M, N, K: values past K are read as zeros, rows past M are not
// stored, and stores past N are redirected to column N-1 with its own value. Unrolled by hand
// (override guards, constant indices): loops over the block would spill it to memory.
//
// Bindings: a (read)  A [batch][M, K], or [batch][K, M] with TRANS_A; batch stride p.stride_a
//           b (read)  B [batch][K, N], or [batch][N, K] with TRANS_B; batch stride p.stride_b;
//                     32-bit words: f32 values, or with B_FORMAT two half-precision values each
//                     (element 2i in the low half of word i), widened to f32 as they are loaded
//           c (write) C [batch][M, N], batch stride p.stride_c
//           p (uniform) Params (a stride of 0 shares that operand across the batch)
// Grid: x = ceil(N / (4*COL_GROUPS*WG_X)), y = ceil(M / (4*ROW_GROUPS)), z = batch.

override WG_X: u32 = 8u;
override ROW_GROUPS: u32 = 8u; // 1..8 groups of 4 rows
override COL_GROUPS: u32 = 4u; // 1..4 groups of 4 columns
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false;
// How B's words hold values: 0 f32, 1 two bfloat16, 2 two IEEE binary16.
override B_FORMAT: u32 = 0u;

// #include matmul_params
// #include half_weights
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;

// acc[4r + v] = C[row0 + r, col0 + 4v .. +4].
var<private> acc: array<vec4f, 128>;
// B at the current four values of k: column kk of bk[v] = B[k0 + kk, col0 + 4v .. +4].
var<private> bk: array<mat4x4f, 4>;
var<private> a_base: u32;
var<private> b_base: u32;
var<private> row0: u32;
var<private> col0: u32;

// Four consecutive elements of a (of b) from index i; those from `valid` on read as 0.
fn quad_a(i: u32, valid: u32) -> vec4f {
  let v = vec4f(a[i], a[i + 1u], a[i + 2u], a[i + 3u]);
  return select(vec4f(0.0), v, vec4u(0u, 1u, 2u, 3u) < vec4u(valid));
}

fn quad_b(i: u32, valid: u32) -> vec4f {
  var v: vec4f;
  if (B_FORMAT == 0u) {
    v = bitcast<vec4f>(vec4u(b[i], b[i + 1u], b[i + 2u], b[i + 3u]));
  } else if ((i & 1u) == 0u) {
    v = vec4f(halves(B_FORMAT, b[i / 2u]), halves(B_FORMAT, b[i / 2u + 1u]));
  } else {
    // An odd start: the high half of one word, two of the next, the low half of the third.
    let first = halves(B_FORMAT, b[i / 2u]);
    let last = halves(B_FORMAT, b[i / 2u + 2u]);
    v = vec4f(first.y, halves(B_FORMAT, b[i / 2u + 1u]), last.x);
  }
  return select(vec4f(0.0), v, vec4u(0u, 1u, 2u, 3u) < vec4u(valid));
}

// 4 when the kk-th of the current k values is inside K, else 0 (for quads along M or N).
fn whole(kk: u32, kv: u32) -> u32 {
  return select(0u, 4u, kk < kv);
}

// A at rows row0+4g .. +4 and k0 .. k0+kv (kv <= 4): column j holds row row0+4g+j.
fn load_a(g: u32, k0: u32, kv: u32) -> mat4x4f {
  let r = row0 + 4u * g;
  if (TRANS_A) {
    let i = a_base + k0 * p.m + r;
    let m = p.m;
    return transpose(mat4x4f(
      quad_a(i, whole(0u, kv)),
      quad_a(i + m, whole(1u, kv)),
      quad_a(i + 2u * m, whole(2u, kv)),
      quad_a(i + 3u * m, whole(3u, kv)),
    ));
  }
  let i = a_base + r * p.k + k0;
  let k = p.k;
  return mat4x4f(quad_a(i, kv), quad_a(i + k, kv), quad_a(i + 2u * k, kv), quad_a(i + 3u * k, kv));
}

// The first column of quad v: this invocation's 4 * COL_GROUPS columns are side by side.
fn column_of(v: u32) -> u32 {
  return col0 + 4u * v;
}

// B at k0 .. k0+kv and columns col0+4v .. +4, into bk[v].
fn load_b(v: u32, k0: u32, kv: u32) {
  let col = column_of(v);
  if (TRANS_B) {
    let i = b_base + col * p.k + k0;
    let k = p.k;
    bk[v] = transpose(
      mat4x4f(quad_b(i, kv), quad_b(i + k, kv), quad_b(i + 2u * k, kv), quad_b(i + 3u * k, kv)),
    );
    return;
  }
  let i = b_base + k0 * p.n + col;
  let n = p.n;
  bk[v] = mat4x4f(
    quad_b(i, whole(0u, kv)),
    quad_b(i + n, whole(1u, kv)),
    quad_b(i + 2u * n, whole(2u, kv)),
    quad_b(i + 3u * n, whole(3u, kv)),
  );
}

// acc[4r + v] += bk[v] * (A at row row0+r and the current four values of k), for every v.
fn multiply_row(r: u32, ar: vec4f) {
  acc[4u * r] += bk[0] * ar;
  if (COL_GROUPS > 1u) { acc[4u * r + 1u] += bk[1] * ar; }
  if (COL_GROUPS > 2u) { acc[4u * r + 2u] += bk[2] * ar; }
  if (COL_GROUPS > 3u) { acc[4u * r + 3u] += bk[3] * ar; }
}

fn multiply_group(g: u32, k0: u32, kv: u32) {
  let ag = load_a(g, k0, kv);
  multiply_row(4u * g, ag[0]);
  multiply_row(4u * g + 1u, ag[1]);
  multiply_row(4u * g + 2u, ag[2]);
  multiply_row(4u * g + 3u, ag[3]);
}

// One row of a block, four values of C from column col: columns >= N are redirected to column
// N-1 with its own value, so the stores need no branches (branchy stores compile very slowly on
// llvmpipe). With ACCUMULATE every old value is read before the first store, so a redirected
// store writes the same sum again. The caller skips rows >= M and blocks starting past N.
fn store_row(i: u32, col: u32, row: vec4f) {
  let last = min(p.n - 1u - col, 3u);
  let at = vec4u(i, i + min(1u, last), i + min(2u, last), i + min(3u, last));
  var value = vec4f(row.x, row[min(1u, last)], row[min(2u, last)], row[min(3u, last)]);
  if (ACCUMULATE) { value += vec4f(c[at.x], c[at.y], c[at.z], c[at.w]); }
  c[at.x] = value.x;
  c[at.y] = value.y;
  c[at.z] = value.z;
  c[at.w] = value.w;
}

fn store_group(c_base: u32, g: u32) {
  store_block(c_base, g, 0u);
  if (COL_GROUPS > 1u) { store_block(c_base, g, 1u); }
  if (COL_GROUPS > 2u) { store_block(c_base, g, 2u); }
  if (COL_GROUPS > 3u) { store_block(c_base, g, 3u); }
}

// #include matmul_row_groups

@compute @workgroup_size(WG_X)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  row0 = wid.y * 4u * ROW_GROUPS;
  col0 = (wid.x * WG_X + lid.x) * 4u * COL_GROUPS;
  a_base = wid.z * p.stride_a;
  b_base = wid.z * p.stride_b;
  for (var k0 = 0u; k0 < p.k; k0 += 4u) {
    let kv = min(4u, p.k - k0);
    load_b(0u, k0, kv);
    if (COL_GROUPS > 1u) { load_b(1u, k0, kv); }
    if (COL_GROUPS > 2u) { load_b(2u, k0, kv); }
    if (COL_GROUPS > 3u) { load_b(3u, k0, kv); }
    multiply(k0, kv);
  }
  store(wid.z * p.stride_c);
}
