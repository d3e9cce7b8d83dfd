// Attention of new queries over a KV cache (KV-cached generation): an online softmax over the
// cached keys in f32 (no [Tn, Tmax] score matrix), optionally split over the key range
// (flash-decoding: partial results per key chunk, merged by `combine`). No backward.
// Shapes: q, out [S, Tn, H, D]; k_cache, v_cache [S, Tmax, Hkv, D]; positions [S, Tn] (i32);
// parts [S, Tn, H, PARTS, 4 + D]. Query (s, t) with p = positions[s, t] >= 0 attends to cache
// rows max(0, p + 1 - window) ..= min(p, Tmax - 1) of slot s (a sliding window; window 2^32 - 1:
// every row from 0); p < 0 (padding) gives a zero row. Query head h reads
// kv head h / (H / Hkv) (HF's repeat_kv). score = scale * q.k; q is scaled as it is read; with
// p.softcap > 0 (Gemma 2) the score is then softcap * tanh(score / softcap).
// Bindings (every entry point): q, k_cache, v_cache, positions, parts (read), out (read_write),
// params. Callers bind q where a binding is unused. attend4, for head dims that are multiples of
// 4, is attend reading and writing four head-dim elements at a time (q, the caches and out bound
// as vec4 arrays).
//
// attend: grid x = row block * SPLITS + split, y = kv head, z = slot group (SLOT_LANES slots, one
// per lane group; the last group's lanes past the slots store nothing). The home rows of (slot,
// kv head) are its Tn * (H / Hkv) pairs (t, query head of the group), so every read of a cached
// row serves all the query heads that share it. Invocation row lane + ROW_LANES * key lane (+
// ROW_LANES * KEY_LANES * slot lane) owns the 4 * ROW_GROUPS home rows from (block * ROW_LANES +
// row lane) * 4 * ROW_GROUPS of its slot and
// walks the keys of its part c = split * KEY_LANES + key lane, [c * chunk, (c + 1) * chunk),
// 4 * COL_GROUPS at a time (a tile), keeping the tile's scores in registers as 4x4 matrices built
// from outer products, one head-dim element at a time. Its accumulators live in storage, updated
// once per tile: with PARTS = 1 the out rows (finally scaled to softmax(scores) v); else its
// part's record of each home row in parts (bound as out): (max m, sum l of exp(score - m), two
// unused, sum of exp(score - m) v); the first tile writes them, without reading. A record whose row does not
// reach the part is written but never read.
// combine (PARTS > 1): one invocation per four head-dim elements of a row of out (the last of a
// row may hold fewer), index = (wid.x + wid.y * nwg.x) * WG + lid: merges the parts its row
// reaches (0 ..= min(p, Tmax - 1) / chunk), reading each part's m and l once for the four.
//
// As in attention.wgsl (CPU adapters, where every memory read costs one load per SIMD lane): the
// head dim is a runtime loop, so one pipeline serves every head dim (two: attend4 for multiples
// of 4, attend for the others); no workgroup memory; the
// register blocks are indexed by literals only (`each_block`), as a loop index would put them in
// memory on llvmpipe.
// Overrides: ROW_LANES, KEY_LANES, SLOT_LANES, SPLITS, ROW_GROUPS (1 or 2), COL_GROUPS (1 to 4).

// #include softcap

override ROW_LANES: u32 = 1u;
override KEY_LANES: u32 = 8u;
override SLOT_LANES: u32 = 1u;
override SPLITS: u32 = 1u;
override ROW_GROUPS: u32 = 2u;
override COL_GROUPS: u32 = 4u;
// Derived (never set by the host): invocations per slot and in all, and parts per row.
override LANES: u32 = ROW_LANES * KEY_LANES;
override WG: u32 = LANES * SLOT_LANES;
override PARTS: u32 = SPLITS * KEY_LANES;

struct Params {
  slots: u32,
  tn: u32,       // queries per slot
  tmax: u32,     // cache length
  heads: u32,
  kv_heads: u32,
  head_dim: u32,
  chunk: u32,    // keys per part
  scale: f32,
  window: u32,   // keys a query attends to at most, itself included
  softcap: f32,  // scores become softcap * tanh(score / softcap); 0: none
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k_cache: array<f32>;
@group(0) @binding(2) var<storage, read> v_cache: array<f32>;
@group(0) @binding(3) var<storage, read> positions: array<i32>;
@group(0) @binding(4) var<storage, read> parts: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;
// The same buffers as vec4s, for attend4 (never used by the same entry point as the above).
@group(0) @binding(0) var<storage, read> q4: array<vec4f>;
@group(0) @binding(1) var<storage, read> k_cache4: array<vec4f>;
@group(0) @binding(2) var<storage, read> v_cache4: array<vec4f>;
@group(0) @binding(5) var<storage, read_write> out4: array<vec4f>;

// Running max before any key: finite, so exp(max - score) is 0 at the first attended key.
const NEG_BIG = -3.0e38;
// Floats before the accumulators of a part record: m, l and two unused (keeps them 16-byte
// aligned for attend4).
const RECORD_HEAD = 4u;

// This invocation's slot (clamped to the last), whether the slot exists, its kv head and the end
// of its part's keys.
var<private> slot: u32;
var<private> slot_valid: bool;
var<private> kv_head: u32;
var<private> part_end: u32;
// Per home row group g (rows 4g .. 4g+3): float offsets of the rows' queries and accumulators,
// whether each row exists, the last key each attends to (-1: none), and the online softmax's
// running max and sum and the factor the last tile rescaled them by.
var<private> q_at: array<vec4u, 2>;
var<private> acc_at: array<vec4u, 2>;
var<private> home_valid: array<vec4<bool>, 2>;
var<private> home_last: array<vec4i, 2>;
var<private> home_first: array<vec4i, 2>;
var<private> run_max: array<vec4f, 2>;
var<private> run_sum: array<vec4f, 2>;
var<private> rescale: array<vec4f, 2>;
// Register blocks: index 4g + h pairs home rows 4g .. 4g+3 with tile keys 4h .. 4h+3; column c
// holds, for the four home rows, the value with key 4h + c (scores, then P).
var<private> s: array<mat4x4f, 8>;
// The current head-dim element of home rows 4g .. 4g+3 (queries), of tile keys 4h .. 4h+3, and
// of the accumulators of home rows 4g .. 4g+3.
var<private> home_cols: array<vec4f, 2>;
var<private> tile_cols: array<vec4f, 4>;
var<private> acc_cols: array<vec4f, 2>;
// attend4's: head-dim elements d .. d+3 of home rows 4g .. 4g+3 (column r: row 4g + r), of tile
// keys 4h .. 4h+3 (column c: key 4h + c) and of the accumulators of home rows 4g .. 4g+3.
var<private> home_quads: array<mat4x4f, 2>;
var<private> tile_quads: array<mat4x4f, 4>;
var<private> acc_quads: array<mat4x4f, 2>;

// First cache row the query at row `st` = s * Tn + t attends to (its window's start).
fn first_key(st: u32) -> i32 {
  let reach = u32(max(positions[st], 0)) + 1u;
  return i32(select(0u, reach - p.window, reach > p.window));
}

// Last cache row the query at row `st` = s * Tn + t attends to; -1 for padding.
fn last_key(st: u32) -> i32 {
  return min(positions[st], i32(p.tmax) - 1);
}

// Float offset of element d of cache row `key` (clamped to the cache: keys past it are never
// used) of this invocation's slot and kv head.
fn cache_at(key: u32, d: u32) -> u32 {
  return ((slot * p.tmax + min(key, p.tmax - 1u)) * p.kv_heads + kv_head) * p.head_dim + d;
}

// Element d of cache rows j .. j+3 of v_cache (k_cache when `values` is false).
fn cache_column(values: bool, j: u32, d: u32) -> vec4f {
  let at = vec4u(cache_at(j, d), cache_at(j + 1u, d), cache_at(j + 2u, d), cache_at(j + 3u, d));
  if (values) { return vec4f(v_cache[at.x], v_cache[at.y], v_cache[at.z], v_cache[at.w]); }
  return vec4f(k_cache[at.x], k_cache[at.y], k_cache[at.z], k_cache[at.w]);
}

// Element d of the queries of home row group g, times the scale.
fn query_column(g: u32, d: u32) -> vec4f {
  let at = q_at[g] + vec4u(d);
  return vec4f(q[at.x], q[at.y], q[at.z], q[at.w]) * p.scale;
}

// Element d of the accumulators of home row group g.
fn acc_column(g: u32, d: u32) -> vec4f {
  let at = acc_at[g] + vec4u(d);
  return vec4f(out[at.x], out[at.y], out[at.z], out[at.w]);
}

// Stores x as element d of the accumulators of home row group g (of the rows that exist).
fn store_acc_column(g: u32, d: u32, x: vec4f) {
  let at = acc_at[g] + vec4u(d);
  for (var r = 0u; r < 4u; r++) {
    if (home_valid[g][r]) { out[at[r]] = x[r]; }
  }
}

// attend4's loads and stores: elements d .. d+3 (d a multiple of 4) of the cache rows j .. j+3
// of v_cache (k_cache when `values` is false), of the queries of home row group g (times the
// scale) and of its accumulators, as columns.
fn cache_quads(values: bool, j: u32, d: u32) -> mat4x4f {
  let at = vec4u(cache_at(j, d), cache_at(j + 1u, d), cache_at(j + 2u, d), cache_at(j + 3u, d)) / 4u;
  if (values) { return mat4x4f(v_cache4[at.x], v_cache4[at.y], v_cache4[at.z], v_cache4[at.w]); }
  return mat4x4f(k_cache4[at.x], k_cache4[at.y], k_cache4[at.z], k_cache4[at.w]);
}

fn query_quads(g: u32, d: u32) -> mat4x4f {
  let at = (q_at[g] + vec4u(d)) / 4u;
  return mat4x4f(q4[at.x], q4[at.y], q4[at.z], q4[at.w]) * p.scale;
}

fn acc_quads_at(g: u32, d: u32) -> mat4x4f {
  let at = (acc_at[g] + vec4u(d)) / 4u;
  return mat4x4f(out4[at.x], out4[at.y], out4[at.z], out4[at.w]);
}

fn store_acc_quads(g: u32, d: u32, x: mat4x4f) {
  let at = (acc_at[g] + vec4u(d)) / 4u;
  for (var r = 0u; r < 4u; r++) {
    if (home_valid[g][r]) { out4[at[r]] = x[r]; }
  }
}

// m with column r scaled by f[r].
fn scaled_columns(m: mat4x4f, f: vec4f) -> mat4x4f {
  return mat4x4f(m[0] * f.x, m[1] * f.y, m[2] * f.z, m[3] * f.w);
}

// tile_quads[h] = elements d .. d+3 of cache rows j0 + 4h .. j0 + 4h + 3, with literal h.
fn load_tile_quads(values: bool, j0: u32, d: u32) {
  tile_quads[0] = cache_quads(values, j0, d);
  if (COL_GROUPS > 1u) { tile_quads[1] = cache_quads(values, j0 + 4u, d); }
  if (COL_GROUPS > 2u) { tile_quads[2] = cache_quads(values, j0 + 8u, d); }
  if (COL_GROUPS > 3u) { tile_quads[3] = cache_quads(values, j0 + 12u, d); }
}

// Whether each home row of group g attends to key j0 + 4h + c of the tile at j0.
fn pairs(g: u32, h: u32, c: u32, j0: u32) -> vec4<bool> {
  let key = j0 + 4u * h + c;
  let k = vec4i(i32(key));
  return (k <= home_last[g]) & (k >= home_first[g]) & vec4<bool>(key < part_end);
}

// m with the entries of non-attending pairs of block (g, h) replaced by `fill`.
fn masked(g: u32, h: u32, j0: u32, m: mat4x4f, fill: vec4f) -> mat4x4f {
  return mat4x4f(
    select(fill, m[0], pairs(g, h, 0u, j0)),
    select(fill, m[1], pairs(g, h, 1u, j0)),
    select(fill, m[2], pairs(g, h, 2u, j0)),
    select(fill, m[3], pairs(g, h, 3u, j0)),
  );
}

// Steps `each_block` applies to every register block (g, h).
const OP_ZERO = 0u; // s = 0
const OP_DOT = 1u; // s += home x tile (the current head-dim element)
const OP_MAX = 2u; // run_max = max(run_max, attending scores)
const OP_EXP = 3u; // s = exp(s - run_max) where attending, else 0; run_sum += its columns
const OP_ACC = 4u; // acc_cols += s . tile (home row r gains sum_j s[r, j] * tile key j)
const OP_DOT4 = 5u; // s += home quads^T tile quads (four head-dim elements)
const OP_ACC4 = 6u; // acc_quads += tile quads s^T (four head-dim elements)
const OP_CAP = 7u; // s = softcap * tanh(s / softcap) (lib/softcap.wgsl)

// Step `op` on register block (g, h) of the tile at j0; g and h are literals at every call.
fn block_step(op: u32, g: u32, h: u32, j0: u32) {
  let i = 4u * g + h;
  switch op {
    case OP_ZERO: { s[i] = mat4x4f(); }
    case OP_DOT: {
      let x = home_cols[g];
      let y = tile_cols[h];
      s[i] += mat4x4f(x * y.x, x * y.y, x * y.z, x * y.w);
    }
    case OP_MAX: {
      let m = masked(g, h, j0, s[i], run_max[g]);
      run_max[g] = max(max(run_max[g], max(m[0], m[1])), max(m[2], m[3]));
    }
    case OP_EXP: {
      let x = run_max[g];
      let e = mat4x4f(exp(s[i][0] - x), exp(s[i][1] - x), exp(s[i][2] - x), exp(s[i][3] - x));
      let pr = masked(g, h, j0, e, vec4f(0.0));
      s[i] = pr;
      run_sum[g] += pr[0] + pr[1] + pr[2] + pr[3];
    }
    case OP_DOT4: { s[i] += transpose(home_quads[g]) * tile_quads[h]; }
    case OP_ACC4: { acc_quads[g] += tile_quads[h] * transpose(s[i]); }
    case OP_CAP: { s[i] = softcapped(s[i], p.softcap); }
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

// tile_cols[h] = element d of cache rows j0 + 4h .. j0 + 4h + 3, with literal h.
fn load_tile_cols(values: bool, j0: u32, d: u32) {
  tile_cols[0] = cache_column(values, j0, d);
  if (COL_GROUPS > 1u) { tile_cols[1] = cache_column(values, j0 + 4u, d); }
  if (COL_GROUPS > 2u) { tile_cols[2] = cache_column(values, j0 + 8u, d); }
  if (COL_GROUPS > 3u) { tile_cols[3] = cache_column(values, j0 + 12u, d); }
}

// Sets up home row group g, rows first + 4g .. first + 4g + 3, of this invocation's part.
fn locate_group(g: u32, first: u32, part: u32) {
  let group = p.heads / p.kv_heads;
  let home_rows = p.tn * group;
  for (var r = 0u; r < 4u; r++) {
    let i = first + 4u * g + r;
    // Rows past the end read (and never store) the last row.
    let row = min(i, home_rows - 1u);
    let st = slot * p.tn + row / group;
    let out_row = st * p.heads + kv_head * group + row % group;
    q_at[g][r] = out_row * p.head_dim;
    let record = (out_row * PARTS + part) * (p.head_dim + RECORD_HEAD) + RECORD_HEAD;
    acc_at[g][r] = select(out_row * p.head_dim, record, PARTS > 1u);
    home_valid[g][r] = i < home_rows && slot_valid;
    home_last[g][r] = select(-1, last_key(st), home_valid[g][r]);
    home_first[g][r] = select(i32(p.tmax), first_key(st), home_valid[g][r]);
  }
}

// Sets up this invocation's slot, kv head, part and home rows and the online softmax; returns
// the first key its rows attend to in its part and the end of those keys there.
fn begin_part(wid: vec3u, lane: u32) -> vec2u {
  let slot_index = wid.z * SLOT_LANES + lane / LANES;
  slot = min(slot_index, p.slots - 1u);
  slot_valid = slot_index < p.slots;
  kv_head = wid.y;
  let lid = lane % LANES;
  let part = (wid.x % SPLITS) * KEY_LANES + lid / ROW_LANES;
  let first = ((wid.x / SPLITS) * ROW_LANES + lid % ROW_LANES) * 4u * ROW_GROUPS;
  let begin = part * p.chunk;
  part_end = begin + p.chunk;
  locate_group(0u, first, part);
  var last = home_last[0];
  var earliest = home_first[0];
  if (ROW_GROUPS > 1u) {
    locate_group(1u, first, part);
    last = max(last, home_last[1]);
    earliest = min(earliest, home_first[1]);
  }
  run_max = array<vec4f, 2>(vec4f(NEG_BIG), vec4f(NEG_BIG));
  run_sum = array<vec4f, 2>(vec4f(0.0), vec4f(0.0));
  let start = u32(min(min(earliest.x, earliest.y), min(earliest.z, earliest.w)));
  return vec2u(
    max(begin, start),
    min(part_end, u32(max(max(last.x, last.y), max(last.z, last.w)) + 1)),
  );
}

// The online softmax's step over the scores of the tile at j0 (capped first with a softcap): new
// running max, the factor the accumulators are rescaled by, s = P.
fn softmax_tile(j0: u32) {
  if (p.softcap > 0.0) { each_block(OP_CAP, j0); }
  let old_max = run_max;
  each_block(OP_MAX, j0);
  rescale = array<vec4f, 2>(exp(old_max[0] - run_max[0]), exp(old_max[1] - run_max[1]));
  run_sum = array<vec4f, 2>(run_sum[0] * rescale[0], run_sum[1] * rescale[1]);
  each_block(OP_EXP, j0);
}

// 1 / l of home row group g (0 for rows that attend to nothing): the final scale of out.
fn final_scale(g: u32) -> vec4f {
  return select(vec4f(0.0), 1.0 / run_sum[g], run_sum[g] > vec4f(0.0));
}

// attend's steps, one head-dim element d at a time: store x as the accumulators of both home
// row groups; add the scores of element d of the tile at j0; add P times element d of its values
// to the accumulators (rescaled first unless this is the part's first tile, which writes them).
fn store_cols(d: u32, x: array<vec4f, 2>) {
  store_acc_column(0u, d, x[0]);
  if (ROW_GROUPS > 1u) { store_acc_column(1u, d, x[1]); }
}

fn score_cols(j0: u32, d: u32) {
  home_cols[0] = query_column(0u, d);
  if (ROW_GROUPS > 1u) { home_cols[1] = query_column(1u, d); }
  load_tile_cols(false, j0, d);
  each_block(OP_DOT, j0);
}

fn accumulate_cols(j0: u32, d: u32, first_tile: bool) {
  load_tile_cols(true, j0, d);
  acc_cols = array<vec4f, 2>(vec4f(0.0), vec4f(0.0));
  if (!first_tile) {
    acc_cols[0] = acc_column(0u, d) * rescale[0];
    if (ROW_GROUPS > 1u) { acc_cols[1] = acc_column(1u, d) * rescale[1]; }
  }
  each_block(OP_ACC, j0);
  store_cols(d, acc_cols);
}

// The end of attend: the part records' m and l, or (one part) out = accumulators / l.
fn finish_cols() {
  if (PARTS > 1u) {
    store_record_stats(0u);
    if (ROW_GROUPS > 1u) { store_record_stats(1u); }
    return;
  }
  let f = array<vec4f, 2>(final_scale(0u), final_scale(1u));
  for (var d = 0u; d < p.head_dim; d++) {
    store_acc_column(0u, d, acc_column(0u, d) * f[0]);
    if (ROW_GROUPS > 1u) { store_acc_column(1u, d, acc_column(1u, d) * f[1]); }
  }
}

// attend: one head-dim element at a time (any head dim).
@compute @workgroup_size(WG)
fn attend(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let keys = begin_part(wid, lid);
  // The first tile stores every home row's accumulators; with no tile they are zeros.
  if (keys.y <= keys.x) {
    for (var d = 0u; d < p.head_dim; d++) { store_cols(d, array<vec4f, 2>()); }
  }
  for (var j0 = keys.x; j0 < keys.y; j0 += 4u * COL_GROUPS) {
    each_block(OP_ZERO, j0);
    for (var d = 0u; d < p.head_dim; d++) { score_cols(j0, d); }
    softmax_tile(j0);
    for (var d = 0u; d < p.head_dim; d++) { accumulate_cols(j0, d, j0 == keys.x); }
  }
  finish_cols();
}

// attend4's steps, as attend's for the four head-dim elements from d (a multiple of 4): a
// structural twin of them, since one entry point may not use both views of a binding. The
// blocks are 4x4 matrices: a group's query quads and a tile's key or value quads as columns (row
// or key c in column c), so scores += transpose(queries) * keys, and the accumulators (row r's
// quad in column r) += values * transpose(P).
fn store_quads(d: u32, x: array<mat4x4f, 2>) {
  store_acc_quads(0u, d, x[0]);
  if (ROW_GROUPS > 1u) { store_acc_quads(1u, d, x[1]); }
}

fn score_quads(j0: u32, d: u32) {
  home_quads[0] = query_quads(0u, d);
  if (ROW_GROUPS > 1u) { home_quads[1] = query_quads(1u, d); }
  load_tile_quads(false, j0, d);
  each_block(OP_DOT4, j0);
}

fn accumulate_quads(j0: u32, d: u32, first_tile: bool) {
  load_tile_quads(true, j0, d);
  acc_quads = array<mat4x4f, 2>(mat4x4f(), mat4x4f());
  if (!first_tile) {
    acc_quads[0] = scaled_columns(acc_quads_at(0u, d), rescale[0]);
    if (ROW_GROUPS > 1u) { acc_quads[1] = scaled_columns(acc_quads_at(1u, d), rescale[1]); }
  }
  each_block(OP_ACC4, j0);
  store_quads(d, acc_quads);
}

fn finish_quads() {
  if (PARTS > 1u) {
    store_record_stats4(0u);
    if (ROW_GROUPS > 1u) { store_record_stats4(1u); }
    return;
  }
  let f = array<vec4f, 2>(final_scale(0u), final_scale(1u));
  for (var d = 0u; d < p.head_dim; d += 4u) {
    store_acc_quads(0u, d, scaled_columns(acc_quads_at(0u, d), f[0]));
    if (ROW_GROUPS > 1u) { store_acc_quads(1u, d, scaled_columns(acc_quads_at(1u, d), f[1])); }
  }
}

// attend4 (head dim a multiple of 4): attend four head-dim elements at a time, each row's four
// loaded as one vec4 (on llvmpipe a vec4 load per lane costs far less than four scalar ones).
@compute @workgroup_size(WG)
fn attend4(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let keys = begin_part(wid, lid);
  // As attend: with no tile, the accumulators are zeros.
  if (keys.y <= keys.x) {
    for (var d = 0u; d < p.head_dim; d += 4u) { store_quads(d, array<mat4x4f, 2>()); }
  }
  for (var j0 = keys.x; j0 < keys.y; j0 += 4u * COL_GROUPS) {
    each_block(OP_ZERO, j0);
    for (var d = 0u; d < p.head_dim; d += 4u) { score_quads(j0, d); }
    softmax_tile(j0);
    for (var d = 0u; d < p.head_dim; d += 4u) { accumulate_quads(j0, d, j0 == keys.x); }
  }
  finish_quads();
}

// The m and l of the part records of home row group g, just before their accumulators.
fn store_record_stats(g: u32) {
  for (var r = 0u; r < 4u; r++) {
    if (home_valid[g][r]) {
      out[acc_at[g][r] - RECORD_HEAD] = run_max[g][r];
      out[acc_at[g][r] - RECORD_HEAD + 1u] = run_sum[g][r];
    }
  }
}

// store_record_stats for attend4: m and l as the first two floats of the records' 16-byte head.
fn store_record_stats4(g: u32) {
  for (var r = 0u; r < 4u; r++) {
    if (home_valid[g][r]) {
      out4[(acc_at[g][r] - RECORD_HEAD) / 4u] = vec4f(run_max[g][r], run_sum[g][r], 0.0, 0.0);
    }
  }
}

@compute @workgroup_size(WG)
fn combine(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let quads = (p.head_dim + 3u) / 4u;
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= p.slots * p.tn * p.heads * quads) { return; }
  let row = i / quads;
  let d0 = (i % quads) * 4u;
  let count = min(4u, p.head_dim - d0); // elements of this quad
  let at_out = row * p.head_dim + d0;
  let last = last_key(row / p.heads);
  var x = vec4f(0.0);
  if (last >= 0) {
    let record = p.head_dim + RECORD_HEAD;
    let used = u32(last) / p.chunk + 1u;
    let base = row * PARTS * record;
    var m = NEG_BIG;
    for (var c = 0u; c < used; c++) { m = max(m, parts[base + c * record]); }
    var l = 0.0;
    for (var c = 0u; c < used; c++) {
      let at = base + c * record;
      let w = exp(parts[at] - m);
      l += w * parts[at + 1u];
      // Elements past the quad's count read the record's last element instead (unused).
      let e = at + RECORD_HEAD + d0;
      let e_last = at + RECORD_HEAD - 1u + p.head_dim;
      x += w * vec4f(parts[e], parts[min(e + 1u, e_last)], parts[min(e + 2u, e_last)],
        parts[min(e + 3u, e_last)]);
    }
    // A window may leave a row no key in the cache (a position past it): a zero row.
    x = select(vec4f(0.0), x / l, l > 0.0);
  }
  out[at_out] = x.x;
  if (count > 1u) { out[at_out + 1u] = x.y; }
  if (count > 2u) { out[at_out + 2u] = x.z; }
  if (count > 3u) { out[at_out + 3u] = x.w; }
}
