// Causal self-attention for GPUs in the manner of FlashAttention-2: a workgroup owns HR home rows
// of one (batch row, head) and streams the other side's rows through workgroup memory SC at a
// time (a tile), as products of register blocks:
//   forward:     home = queries; per key tile S = Q K^T, the online softmax (running row max, the
//                accumulators rescaled), O += P V; then O / l and the rows' log-sum-exp.
//   backward_q:  home = queries; per key tile S = Q K^T, dP = dO V^T, dS = P (dP - delta),
//                dQ += dS K (P from the saved lse: no softmax again).
//   backward_kv: home = keys of one kv head; per query head of its group and query tile
//                S^T = K Q^T, dP^T = V dO^T, dV += P^T dO, dK += dS^T Q: dK and dV in one pass.
// No atomics on the results and a fixed order of sums, so results are deterministic.
// Shapes: q, d_o [B, T, H, D]; k, v [B, T, Hkv, D] (query head h reads kv head h / (H / Hkv), HF's
// repeat_kv); segment_ids [B, T] (i32); stats [B, T, H, 2] = (lse, delta) per query row
// (shaders/attention_stats.wgsl). Query t attends to key s iff s <= t, seg[s] == seg[t] >= 0 and,
// with p.window > 0, t - s < p.window; a negative id marks padding (output 0, lse 0, no gradient).
// score = scale * q.k. Any head dim up to 4 * 16 * NQ (the accumulators: NQ column quads of 4
// rows per invocation); loads are scalar with zeros past the sequence and the head dim.
// Bindings (every entry point): q, k, v, segment_ids, d_o, stats (read), out (read_write), params;
// callers bind q where one is unused.
// forward:     out = o [B, T, H, D], then from element p.lse_at the lse [B, T, H].
// backward_q:  out = dq [B, T, H, D].
// backward_kv: out = dk [B, T, Hkv, D], then from element p.dv_at dv [B, T, Hkv, D].
// Grid: x = block of HR home rows, y = head (kv head for backward_kv), z = batch row.
// Workgroup: (16, HR / 4); invocation (tx, ty) owns home rows 4 ty .. 4 ty + 3, and in a tile's
// score block the streamed rows 4 tx .. 4 tx + 3, in its accumulators head-dim quads tx + 16 n.
// Overrides: HR (32 or 64), NQ (1 to 4), VK (streamed rows per accumulation step; VK times the
// head dim's quads fits STAGE). The window is a runtime test (one pipeline for windowed and
// full layers).
// #include attention_params
// #include register_blocks

override HR: u32 = 64u;
override NQ: u32 = 1u;
override VK: u32 = 16u;
// Streamed rows per tile; head-dim elements per staging step of a score product; invocations
// along a tile's streamed rows; vec4s of staging memory.
const SC = 64u;
const BK = 16u;
const TX = 16u;
const STAGE = 512u;
// Running max before any key: finite, so exp(max - score) is 0 at the first attended key.
const NEG_BIG = -3.0e38;
// Tensors `element` reads.
const SRC_Q = 0u;
const SRC_K = 1u;
const SRC_V = 2u;
const SRC_DO = 3u;

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> d_o: array<f32>;

// The built-ins every entry point takes.
struct Invocation {
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) index: u32,
}

// Staging: a score product's head-dim slice of the home and streamed rows (element-major:
// stage[kk * HR / 4 + i] = home rows 4i .. 4i+3 at element kk, then the streamed rows likewise),
// or an accumulation step's VK streamed rows (stage[jj * quads + c] = quad c of row jj), or the
// partial row maxima and sums of a reduction.
var<workgroup> stage: array<vec4f, STAGE>;
// P, dS or their transposes, streamed-row major: tile_p[j * HR / 4 + i] = home rows 4i .. 4i+3
// against streamed row j.
var<workgroup> tile_p: array<vec4f, SC * HR / 4u>;
var<workgroup> home_seg: array<i32, HR>;
var<workgroup> stream_seg: array<i32, SC>;
// forward: the home rows' running max and the factor the last tile rescaled them by.
var<workgroup> row_max: array<vec4f, HR / 4u>;
var<workgroup> row_factor: array<vec4f, HR / 4u>;
// backward_kv: lse and delta of the tile's queries.
var<workgroup> col_lse: array<vec4f, SC / 4u>;
var<workgroup> col_delta: array<vec4f, SC / 4u>;
// Whether some pair of the tile attends: counted, then published as a uniform value.
var<workgroup> live_count: atomic<u32>;
var<workgroup> live: u32;

var<private> b: u32;
var<private> tx: u32;
var<private> ty: u32;
var<private> li: u32;
var<private> home0: u32;
// The invocation's 4 x 4 block of a tile: row r = home row 4 ty + r against streamed rows
// 4 tx .. 4 tx + 3: scores, dP, and whether each pair attends.
var<private> s: array<vec4f, 4>;
var<private> dp: array<vec4f, 4>;
var<private> pair: array<vec4<bool>, 4>;
// P (or P^T) of the block, and dS = P (dP - delta).
var<private> prob: array<vec4f, 4>;
var<private> grads: array<vec4f, 4>;
// Accumulators: acc_n[r] = home row 4 ty + r, head-dim quad tx + 16 n (n < NQ); acc0..3 hold o,
// dq or dv, acc4..7 dk.
var<private> acc0: array<vec4f, 4>;
var<private> acc1: array<vec4f, 4>;
var<private> acc2: array<vec4f, 4>;
var<private> acc3: array<vec4f, 4>;
var<private> acc4: array<vec4f, 4>;
var<private> acc5: array<vec4f, 4>;
var<private> acc6: array<vec4f, 4>;
var<private> acc7: array<vec4f, 4>;

fn threads() -> u32 {
  return TX * (HR / 4u);
}

fn quads() -> u32 {
  return (p.head_dim + 3u) / 4u;
}

fn heads_of(src: u32) -> u32 {
  return select(p.heads, p.kv_heads, src == SRC_K || src == SRC_V);
}

fn element(src: u32, i: u32) -> f32 {
  switch src {
    case SRC_Q: { return q[i]; }
    case SRC_K: { return k[i]; }
    case SRC_V: { return v[i]; }
    default: { return d_o[i]; }
  }
}

// Elements d0 .. d0+3 of position t, head `head` of src; zeros past the sequence or the head dim.
fn quad_at(src: u32, t: u32, head: u32, d0: u32) -> vec4f {
  if (t >= p.seq || d0 >= p.head_dim) { return vec4f(0.0); }
  let at = ((b * p.seq + t) * heads_of(src) + head) * p.head_dim + d0;
  let last = p.head_dim - 1u - d0;
  return vec4f(
    element(src, at),
    select(0.0, element(src, at + min(1u, last)), 1u <= last),
    select(0.0, element(src, at + min(2u, last)), 2u <= last),
    select(0.0, element(src, at + min(3u, last)), 3u <= last),
  );
}

fn segment_of(t: u32) -> i32 {
  if (t >= p.seq) { return -1; }
  return segment_ids[b * p.seq + t];
}

fn scaled4(x: array<vec4f, 4>, f: vec4f) -> array<vec4f, 4> {
  return array<vec4f, 4>(x[0] * f.x, x[1] * f.y, x[2] * f.z, x[3] * f.w);
}

// Whether home row position home_t (segment home_sg) pairs with streamed positions stream_t
// (segments stream_sg): the query attends to the key. `query_home`: the home rows are queries.
fn attends4(query_home: bool, home_t: u32, home_sg: i32, stream_t: vec4u, stream_sg: vec4i) -> vec4<bool> {
  let qt = select(vec4u(home_t), stream_t, !query_home);
  let kt = select(stream_t, vec4u(home_t), !query_home);
  let causal = kt <= qt;
  let segments = (stream_sg == vec4i(home_sg)) & vec4<bool>(home_sg >= 0);
  let windowed = vec4<bool>(p.window == 0u) | (qt - kt < vec4u(p.window));
  return causal & windowed & segments;
}

// Stages the segment ids of the tile at stream0 (and, when it holds queries, their lse and delta
// of head `head`), sets `pair` and returns, uniformly, whether some pair of the tile attends.
fn enter_tile(query_home: bool, stream0: u32, head: u32) -> bool {
  if (li < SC) { stream_seg[li] = segment_of(stream0 + li); }
  if (!query_home && li < SC / 4u) {
    col_lse[li] = stats_at(stream0 + 4u * li, head, 0u);
    col_delta[li] = stats_at(stream0 + 4u * li, head, 1u);
  }
  workgroupBarrier();
  let st = vec4u(stream0 + 4u * tx) + vec4u(0u, 1u, 2u, 3u);
  let c = 4u * tx;
  let ss = vec4i(stream_seg[c], stream_seg[c + 1u], stream_seg[c + 2u], stream_seg[c + 3u]);
  let h = 4u * ty;
  let t = home0 + h;
  pair = array<vec4<bool>, 4>(
    attends4(query_home, t, home_seg[h], st, ss),
    attends4(query_home, t + 1u, home_seg[h + 1u], st, ss),
    attends4(query_home, t + 2u, home_seg[h + 2u], st, ss),
    attends4(query_home, t + 3u, home_seg[h + 3u], st, ss),
  );
  if (any(pair[0] | pair[1] | pair[2] | pair[3])) { atomicAdd(&live_count, 1u); }
  workgroupBarrier();
  if (li == 0u) {
    live = atomicLoad(&live_count);
    atomicStore(&live_count, 0u);
  }
  return workgroupUniformLoad(&live) != 0u;
}

// Stages head-dim elements d0 .. d0 + BK - 1 of the home rows (src hs, head hh) and of the
// streamed rows from stream0 (src ss, head sh), element-major.
fn stage_scores(hs: u32, hh: u32, ss: u32, sh: u32, stream0: u32, d0: u32) {
  let home_blocks = (HR / 4u) * (BK / 4u);
  let blocks = home_blocks + (SC / 4u) * (BK / 4u);
  for (var n = li; n < blocks; n += threads()) {
    let home = n < home_blocks;
    let m = select(n - home_blocks, n, home);
    let i = m / (BK / 4u);
    let kk = 4u * (m % (BK / 4u));
    let src = select(ss, hs, home);
    let head = select(sh, hh, home);
    let t = select(stream0, home0, home) + 4u * i;
    let width = select(SC / 4u, HR / 4u, home);
    let base = select(HR * BK / 4u, 0u, home) + i;
    let x0 = quad_at(src, t, head, d0 + kk);
    let x1 = quad_at(src, t + 1u, head, d0 + kk);
    let x2 = quad_at(src, t + 2u, head, d0 + kk);
    let x3 = quad_at(src, t + 3u, head, d0 + kk);
    stage[base + kk * width] = vec4f(x0.x, x1.x, x2.x, x3.x);
    stage[base + (kk + 1u) * width] = vec4f(x0.y, x1.y, x2.y, x3.y);
    stage[base + (kk + 2u) * width] = vec4f(x0.z, x1.z, x2.z, x3.z);
    stage[base + (kk + 3u) * width] = vec4f(x0.w, x1.w, x2.w, x3.w);
  }
}

// The invocation's block of (home rows of hs) . (streamed rows of ss) over the head dim.
fn score_product(hs: u32, hh: u32, ss: u32, sh: u32, stream0: u32) -> array<vec4f, 4> {
  var x = array<vec4f, 4>();
  for (var d0 = 0u; d0 < p.head_dim; d0 += BK) {
    stage_scores(hs, hh, ss, sh, stream0, d0);
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      x = outer4(x, stage[kk * (HR / 4u) + ty], stage[HR * BK / 4u + kk * (SC / 4u) + tx]);
    }
    workgroupBarrier();
  }
  return x;
}

// Writes the invocation's block x into tile_p (transposed: streamed-row major), then waits.
fn write_tile_p(x: array<vec4f, 4>) {
  let j = 4u * tx;
  tile_p[j * (HR / 4u) + ty] = vec4f(x[0].x, x[1].x, x[2].x, x[3].x);
  tile_p[(j + 1u) * (HR / 4u) + ty] = vec4f(x[0].y, x[1].y, x[2].y, x[3].y);
  tile_p[(j + 2u) * (HR / 4u) + ty] = vec4f(x[0].z, x[1].z, x[2].z, x[3].z);
  tile_p[(j + 3u) * (HR / 4u) + ty] = vec4f(x[0].w, x[1].w, x[2].w, x[3].w);
  workgroupBarrier();
}

// One streamed row's step of the first (acc0..3) or second (acc4..7) accumulators: home rows gain
// a (their tile_p values for the row) times the row's quads staged from `row`.
fn accumulate_row(second: bool, a: vec4f, row: u32, nq: u32) {
  if (second) {
    if (tx < nq) { acc4 = outer4(acc4, a, stage[row + tx]); }
    if (NQ > 1u && tx + 16u < nq) { acc5 = outer4(acc5, a, stage[row + tx + 16u]); }
    if (NQ > 2u && tx + 32u < nq) { acc6 = outer4(acc6, a, stage[row + tx + 32u]); }
    if (NQ > 3u && tx + 48u < nq) { acc7 = outer4(acc7, a, stage[row + tx + 48u]); }
    return;
  }
  if (tx < nq) { acc0 = outer4(acc0, a, stage[row + tx]); }
  if (NQ > 1u && tx + 16u < nq) { acc1 = outer4(acc1, a, stage[row + tx + 16u]); }
  if (NQ > 2u && tx + 32u < nq) { acc2 = outer4(acc2, a, stage[row + tx + 32u]); }
  if (NQ > 3u && tx + 48u < nq) { acc3 = outer4(acc3, a, stage[row + tx + 48u]); }
}

// Accumulators (first or second) += tile_p-weighted streamed rows of src (head `head`) from
// stream0: home row i gains sum_j tile_p[j][i] * row j.
fn accumulate(second: bool, src: u32, head: u32, stream0: u32) {
  let nq = quads();
  for (var j0 = 0u; j0 < SC; j0 += VK) {
    for (var n = li; n < VK * nq; n += threads()) {
      stage[n] = quad_at(src, stream0 + j0 + n / nq, head, 4u * (n % nq));
    }
    workgroupBarrier();
    for (var jj = 0u; jj < VK; jj++) {
      accumulate_row(second, tile_p[(j0 + jj) * (HR / 4u) + ty], jj * nq, nq);
    }
    workgroupBarrier();
  }
}

// Multiplies the first accumulators' rows by f.
fn rescale_first(f: vec4f) {
  acc0 = scaled4(acc0, f);
  if (NQ > 1u) { acc1 = scaled4(acc1, f); }
  if (NQ > 2u) { acc2 = scaled4(acc2, f); }
  if (NQ > 3u) { acc3 = scaled4(acc3, f); }
}

// Stores x (rows of head-dim quad c) times f into out from element base (tensor of `heads` heads).
fn store_block(x: array<vec4f, 4>, f: vec4f, c: u32, base: u32, heads: u32, head: u32) {
  if (c >= quads()) { return; }
  for (var r = 0u; r < 4u; r++) {
    let t = home0 + 4u * ty + r;
    if (t >= p.seq) { continue; }
    let at = base + ((b * p.seq + t) * heads + head) * p.head_dim + 4u * c;
    let y = x[r] * f[r];
    for (var e = 0u; e < 4u; e++) {
      if (4u * c + e < p.head_dim) { out[at + e] = y[e]; }
    }
  }
}

// Stores the first or second accumulators times f (per row) into out from base.
fn store_acc(second: bool, f: vec4f, base: u32, heads: u32, head: u32) {
  if (second) {
    store_block(acc4, f, tx, base, heads, head);
    if (NQ > 1u) { store_block(acc5, f, tx + 16u, base, heads, head); }
    if (NQ > 2u) { store_block(acc6, f, tx + 32u, base, heads, head); }
    if (NQ > 3u) { store_block(acc7, f, tx + 48u, base, heads, head); }
    return;
  }
  store_block(acc0, f, tx, base, heads, head);
  if (NQ > 1u) { store_block(acc1, f, tx + 16u, base, heads, head); }
  if (NQ > 2u) { store_block(acc2, f, tx + 32u, base, heads, head); }
  if (NQ > 3u) { store_block(acc3, f, tx + 48u, base, heads, head); }
}

// Sets the invocation's ids and stages the home rows' segment ids (with a barrier).
fn locate(inv: Invocation, heavy_first: bool) {
  b = inv.wid.z;
  tx = inv.lid.x;
  ty = inv.lid.y;
  li = inv.index;
  // Causal work grows with the query block: the longest run first.
  home0 = select(inv.wid.x, inv.nwg.x - 1u - inv.wid.x, heavy_first) * HR;
  if (li < HR) { home_seg[li] = segment_of(home0 + li); }
  if (li < HR / 4u) {
    row_max[li] = vec4f(NEG_BIG);
    row_factor[li] = vec4f(1.0);
  }
  workgroupBarrier();
}

// First key tile the home queries may see (the window's start) and the end of their keys.
fn key_range() -> vec2u {
  var first = 0u;
  if (p.window > 0u && home0 + 1u > p.window) { first = (home0 + 1u - p.window) / SC * SC; }
  return vec2u(first, min(p.seq, home0 + HR));
}

// The sum over the 16 tx invocations of each home row's x (a vec4 over the invocation's rows).
fn row_sum(x: vec4f) -> vec4f {
  stage[ty * TX + tx] = x;
  workgroupBarrier();
  var total = vec4f(0.0);
  for (var i = 0u; i < TX; i++) { total += stage[ty * TX + i]; }
  workgroupBarrier();
  return total;
}

// The rows' new running max given this tile's masked scores x; sets row_factor (exp(old - new)).
fn update_row_max(x: array<vec4f, 4>) -> vec4f {
  stage[ty * TX + tx] = vec4f(
    max(max(x[0].x, x[0].y), max(x[0].z, x[0].w)),
    max(max(x[1].x, x[1].y), max(x[1].z, x[1].w)),
    max(max(x[2].x, x[2].y), max(x[2].z, x[2].w)),
    max(max(x[3].x, x[3].y), max(x[3].z, x[3].w)),
  );
  workgroupBarrier();
  if (tx == 0u) {
    var m = row_max[ty];
    let old = m;
    for (var i = 0u; i < TX; i++) { m = max(m, stage[ty * TX + i]); }
    row_max[ty] = m;
    row_factor[ty] = exp(old - m);
  }
  workgroupBarrier();
  return row_max[ty];
}

@compute @workgroup_size(16, HR / 4u)
fn forward(inv: Invocation) {
  locate(inv, true);
  let head = inv.wid.y;
  let kv_head = head / (p.heads / p.kv_heads);
  var sum = vec4f(0.0);
  let range = key_range();
  for (var k0 = range.x; k0 < range.y; k0 += SC) {
    if (!enter_tile(true, k0, head)) { continue; }
    let raw = score_product(SRC_Q, head, SRC_K, kv_head, k0);
    s = array<vec4f, 4>(
      select(vec4f(NEG_BIG), raw[0] * p.scale, pair[0]),
      select(vec4f(NEG_BIG), raw[1] * p.scale, pair[1]),
      select(vec4f(NEG_BIG), raw[2] * p.scale, pair[2]),
      select(vec4f(NEG_BIG), raw[3] * p.scale, pair[3]),
    );
    let m = update_row_max(s);
    let f = row_factor[ty];
    prob = array<vec4f, 4>(
      select(vec4f(0.0), exp(s[0] - vec4f(m.x)), pair[0]),
      select(vec4f(0.0), exp(s[1] - vec4f(m.y)), pair[1]),
      select(vec4f(0.0), exp(s[2] - vec4f(m.z)), pair[2]),
      select(vec4f(0.0), exp(s[3] - vec4f(m.w)), pair[3]),
    );
    let one = vec4f(1.0);
    sum = sum * f +
      vec4f(dot(prob[0], one), dot(prob[1], one), dot(prob[2], one), dot(prob[3], one));
    rescale_first(f);
    write_tile_p(prob);
    accumulate(false, SRC_V, kv_head, k0);
  }
  let l = row_sum(sum);
  store_acc(false, select(vec4f(0.0), 1.0 / l, l > vec4f(0.0)), 0u, p.heads, head);
  if (tx == 0u) {
    let lse = select(vec4f(0.0), row_max[ty] + log(l), l > vec4f(0.0));
    for (var r = 0u; r < 4u; r++) {
      let t = home0 + 4u * ty + r;
      if (t < p.seq) { out[p.lse_at + (b * p.seq + t) * p.heads + head] = lse[r]; }
    }
  }
}

// prob = P of the block from its scores s and lse4 (per entry: row r's values lse4[r]), grads =
// dS from dp and delta4 likewise; both 0 where the pair does not attend.
fn softmax_grads(lse4: array<vec4f, 4>, delta4: array<vec4f, 4>) {
  prob = array<vec4f, 4>(
    select(vec4f(0.0), exp(s[0] * p.scale - lse4[0]), pair[0]),
    select(vec4f(0.0), exp(s[1] * p.scale - lse4[1]), pair[1]),
    select(vec4f(0.0), exp(s[2] * p.scale - lse4[2]), pair[2]),
    select(vec4f(0.0), exp(s[3] * p.scale - lse4[3]), pair[3]),
  );
  grads = array<vec4f, 4>(
    prob[0] * (dp[0] - delta4[0]),
    prob[1] * (dp[1] - delta4[1]),
    prob[2] * (dp[2] - delta4[2]),
    prob[3] * (dp[3] - delta4[3]),
  );
}

// lse (which 0) or delta (which 1) of query rows t .. t+3 of head `head`; 0 past the sequence.
fn stats_at(t: u32, head: u32, which: u32) -> vec4f {
  var x = vec4f(0.0);
  for (var r = 0u; r < 4u; r++) {
    if (t + r < p.seq) { x[r] = stats[((b * p.seq + t + r) * p.heads + head) * 2u + which]; }
  }
  return x;
}

@compute @workgroup_size(16, HR / 4u)
fn backward_q(inv: Invocation) {
  locate(inv, true);
  let head = inv.wid.y;
  let kv_head = head / (p.heads / p.kv_heads);
  let lse = stats_at(home0 + 4u * ty, head, 0u);
  let delta = stats_at(home0 + 4u * ty, head, 1u);
  let range = key_range();
  for (var k0 = range.x; k0 < range.y; k0 += SC) {
    if (!enter_tile(true, k0, head)) { continue; }
    s = score_product(SRC_Q, head, SRC_K, kv_head, k0);
    dp = score_product(SRC_DO, head, SRC_V, kv_head, k0);
    softmax_grads(
      array<vec4f, 4>(vec4f(lse.x), vec4f(lse.y), vec4f(lse.z), vec4f(lse.w)),
      array<vec4f, 4>(vec4f(delta.x), vec4f(delta.y), vec4f(delta.z), vec4f(delta.w)),
    );
    write_tile_p(grads);
    accumulate(false, SRC_K, kv_head, k0);
  }
  store_acc(false, vec4f(p.scale), 0u, p.heads, head);
}

@compute @workgroup_size(16, HR / 4u)
fn backward_kv(inv: Invocation) {
  locate(inv, false);
  let kv_head = inv.wid.y;
  let group = p.heads / p.kv_heads;
  // Queries from the home keys' tile on, up to the last one a window lets see them.
  let first = home0 / SC * SC;
  var end = p.seq;
  if (p.window > 0u) { end = min(p.seq, home0 + HR + p.window - 1u); }
  for (var head = kv_head * group; head < (kv_head + 1u) * group; head++) {
    for (var q0 = first; q0 < end; q0 += SC) {
      if (!enter_tile(false, q0, head)) { continue; }
      s = score_product(SRC_K, kv_head, SRC_Q, head, q0);
      dp = score_product(SRC_V, kv_head, SRC_DO, head, q0);
      let lse = col_lse[tx];
      let delta = col_delta[tx];
      softmax_grads(array<vec4f, 4>(lse, lse, lse, lse), array<vec4f, 4>(delta, delta, delta, delta));
      write_tile_p(prob);
      accumulate(false, SRC_DO, head, q0);
      write_tile_p(grads);
      accumulate(true, SRC_Q, head, q0);
    }
  }
  store_acc(false, vec4f(1.0), p.dv_at, p.kv_heads, kv_head);
  store_acc(true, vec4f(p.scale), 0u, p.kv_heads, kv_head);
}
