// The causal self-attention kernels of attention.wgsl (operands in storage buffers) and
// attention_texture.wgsl (operands in rgba32float textures), which differ only in how they load
// q, k, v and d_o; a shader pulls this in with the line `// #include attention_core` and
// defines `quads(src, t, head, d0) -> mat4x4f`: column dd holds element d0 + dd (0 past the head
// dim) of positions t .. t+3 (clamped to the sequence) of head `head` of tensor src (SRC_*; q
// already multiplied by p.scale), and bindings 0, 1, 2, 4 (q, k, v, d_o).
//
// Forward as an online softmax over key tiles (flash-attention style, no [T, T] score matrix)
// and the backward (dq iterating over keys; dk, dv iterating over queries); no atomics, so every
// result is deterministic. All math in f32; no dropout or KV cache.
// Shapes: q, d_o [B, T, H, D]; k, v [B, T, Hkv, D]; segment_ids [B, T] (i32); stats
// [B, T, H, 2] = (lse, delta) per query row (shaders/attention_stats.wgsl). Query head h reads kv
// head h / (H / Hkv) (HF's repeat_kv). Query t attends to key s iff s <= t, seg[s] == seg[t] >= 0
// and, with p.window > 0, t - s < p.window: a negative id marks padding, whose output row is 0
// (lse 0) and which gets and gives no gradient.
// score = scale * q.k: q is multiplied by scale as it is read (so dk needs no extra factor).
// Bindings (every entry point): q, k, v, segment_ids, d_o, stats (read), out (read_write),
// params. Callers bind q where a binding is unused.
// forward:        out [B, T, H, D] = softmax(scores) v per query row, then from element
//                 p.lse_at the rows' lse [B, T, H].                            (d_o, stats unused)
// backward_q:     out [B, T, H, D] = dq = scale * dS k.
// backward_kv:    out [B, T, Hkv, D] = dk = dS^T (scale q), or dv = P^T d_o when GRAD_V, summed
//                 over the query heads of the kv head's group.
// with P = exp(score - lse), dP = d_o . v, dS = P * (dP - delta) (0 where no attention).
// With p.softcap > 0 (Gemma 2's attn_logit_softcapping) the score is c tanh(scale q.k / c), and
// dS gains the factor 1 - (score / c)^2 (the derivative of the cap). Including shaders also
// include softcap.
//
// Each invocation owns 4 * ROW_GROUPS home rows (queries; keys for backward_kv) and walks the
// other side's rows 4 * COL_GROUPS at a time (a tile), keeping the tile's scores in registers as
// 4x4 matrices built from outer products, one head-dim element at a time (loaded four at a time);
// tiles where no pair attends are skipped. The head dim is a runtime loop, so one pipeline serves
// every head dim. Row accumulators (o, dq, dk, dv) are zeroed first and updated once per tile,
// in `out` itself or (PRIVATE_ACC) in a private array copied to `out` at the end. No workgroup
// memory: on CPU adapters every storage read costs one load per SIMD lane, so what matters is
// reuse (a tile element feeds 4 * ROW_GROUPS rows) and few load sites in the code (each one
// compiles to a loop over the lanes). Register blocks are indexed by literals only (`each_block`
// spells the loops out, like matmul_regblock): a loop index would put them in memory on llvmpipe
// (the private accumulators are indexed by the head-dim loop, uniform across lanes).
// Grid: x = block of WG invocations, y = head (the kv head for backward_kv), z = batch row.
// Overrides: WG, ROW_GROUPS (1 or 2), COL_GROUPS (1 to 4), GRAD_V, PRIVATE_ACC.

override WG: u32 = 8u;
override ROW_GROUPS: u32 = 2u;
override COL_GROUPS: u32 = 4u;
override GRAD_V: bool = false;
// Row accumulators in `acc_mem` (set by the host when ROW_GROUPS * head_dim <= ACC_MEM, on CPU
// adapters: a private array at a uniform index costs far less than per-lane storage there)
// instead of in `out`.
override PRIVATE_ACC: bool = false;



// Tensors `column` reads.
const SRC_Q = 0u; // q * scale
const SRC_K = 1u;
const SRC_V = 2u;
const SRC_DO = 3u;
// Running max before any key: finite, so exp(max - score) is 0 at the first attended key.
const NEG_BIG = -3.0e38;

// This invocation's batch row and first home row.
var<private> b: u32;
var<private> r0: u32;
// Register blocks: index 4g + h pairs home rows 4g .. 4g+3 with the tile's rows 4h .. 4h+3;
// column c holds, for the four home rows, the value with tile row 4h + c. s holds scores, then
// P or dS; dp holds dP.
var<private> s: array<mat4x4f, 8>;
var<private> dp: array<mat4x4f, 8>;
// Four head-dim elements from the current d0 (`quads`: column dd holds element d0 + dd) of home
// rows 4g .. 4g+3 and of tile rows 4h .. 4h+3.
var<private> home_quads: array<mat4x4f, 2>;
var<private> tile_quads: array<mat4x4f, 4>;
// The current head-dim element of home rows 4g .. 4g+3, of tile rows 4h .. 4h+3, and of the
// out rows 4g .. 4g+3 being accumulated.
var<private> home_cols: array<vec4f, 2>;
var<private> tile_cols: array<vec4f, 4>;
var<private> acc_cols: array<vec4f, 2>;
// Per home row group: segment ids; the online softmax's running max and sum, and the factor the
// last tile rescaled them by (forward); the rows' lse and delta (backward_q).
var<private> home_seg: array<vec4i, 2>;
var<private> run_max: array<vec4f, 2>;
var<private> run_sum: array<vec4f, 2>;
var<private> rescale: array<vec4f, 2>;
var<private> home_lse: array<vec4f, 2>;
var<private> home_delta: array<vec4f, 2>;
// Per tile row group: segment ids and, when the tile holds queries, their lse and delta.
var<private> tile_seg: array<vec4i, 4>;
var<private> tile_lse: array<vec4f, 4>;
var<private> tile_delta: array<vec4f, 4>;
// Whether some pair of the current tile attends.
var<private> tile_live: bool;
// With PRIVATE_ACC: the row accumulators, element d of home row group g at g * head_dim + d.
const ACC_MEM = 256u;
var<private> acc_mem: array<vec4f, ACC_MEM>;

// Index of element d of position t (clamped to the sequence: rows past it are never used) of
// head `head` of a tensor with `heads` heads.
fn index_of(t: u32, heads: u32, head: u32, d: u32) -> u32 {
  return ((b * p.seq + min(t, p.seq - 1u)) * heads + head) * p.head_dim + d;
}

// Heads of tensor src: kv heads for k and v.
fn heads_of(src: u32) -> u32 {
  return select(p.heads, p.kv_heads, src == SRC_K || src == SRC_V);
}

// Element d of out rows 4g .. 4g+3 (head `head` of `heads`).
fn out_column(g: u32, heads: u32, head: u32, d: u32) -> vec4f {
  let t = r0 + 4u * g;
  return vec4f(
    out[index_of(t, heads, head, d)],
    out[index_of(t + 1u, heads, head, d)],
    out[index_of(t + 2u, heads, head, d)],
    out[index_of(t + 3u, heads, head, d)],
  );
}

// Stores x as element d of out rows 4g .. 4g+3, skipping positions past the sequence.
fn store_out_column(g: u32, heads: u32, head: u32, d: u32, x: vec4f) {
  for (var r = 0u; r < 4u; r++) {
    let t = r0 + 4u * g + r;
    if (t < p.seq) { out[index_of(t, heads, head, d)] = x[r]; }
  }
}

// Element d of the accumulators of home row group g (out rows, head `head` of `heads`).
fn acc_get(g: u32, heads: u32, head: u32, d: u32) -> vec4f {
  if (PRIVATE_ACC) { return acc_mem[g * p.head_dim + d]; }
  return out_column(g, heads, head, d);
}

// Sets element d of the accumulators of home row group g (out rows, head `head` of `heads`).
fn acc_set(g: u32, heads: u32, head: u32, d: u32, x: vec4f) {
  if (PRIVATE_ACC) {
    acc_mem[g * p.head_dim + d] = x;
    return;
  }
  store_out_column(g, heads, head, d, x);
}

// Segment id of position t; -1 (padding, never attends) past the sequence end.
fn segment_of(t: u32) -> i32 {
  if (t >= p.seq) { return -1; }
  return segment_ids[b * p.seq + t];
}

// Segment ids of positions t .. t+3.
fn segments_at(t: u32) -> vec4i {
  return vec4i(segment_of(t), segment_of(t + 1u), segment_of(t + 2u), segment_of(t + 3u));
}

// lse (which 0) or delta (which 1) of queries t .. t+3 (clamped to the sequence), head `head`.
fn stats_at(t: u32, head: u32, which: u32) -> vec4f {
  let row = b * p.seq;
  let last = p.seq - 1u;
  return vec4f(
    stats[((row + min(t, last)) * p.heads + head) * 2u + which],
    stats[((row + min(t + 1u, last)) * p.heads + head) * 2u + which],
    stats[((row + min(t + 2u, last)) * p.heads + head) * 2u + which],
    stats[((row + min(t + 3u, last)) * p.heads + head) * 2u + which],
  );
}

// Whether each home row of group g pairs with tile row 4h + c of the tile at j0: the query
// attends to the key. `query_home`: the home rows are the queries.
fn pairs(query_home: bool, g: u32, h: u32, c: u32, j0: u32) -> vec4<bool> {
  let pos = vec4u(r0 + 4u * g) + vec4u(0u, 1u, 2u, 3u);
  let j = vec4u(j0 + 4u * h + c);
  let causal = select(pos <= j, j <= pos, query_home);
  // Query minus key distance, when it is >= 0 (causal).
  let dist = select(j - pos, pos - j, query_home);
  let windowed = vec4<bool>(p.window == 0u) | (dist < vec4u(p.window));
  return causal & windowed & (home_seg[g] == vec4i(tile_seg[h][c])) & (home_seg[g] >= vec4i(0));
}

// m with the entries of non-attending pairs of block (g, h) replaced by `fill`.
fn masked(query_home: bool, g: u32, h: u32, j0: u32, m: mat4x4f, fill: vec4f) -> mat4x4f {
  return mat4x4f(
    select(fill, m[0], pairs(query_home, g, h, 0u, j0)),
    select(fill, m[1], pairs(query_home, g, h, 1u, j0)),
    select(fill, m[2], pairs(query_home, g, h, 2u, j0)),
    select(fill, m[3], pairs(query_home, g, h, 3u, j0)),
  );
}

// The matrix whose column c is x * y[c].
fn outer(x: vec4f, y: vec4f) -> mat4x4f {
  return mat4x4f(x * y.x, x * y.y, x * y.z, x * y.w);
}

// exp(m - x) for every column of m, x broadcast over the columns.
fn exp_minus(m: mat4x4f, x: vec4f) -> mat4x4f {
  return mat4x4f(exp(m[0] - x), exp(m[1] - x), exp(m[2] - x), exp(m[3] - x));
}

// Steps `each_block` applies to every register block (g, h).
const OP_ZERO = 0u; // s = 0
const OP_ZERO_DP = 1u; // dp = 0
const OP_DOT = 2u; // s += home x tile (the current head-dim element)
const OP_DOT_DP = 3u; // dp += home x tile
const OP_LIVE_Q = 4u; // tile_live |= some pair attends (home queries)
const OP_LIVE_KV = 5u; // tile_live |= some pair attends (home keys)
const OP_MAX = 6u; // run_max = max(run_max, attending scores)
const OP_EXP = 7u; // s = exp(s - run_max) where attending, else 0; run_sum += its columns
const OP_DS_Q = 8u; // s = dS * scale (home queries: home_lse, home_delta)
const OP_P_KV = 9u; // s = P (tile queries: tile_lse)
const OP_DS_KV = 10u; // s = dS (tile queries: tile_lse, tile_delta)
const OP_ACC = 11u; // acc_cols += s . tile (home row r gains sum_j s[r, j] * tile row j)
const OP_CAP = 12u; // s = softcap * tanh(s / softcap) (lib/softcap.wgsl)


// The cap's derivative 1 - (score / softcap)^2 at capped scores m (1 without a cap).
fn cap_slope(m: mat4x4f) -> mat4x4f {
  if (p.softcap <= 0.0) { return mat4x4f(vec4f(1.0), vec4f(1.0), vec4f(1.0), vec4f(1.0)); }
  let t = m * (1.0 / p.softcap);
  return mat4x4f(1.0 - t[0] * t[0], 1.0 - t[1] * t[1], 1.0 - t[2] * t[2], 1.0 - t[3] * t[3]);
}

// Step `op` on register block (g, h) of the tile at j0; g and h are literals at every call.
fn block_step(op: u32, g: u32, h: u32, j0: u32) {
  let i = 4u * g + h;
  switch op {
    case OP_ZERO: { s[i] = mat4x4f(); }
    case OP_ZERO_DP: { dp[i] = mat4x4f(); }
    case OP_DOT: { s[i] += outer(home_cols[g], tile_cols[h]); }
    case OP_DOT_DP: { dp[i] += outer(home_cols[g], tile_cols[h]); }
    case OP_LIVE_Q, OP_LIVE_KV: {
      let query_home = op == OP_LIVE_Q;
      let on = pairs(query_home, g, h, 0u, j0) | pairs(query_home, g, h, 1u, j0) |
        pairs(query_home, g, h, 2u, j0) | pairs(query_home, g, h, 3u, j0);
      tile_live = tile_live || any(on);
    }
    case OP_MAX: {
      let m = masked(true, g, h, j0, s[i], run_max[g]);
      run_max[g] = max(max(run_max[g], max(m[0], m[1])), max(m[2], m[3]));
    }
    case OP_EXP: {
      let pr = masked(true, g, h, j0, exp_minus(s[i], run_max[g]), vec4f(0.0));
      s[i] = pr;
      run_sum[g] += pr[0] + pr[1] + pr[2] + pr[3];
    }
    case OP_DS_Q: {
      let pr = exp_minus(s[i], home_lse[g]);
      let delta = home_delta[g];
      let slope = cap_slope(s[i]);
      let ds = mat4x4f(
        pr[0] * (dp[i][0] - delta) * slope[0],
        pr[1] * (dp[i][1] - delta) * slope[1],
        pr[2] * (dp[i][2] - delta) * slope[2],
        pr[3] * (dp[i][3] - delta) * slope[3],
      );
      s[i] = masked(true, g, h, j0, ds * p.scale, vec4f(0.0));
    }
    case OP_CAP: { s[i] = softcapped(s[i], p.softcap); }
    case OP_P_KV, OP_DS_KV: {
      // Column c belongs to tile query 4h + c: its lse and delta are scalars.
      let lse = tile_lse[h];
      var x = mat4x4f(
        exp(s[i][0] - lse.x),
        exp(s[i][1] - lse.y),
        exp(s[i][2] - lse.z),
        exp(s[i][3] - lse.w),
      );
      if (op == OP_DS_KV) {
        let delta = tile_delta[h];
        let slope = cap_slope(s[i]);
        x = mat4x4f(
          x[0] * (dp[i][0] - delta.x) * slope[0],
          x[1] * (dp[i][1] - delta.y) * slope[1],
          x[2] * (dp[i][2] - delta.z) * slope[2],
          x[3] * (dp[i][3] - delta.w) * slope[3],
        );
      }
      s[i] = masked(false, g, h, j0, x, vec4f(0.0));
    }
    default: { acc_cols[g] += s[i] * tile_cols[h]; }
  }
}

// block_step(op, g, h, j0) for every block, with literal g and h.
fn each_block(op: u32, j0: u32) {
  each_block_of_row(op, 0u, j0);
  if (ROW_GROUPS > 1u) { each_block_of_row(op, 1u, j0); }
}

fn each_block_of_row(op: u32, g: u32, j0: u32) {
  block_step(op, g, 0u, j0);
  if (COL_GROUPS > 1u) { block_step(op, g, 1u, j0); }
  if (COL_GROUPS > 2u) { block_step(op, g, 2u, j0); }
  if (COL_GROUPS > 3u) { block_step(op, g, 3u, j0); }
}

// tile_quads[h] = elements d0 .. d0+3 of tile rows j0 + 4h .. j0 + 4h + 3 of src, literal h.
fn load_tile_quads(src: u32, head: u32, j0: u32, d0: u32) {
  tile_quads[0] = quads(src, j0, head, d0);
  if (COL_GROUPS > 1u) { tile_quads[1] = quads(src, j0 + 4u, head, d0); }
  if (COL_GROUPS > 2u) { tile_quads[2] = quads(src, j0 + 8u, head, d0); }
  if (COL_GROUPS > 3u) { tile_quads[3] = quads(src, j0 + 12u, head, d0); }
}

// tile_cols = element d0 + dd of the loaded tile rows (dd a literal).
fn pick_tile_cols(dd: u32) {
  tile_cols[0] = tile_quads[0][dd];
  if (COL_GROUPS > 1u) { tile_cols[1] = tile_quads[1][dd]; }
  if (COL_GROUPS > 2u) { tile_cols[2] = tile_quads[2][dd]; }
  if (COL_GROUPS > 3u) { tile_cols[3] = tile_quads[3][dd]; }
}

// Loads the segment ids of the tile at j0 and, with `query_stats`, its lse and delta (query
// head `head`); returns whether any pair of the tile attends (a tile without one is skipped).
fn load_tile(query_home: bool, query_stats: bool, j0: u32, head: u32) -> bool {
  tile_seg[0] = segments_at(j0);
  if (COL_GROUPS > 1u) { tile_seg[1] = segments_at(j0 + 4u); }
  if (COL_GROUPS > 2u) { tile_seg[2] = segments_at(j0 + 8u); }
  if (COL_GROUPS > 3u) { tile_seg[3] = segments_at(j0 + 12u); }
  if (query_stats) {
    tile_lse[0] = stats_at(j0, head, 0u);
    tile_delta[0] = stats_at(j0, head, 1u);
    if (COL_GROUPS > 1u) {
      tile_lse[1] = stats_at(j0 + 4u, head, 0u);
      tile_delta[1] = stats_at(j0 + 4u, head, 1u);
    }
    if (COL_GROUPS > 2u) {
      tile_lse[2] = stats_at(j0 + 8u, head, 0u);
      tile_delta[2] = stats_at(j0 + 8u, head, 1u);
    }
    if (COL_GROUPS > 3u) {
      tile_lse[3] = stats_at(j0 + 12u, head, 0u);
      tile_delta[3] = stats_at(j0 + 12u, head, 1u);
    }
  }
  tile_live = false;
  each_block(select(OP_LIVE_KV, OP_LIVE_Q, query_home), j0);
  return tile_live;
}

// s (or dp with `to_dp`) = home rows of home_src . tile rows of tile_src over the head dim.
fn dots(to_dp: bool, home_src: u32, home_head: u32, tile_src: u32, tile_head: u32, j0: u32) {
  each_block(select(OP_ZERO, OP_ZERO_DP, to_dp), j0);
  for (var d0 = 0u; d0 < p.head_dim; d0 += 4u) {
    home_quads[0] = quads(home_src, r0, home_head, d0);
    if (ROW_GROUPS > 1u) { home_quads[1] = quads(home_src, r0 + 4u, home_head, d0); }
    load_tile_quads(tile_src, tile_head, j0, d0);
    dot_element(to_dp, 0u, j0);
    dot_element(to_dp, 1u, j0);
    dot_element(to_dp, 2u, j0);
    dot_element(to_dp, 3u, j0);
  }
}

// One head-dim element (d0 + dd, dd a literal; 0 past the head dim) of `dots`.
fn dot_element(to_dp: bool, dd: u32, j0: u32) {
  home_cols[0] = home_quads[0][dd];
  if (ROW_GROUPS > 1u) { home_cols[1] = home_quads[1][dd]; }
  pick_tile_cols(dd);
  each_block(select(OP_DOT, OP_DOT_DP, to_dp), j0);
}

// out rows (head `head` of `heads`) = out * rescale (when `rescaled`) + s . tile rows of src
// (head tile_head): home row r gains sum_j s[r, j] * tile row j.
fn accumulate(rescaled: bool, src: u32, tile_head: u32, j0: u32, heads: u32, head: u32) {
  for (var d0 = 0u; d0 < p.head_dim; d0 += 4u) {
    load_tile_quads(src, tile_head, j0, d0);
    accumulate_element(rescaled, d0, 0u, heads, head);
    accumulate_element(rescaled, d0, 1u, heads, head);
    accumulate_element(rescaled, d0, 2u, heads, head);
    accumulate_element(rescaled, d0, 3u, heads, head);
  }
}

// One head-dim element (d0 + dd, dd a literal; none past the head dim) of `accumulate`.
fn accumulate_element(rescaled: bool, d0: u32, dd: u32, heads: u32, head: u32) {
  let d = d0 + dd;
  if (d >= p.head_dim) { return; }
  pick_tile_cols(dd);
  acc_cols[0] = acc_get(0u, heads, head, d) * select(vec4f(1.0), rescale[0], rescaled);
  if (ROW_GROUPS > 1u) {
    acc_cols[1] = acc_get(1u, heads, head, d) * select(vec4f(1.0), rescale[1], rescaled);
  }
  each_block(OP_ACC, 0u);
  acc_set(0u, heads, head, d, acc_cols[0]);
  if (ROW_GROUPS > 1u) { acc_set(1u, heads, head, d, acc_cols[1]); }
}

// Sets this invocation's accumulators (out rows, head `head` of `heads`) to 0.
fn zero_acc(heads: u32, head: u32) {
  for (var d = 0u; d < p.head_dim; d++) {
    acc_set(0u, heads, head, d, vec4f(0.0));
    if (ROW_GROUPS > 1u) { acc_set(1u, heads, head, d, vec4f(0.0)); }
  }
}

// out rows (head `head` of `heads`) = the accumulators times f0 (row group 0) and f1 (group 1).
// Without PRIVATE_ACC the accumulators are the out rows, so factors of 1 need no pass.
fn finish_rows(heads: u32, head: u32, f0: vec4f, f1: vec4f, unscaled: bool) {
  if (unscaled && !PRIVATE_ACC) { return; }
  for (var d = 0u; d < p.head_dim; d++) {
    store_out_column(0u, heads, head, d, acc_get(0u, heads, head, d) * f0);
    if (ROW_GROUPS > 1u) { store_out_column(1u, heads, head, d, acc_get(1u, heads, head, d) * f1); }
  }
}

// Sets this invocation's batch row, first home row and the home rows' segment ids.
fn locate(wid: vec3u, lid: u32) {
  b = wid.z;
  r0 = (wid.x * WG + lid) * 4u * ROW_GROUPS;
  home_seg[0] = segments_at(r0);
  if (ROW_GROUPS > 1u) { home_seg[1] = segments_at(r0 + 4u); }
}

// First position after the home rows (their queries see no later key).
fn home_end() -> u32 {
  return min(r0 + 4u * ROW_GROUPS, p.seq);
}

// The online softmax of the home queries (head `head`) over every key tile they may see: leaves
// run_max and run_sum, and out rows = sum of exp(score - run_max) v.
fn online_softmax(head: u32) {
  let kv_head = head / (p.heads / p.kv_heads);
  run_max = array<vec4f, 2>(vec4f(NEG_BIG), vec4f(NEG_BIG));
  run_sum = array<vec4f, 2>(vec4f(0.0), vec4f(0.0));
  zero_acc(p.heads, head);
  for (var k0 = 0u; k0 < home_end(); k0 += 4u * COL_GROUPS) {
    if (!load_tile(true, false, k0, 0u)) { continue; }
    dots(false, SRC_Q, head, SRC_K, kv_head, k0);
    if (p.softcap > 0.0) { each_block(OP_CAP, k0); }
    let old_max = run_max;
    each_block(OP_MAX, k0);
    rescale = array<vec4f, 2>(exp(old_max[0] - run_max[0]), exp(old_max[1] - run_max[1]));
    run_sum = array<vec4f, 2>(run_sum[0] * rescale[0], run_sum[1] * rescale[1]);
    each_block(OP_EXP, k0);
    accumulate(true, SRC_V, kv_head, k0, p.heads, head);
  }
}

@compute @workgroup_size(WG)
fn forward(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  locate(wid, lid);
  let head = wid.y;
  online_softmax(head);
  let l = run_sum;
  let f0 = select(vec4f(0.0), 1.0 / l[0], l[0] > vec4f(0.0));
  let f1 = select(vec4f(0.0), 1.0 / l[1], l[1] > vec4f(0.0));
  finish_rows(p.heads, head, f0, f1, false);
  store_lse(0u, head);
  if (ROW_GROUPS > 1u) { store_lse(1u, head); }
}

// The lse of home row group g (head `head`; 0 for rows without keys) into out from p.lse_at.
fn store_lse(g: u32, head: u32) {
  let l = run_sum[g];
  let lse = select(vec4f(0.0), run_max[g] + log(l), l > vec4f(0.0));
  for (var r = 0u; r < 4u; r++) {
    let t = r0 + 4u * g + r;
    if (t < p.seq) { out[p.lse_at + (b * p.seq + t) * p.heads + head] = lse[r]; }
  }
}

@compute @workgroup_size(WG)
fn backward_q(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  locate(wid, lid);
  let head = wid.y;
  let kv_head = head / (p.heads / p.kv_heads);
  home_lse[0] = stats_at(r0, head, 0u);
  home_delta[0] = stats_at(r0, head, 1u);
  if (ROW_GROUPS > 1u) {
    home_lse[1] = stats_at(r0 + 4u, head, 0u);
    home_delta[1] = stats_at(r0 + 4u, head, 1u);
  }
  zero_acc(p.heads, head);
  for (var k0 = 0u; k0 < home_end(); k0 += 4u * COL_GROUPS) {
    if (!load_tile(true, false, k0, 0u)) { continue; }
    dots(false, SRC_Q, head, SRC_K, kv_head, k0);
    if (p.softcap > 0.0) { each_block(OP_CAP, k0); }
    dots(true, SRC_DO, head, SRC_V, kv_head, k0);
    each_block(OP_DS_Q, k0);
    accumulate(false, SRC_K, kv_head, k0, p.heads, head);
  }
  finish_rows(p.heads, head, vec4f(1.0), vec4f(1.0), true);
}

@compute @workgroup_size(WG)
fn backward_kv(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  locate(wid, lid);
  let kv_head = wid.y;
  zero_acc(p.kv_heads, kv_head);
  let group = p.heads / p.kv_heads;
  for (var head = kv_head * group; head < (kv_head + 1u) * group; head++) {
    // Queries from the first home key on: earlier ones see none of its keys.
    for (var q0 = r0; q0 < p.seq; q0 += 4u * COL_GROUPS) {
      if (!load_tile(false, true, q0, head)) { continue; }
      dots(false, SRC_K, kv_head, SRC_Q, head, q0);
      if (p.softcap > 0.0) { each_block(OP_CAP, q0); }
      if (GRAD_V) {
        // dv gains P d_o.
        each_block(OP_P_KV, q0);
        accumulate(false, SRC_DO, head, q0, p.kv_heads, kv_head);
      } else {
        // dk gains dS (q * scale), dS = P (dP - delta), dP = v . d_o.
        dots(true, SRC_V, kv_head, SRC_DO, head, q0);
        each_block(OP_DS_KV, q0);
        accumulate(false, SRC_Q, head, q0, p.kv_heads, kv_head);
      }
    }
  }
  finish_rows(p.kv_heads, kv_head, vec4f(1.0), vec4f(1.0), true);
}
