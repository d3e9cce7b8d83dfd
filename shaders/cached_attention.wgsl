// Attention of new queries over a KV cache (KV-cached generation): an online softmax over the
// cached keys in f32 (no [Tn, Tmax] score matrix), optionally split over the key range
// (flash-decoding: partial results per key chunk, merged by `combine`). No backward.
// Shapes: q, out [S, Tn, H, D]; k_cache, v_cache [S, Tmax, Hkv, D]; positions [S, Tn] (i32);
// parts [S, Tn, H, PARTS, D + 2]. Query (s, t) with p = positions[s, t] >= 0 attends to cache
// rows 0 ..= min(p, Tmax - 1) of slot s; p < 0 (padding) gives a zero row. Query head h reads
// kv head h / (H / Hkv) (HF's repeat_kv). score = scale * q.k; q is scaled as it is read.
// Bindings (both entry points): q, k_cache, v_cache, positions, parts (read), out (write),
// params. Callers bind q where a binding is unused.
// attend: grid x = row block * SPLITS + split, y = kv head, z = slot. The home rows of (slot, kv
//   head) are the Tn * (H / Hkv) pairs (t, query head of the group), so one read of a cached row
//   serves every query head that shares it. Invocation lid = row lane + ROW_LANES * key lane
//   owns ROWS home rows (block * ROW_LANES * ROWS + r * ROW_LANES + row lane) in private
//   registers and walks the keys of its part c = split * KEY_LANES + key lane, [c * chunk,
//   (c + 1) * chunk), reading them straight from storage, each read feeding ROWS rows. With
//   PARTS = 1 it writes out = softmax(scores) v; else, for each row that reaches the part,
//   parts = (max m, sum l of exp(score - m), sum of exp(score - m) v).
// combine (PARTS > 1): one invocation per element of out, index = (wid.x + wid.y * nwg.x) * WG +
//   lid: merges the parts a row reaches (0 ..= min(p, Tmax - 1) / chunk).
// Overrides: HEAD_DIM (D), ROW_LANES, KEY_LANES, ROWS (ROWS * VEC <= BLOCK_CAP, ROWS <= MAX_ROWS),
// SPLITS.

override HEAD_DIM: u32 = 64u;
override ROW_LANES: u32 = 64u;
override KEY_LANES: u32 = 1u;
override ROWS: u32 = 1u;
override SPLITS: u32 = 1u;
// Derived (never set by the host): invocations, parts per row, vec4s per row (the last
// zero-padded), floats per part record.
override WG: u32 = ROW_LANES * KEY_LANES;
override PARTS: u32 = SPLITS * KEY_LANES;
override VEC: u32 = (HEAD_DIM + 3u) / 4u;
override RECORD: u32 = HEAD_DIM + 2u;

// Capacities of private arrays: an invocation's ROWS rows of VEC vec4s (row r at r * VEC), and
// per-row values.
const BLOCK_CAP = 128u;
const MAX_ROWS = 8u;
alias Block = array<vec4f, BLOCK_CAP>;
alias PerRow = array<f32, MAX_ROWS>;
// Running max before any key: finite, so exp(max - score) is 0 at the first attended key.
const NEG_BIG = -3.0e38;

struct Params {
  slots: u32,
  tn: u32,       // queries per slot
  tmax: u32,     // cache length
  heads: u32,
  kv_heads: u32,
  chunk: u32,    // keys per part
  scale: f32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k_cache: array<f32>;
@group(0) @binding(2) var<storage, read> v_cache: array<f32>;
@group(0) @binding(3) var<storage, read> positions: array<i32>;
@group(0) @binding(4) var<storage, read> parts: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

// Last cache row the query at row `st` = s * Tn + t attends to; -1 for padding.
fn last_key(st: u32) -> i32 {
  return min(positions[st], i32(p.tmax) - 1);
}

// Elements 4c .. 4c + 3 of `src` (k_cache when `values` is false, else v_cache) at float offset
// `base`; 0 past the head dim.
fn cache_vec(values: bool, base: u32, c: u32) -> vec4f {
  var x = vec4f();
  for (var e = 0u; e < 4u; e++) {
    let d = 4u * c + e;
    if (d < HEAD_DIM) {
      if (values) { x[e] = v_cache[base + d]; } else { x[e] = k_cache[base + d]; }
    }
  }
  return x;
}

// Elements 4c .. 4c + 3 of the query row at float offset `base`, times the scale.
fn query_vec(base: u32, c: u32) -> vec4f {
  var x = vec4f();
  for (var e = 0u; e < 4u; e++) {
    let d = 4u * c + e;
    if (d < HEAD_DIM) { x[e] = q[base + d] * p.scale; }
  }
  return x;
}

// Stores element d of the output row at float offset `base` when d is inside the head dim.
fn store(at: u32, d: u32, x: f32) {
  if (d < HEAD_DIM) { out[at + d] = x; }
}

@compute @workgroup_size(WG)
fn attend(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let group = p.heads / p.kv_heads;
  let home_rows = p.tn * group;
  let lane = lid % ROW_LANES;
  let part = (wid.x % SPLITS) * KEY_LANES + lid / ROW_LANES;
  let first = (wid.x / SPLITS) * ROW_LANES * ROWS + lane;
  let kv_head = wid.y;
  let s = wid.z;

  // Home rows: their output row (in units of D), last key (-1: none) and scaled query.
  var qv: Block;
  var acc: Block;
  var m: PerRow;
  var l: PerRow;
  var out_row: array<u32, MAX_ROWS>;
  var last: array<i32, MAX_ROWS>;
  var end = 0u;
  for (var r = 0u; r < ROWS; r++) {
    let i = first + r * ROW_LANES;
    m[r] = NEG_BIG;
    last[r] = -1;
    if (i < home_rows) {
      let st = s * p.tn + i / group;
      out_row[r] = st * p.heads + kv_head * group + i % group;
      last[r] = last_key(st);
      end = max(end, u32(last[r] + 1));
      for (var c = 0u; c < VEC; c++) { qv[r * VEC + c] = query_vec(out_row[r] * HEAD_DIM, c); }
    }
  }

  let begin = part * p.chunk;
  let stop = min(begin + p.chunk, end);
  for (var key = begin; key < stop; key++) {
    let base = ((s * p.tmax + key) * p.kv_heads + kv_head) * HEAD_DIM;
    // Explicitly zeroed: naga declares a loop's locals once, at function entry.
    var sums = array<vec4f, MAX_ROWS>();
    for (var c = 0u; c < VEC; c++) {
      let kc = cache_vec(false, base, c);
      for (var r = 0u; r < ROWS; r++) { sums[r] += qv[r * VEC + c] * kc; }
    }
    var pr: PerRow;
    for (var r = 0u; r < ROWS; r++) {
      let score = sums[r].x + sums[r].y + sums[r].z + sums[r].w;
      let attended = i32(key) <= last[r];
      if (attended && score > m[r]) {
        // A new max: rescale what was summed so far (rare after the first keys).
        let rescale = exp(m[r] - score);
        l[r] *= rescale;
        for (var c = 0u; c < VEC; c++) { acc[r * VEC + c] *= rescale; }
        m[r] = score;
      }
      pr[r] = select(0.0, exp(score - m[r]), attended);
      l[r] += pr[r];
    }
    for (var c = 0u; c < VEC; c++) {
      let vc = cache_vec(true, base, c);
      for (var r = 0u; r < ROWS; r++) { acc[r * VEC + c] += pr[r] * vc; }
    }
  }

  for (var r = 0u; r < ROWS; r++) {
    if (first + r * ROW_LANES >= home_rows) { continue; }
    var at: u32;
    var factor = 1.0;
    if (PARTS == 1u) {
      at = out_row[r] * HEAD_DIM;
      factor = select(0.0, 1.0 / l[r], l[r] > 0.0);
    } else {
      // A part the row does not reach is neither written nor read by combine.
      if (i32(begin) > last[r]) { continue; }
      at = (out_row[r] * PARTS + part) * RECORD;
      out[at] = m[r];
      out[at + 1u] = l[r];
      at += 2u;
    }
    for (var c = 0u; c < VEC; c++) {
      let x = acc[r * VEC + c] * factor;
      for (var e = 0u; e < 4u; e++) { store(at, 4u * c + e, x[e]); }
    }
  }
}

@compute @workgroup_size(WG)
fn combine(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * nwg.x) * WG + lid;
  if (i >= p.slots * p.tn * p.heads * HEAD_DIM) { return; }
  let row = i / HEAD_DIM;
  let d = i % HEAD_DIM;
  let last = last_key(row / p.heads);
  if (last < 0) {
    out[i] = 0.0;
    return;
  }
  let used = u32(last) / p.chunk + 1u;
  let base = row * PARTS * RECORD;
  var m = NEG_BIG;
  for (var c = 0u; c < used; c++) { m = max(m, parts[base + c * RECORD]); }
  var l = 0.0;
  var x = 0.0;
  for (var c = 0u; c < used; c++) {
    let at = base + c * RECORD;
    let w = exp(parts[at] - m);
    l += w * parts[at + 1u];
    x += w * parts[at + 2u + d];
  }
  out[i] = x / l;
}
