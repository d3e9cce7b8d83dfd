// The GEMV kernels for GPUs, for the few rows of a decode step:
//   c[m, n] (+)= sum_k x[m, k] * w[n, k]                       (the product x W^T, HF's layout)
// with, by override, x = HF's RMSNorm of a with weight gamma (+ WEIGHT_OFFSET: Gemma's 1 + gamma)
// (NORM: the norm's 1/rms is a per-row factor, so a chunk of a is multiplied by the weight on the
// way and the row's sums by 1/rms at the end), and a second weight w2 (GATED: c = f(x W^T) * (x
// W2^T), f the activation OP, SwiGLU with silu). Weights are f32, or f16 / bf16 packed two per u32
// (FORMAT; element 2i in the low half), read as vec4<u32> chunks (4 f32 or 8 halves); all math in
// f32.
// A workgroup owns COLS output columns; its LANES = 256 / COLS invocations per column split K:
// lane l sums chunks l, l + LANES, ... of its column's weight row (neighbouring lanes read
// neighbouring 16 bytes: coalesced), for every row of a; then the lanes' sums are added by
// `reduce_lanes`. Few columns per workgroup give a small product many workgroups (576 columns in
// 144 workgroups of 4), each lane a few chunks.
// Shapes: a [M, K] as vec4s (K a multiple of 4, of 8 with halves), M <= ROWS <= 8; gamma [K] as
// vec4s (NORM); weights [N, K] as chunks; c [M, N].
// Bindings here: a, gamma, w, w2 (read; callers bind a for an unused gamma, w for an unused w2).
// Grid: workgroup index x + y * nwg.x = block of COLS columns.
// A shader assembles a kernel from this core and two parts (besides activation and half_weights):
// - where its columns' weights lie (lib/gemv_weights.wgsl: one weight, w, and w2 when GATED;
//   lib/gemv_qkv_weights.wgsl: q's, k's and v's weights side by side, with biases): it declares
//   the bindings after w2, the output `c` and the params `p`, and `weight_chunk(col, q, chunks)
//   -> vec4u` (chunk q of column col's weight row, of `chunks`) and `column_bias(col) -> f32`;
// - how the lanes' sums are added (lib/gemv_workgroup_sums.wgsl in workgroup memory,
//   lib/gemv_subgroup_sums.wgsl by subgroup sums): `reduce_lanes(x: vec4f, lane: u32, column:
//   u32) -> vec4f` (the sum of x over the LANES lanes of workgroup column `column`, valid in lane
//   0; called by every invocation; `partial` is its workgroup memory) and the entry point `main`,
//   @workgroup_size(LANES, COLS), calling `gemv`.

override COLS: u32 = 4u; // a power of two, 1 to 64
override ROWS: u32 = 1u; // 1, 2, 4 or 8
override FORMAT: u32 = 0u; // 0 f32, 1 bf16, 2 f16 (lib/half_weights.wgsl)
override NORM: bool = false;
override WEIGHT_OFFSET: f32 = 0.0; // added to gamma (Gemma's RMSNorm: 1)
override GATED: bool = false;
override OP: u32 = 6u; // the gate's activation (lib/activation.wgsl codes; 6 silu)
override ACCUMULATE: bool = false;
override LANES: u32 = 256u / COLS;

struct Params {
  m: u32,
  n: u32,
  k: u32,
  eps: f32,
  n1: u32, // the q/k/v kernel's first column of k (lib/gemv_qkv_weights.wgsl); n elsewhere
  n2: u32, // its first column of v; n elsewhere
}

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> gamma: array<vec4f>;
@group(0) @binding(2) var<storage, read> w: array<vec4u>;
@group(0) @binding(3) var<storage, read> w2: array<vec4u>;

// Workgroup memory for `reduce_lanes`: a vec4 per invocation.
var<workgroup> partial: array<vec4f, 256>;

// The built-ins of a GEMV entry point.
struct Invocation {
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
}

// Weight elements 8 per chunk for halves (as two vec4s), 4 for f32 (the second vec4 unused).
fn chunk_values(u: vec4u) -> array<vec4f, 2> {
  if (FORMAT == 0u) { return array<vec4f, 2>(bitcast<vec4f>(u), vec4f(0.0)); }
  return array<vec4f, 2>(
    vec4f(halves(FORMAT, u.x), halves(FORMAT, u.y)),
    vec4f(halves(FORMAT, u.z), halves(FORMAT, u.w)),
  );
}

// Quad j of row r of x (a times gamma with NORM); zeros for rows past M.
fn x_quad(r: u32, j: u32) -> vec4f {
  if (r >= p.m) { return vec4f(0.0); }
  let v = a[r * (p.k / 4u) + j];
  if (NORM) { return v * (gamma[j] + WEIGHT_OFFSET); }
  return v;
}

// Row r of x (chunk q) times the weight values wv of the chunk.
fn row_dot(r: u32, q: u32, wv: array<vec4f, 2>) -> f32 {
  if (FORMAT == 0u) { return dot(x_quad(r, q), wv[0]); }
  return dot(x_quad(r, 2u * q), wv[0]) + dot(x_quad(r, 2u * q + 1u), wv[1]);
}

// Rows 4 g .. 4 g + 3 of x (chunk q) times the chunk's weight values.
fn rows_dot(g: u32, q: u32, wv: array<vec4f, 2>) -> vec4f {
  let r = 4u * g;
  return vec4f(
    row_dot(r, q, wv),
    select(0.0, row_dot(r + 1u, q, wv), ROWS > r + 1u),
    select(0.0, row_dot(r + 2u, q, wv), ROWS > r + 2u),
    select(0.0, row_dot(r + 3u, q, wv), ROWS > r + 3u),
  );
}

// 1 / rms of row r of a (NORM); 1 otherwise.
fn inv_rms(r: u32) -> f32 {
  if (!NORM || r >= p.m) { return 1.0; }
  var sq = 0.0;
  for (var j = 0u; j < p.k / 4u; j++) {
    let v = a[r * (p.k / 4u) + j];
    sq += dot(v, v);
  }
  return inverseSqrt(sq / f32(p.k) + p.eps);
}

// Stores the column's finished values y (rows 4 g .. 4 g + 3) into c.
fn store_rows(g: u32, col: u32, y: vec4f) {
  for (var i = 0u; i < 4u; i++) {
    let r = 4u * g + i;
    if (r >= p.m) { return; }
    let at = r * p.n + col;
    var value = y[i];
    if (ACCUMULATE) { value += c[at]; }
    c[at] = value;
  }
}

// Column col's outputs of rows 4 g .. 4 g + 3 from its reduced sums s (of w) and s2 (of w2).
fn finish(g: u32, col: u32, s: vec4f, s2: vec4f) -> vec4f {
  let scale = vec4f(inv_rms(4u * g), inv_rms(4u * g + 1u), inv_rms(4u * g + 2u), inv_rms(4u * g + 3u));
  let y = s * scale;
  if (!GATED) { return y + column_bias(col); }
  let u = s2 * scale;
  return vec4f(
    activation(y.x, 1.0, 0.0) * u.x,
    activation(y.y, 1.0, 0.0) * u.y,
    activation(y.z, 1.0, 0.0) * u.z,
    activation(y.w, 1.0, 0.0) * u.w,
  );
}

fn gemv(inv: Invocation) {
  let lane = inv.lid.x;
  let column = inv.lid.y;
  let col = (inv.wid.x + inv.wid.y * inv.nwg.x) * COLS + column;
  let chunks = p.k / select(8u, 4u, FORMAT == 0u);
  // Sums of rows 0..3 and 4..7, of w and of w2.
  var s0 = vec4f(0.0);
  var s1 = vec4f(0.0);
  var t0 = vec4f(0.0);
  var t1 = vec4f(0.0);
  if (col < p.n) {
    for (var q = lane; q < chunks; q += LANES) {
      let wv = chunk_values(weight_chunk(col, q, chunks));
      s0 += rows_dot(0u, q, wv);
      if (ROWS > 4u) { s1 += rows_dot(1u, q, wv); }
      if (GATED) {
        let uv = chunk_values(w2[col * chunks + q]);
        t0 += rows_dot(0u, q, uv);
        if (ROWS > 4u) { t1 += rows_dot(1u, q, uv); }
      }
    }
  }
  s0 = reduce_lanes(s0, lane, column);
  if (ROWS > 4u) { s1 = reduce_lanes(s1, lane, column); }
  if (GATED) {
    t0 = reduce_lanes(t0, lane, column);
    if (ROWS > 4u) { t1 = reduce_lanes(t1, lane, column); }
  }
  if (lane != 0u || col >= p.n) { return; }
  store_rows(0u, col, finish(0u, col, s0, t0));
  if (ROWS > 4u) { store_rows(1u, col, finish(1u, col, s1, t1)); }
}
