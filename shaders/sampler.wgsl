// Token sampler over logits z viewed as [rows, cols] (cols: the vocabulary), one workgroup per
// row (row = wid.x + wid.y * nwg.x, 2-D grid when rows > 65535); WG must be a power of two.
// Per-row settings [rows, 3] f32 = (temperature t, top_k, top_p); rng [rows, 2] u32 = (seed,
// step). No sort: top-k and top-p are thresholds on the logits found by an 8-way search.
// Logits must be finite (-inf allowed when the row has a finite one); NaN is not handled.
//
// Entry points and bindings (storage 0..3, params at 4 = (rows, cols)):
//   sample:  z [rows, cols] (read), settings (read), rng (read), out [rows] u32: token ids.
//            t <= 0: greedy, the first index of the row max. t > 0: weights w = exp((z - m) / t)
//            (m: row max); kept = tokens with z >= max(theta_k, theta_p), where theta_k is the
//            k-th largest logit when 1 <= top_k < cols (ties at it are all kept) and theta_p is
//            the largest logit whose tokens z >= theta_p carry at least top_p of the weight kept
//            by top-k, when top_p < 1 (ties kept; top_p <= 0 keeps the row max only). Then
//            inverse CDF in index order: u = uniform(seed, step) in [0, 1), the first kept
//            token whose running weight sum exceeds u * (kept weight), else the last kept one
//            of positive weight (rounding).
//   logprob: z (read), settings (read), tokens [rows] u32 (read; i32 read as u32), out [rows]
//            f32 stored as u32 bits: log_softmax(z / t)[token] over the full row (t <= 0 reads
//            as 1), or 0 when token >= cols.
//   advance: bindings 0, 1 unused (callers bind rng), rng [rows, 2] (read), out [rows, 2] u32:
//            (seed, step + 1). One thread per row, not a row kernel.
// z is bound as vec4s: with QUADS (cols a multiple of 4) the row passes load four logits at a
// time (on CPU adapters a load costs per access, not per element); otherwise one at a time.

override WG: u32 = 256u;
override QUADS: bool = false;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> z: array<vec4f>;
@group(0) @binding(1) var<storage, read> settings: array<f32>;
@group(0) @binding(2) var<storage, read> aux: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<uniform> p: Params;

const NONE: u32 = 0xffffffffu;

// A per-thread partial result of a row pass: a weight sum, a count, a min and a max (u32).
struct Acc {
  f: f32,
  n: u32,
  lo: u32,
  hi: u32,
}

var<workgroup> acc: array<Acc, WG>;
var<workgroup> prefix: array<f32, WG>;

// Sums f and n, takes the min of lo and the max of hi over the workgroup; every thread gets the
// result as a uniform value.
fn workgroup_reduce(v: Acc, lid: u32) -> Acc {
  acc[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      let a = acc[lid];
      let b = acc[lid + s];
      acc[lid] = Acc(a.f + b.f, a.n + b.n, min(a.lo, b.lo), max(a.hi, b.hi));
    }
    workgroupBarrier();
  }
  let total = workgroupUniformLoad(&acc[0]);
  workgroupBarrier();
  return total;
}

// Leaves in prefix the inclusive prefix sums of v over the threads (Hillis-Steele).
fn inclusive_scan(v: f32, lid: u32) {
  prefix[lid] = v;
  for (var d = 1u; d < WG; d = d * 2u) {
    workgroupBarrier();
    var add = 0.0;
    if (lid >= d) { add = prefix[lid - d]; }
    workgroupBarrier();
    prefix[lid] += add;
  }
  workgroupBarrier();
}

// The logit of column c of the row that starts at element base.
fn logit(base: u32, c: u32) -> f32 {
  let i = base + c;
  return z[i / 4u][i % 4u];
}

// Columns 4q .. 4q+3 of the row that starts at element base (columns past the row read as its
// last: callers skip them).
fn logit_quad(base: u32, q: u32) -> vec4f {
  if (QUADS) { return z[base / 4u + q]; }
  let last = p.cols - 1u;
  let c = 4u * q;
  return vec4f(
    logit(base, c),
    logit(base, min(c + 1u, last)),
    logit(base, min(c + 2u, last)),
    logit(base, min(c + 3u, last)),
  );
}

// Quads of columns in a row.
fn row_quads() -> u32 {
  return (p.cols + 3u) / 4u;
}

// Order-preserving map of f32 to u32 (a < b iff key(a) < key(b)); -0 maps like +0.
fn key_of(x: f32) -> u32 {
  let b = select(bitcast<u32>(x), 0u, bitcast<u32>(x) == 0x80000000u);
  return select(b | 0x80000000u, ~b, b >= 0x80000000u);
}

// PCG hash (Jarzynski and Olano 2020): a bijection on u32.
fn pcg_hash(v: u32) -> u32 {
  let state = v * 747796405u + 2891336453u;
  let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

// Uniform in [0, 1) with 24 random bits, keyed by (seed, step); src/reference/sampler.ts mirrors it.
fn uniform01(seed: u32, step: u32) -> f32 {
  return f32(pcg_hash(seed + pcg_hash(step)) >> 8u) * (1.0 / 16777216.0);
}

// The row's first index of its max logit, and that logit's key.
struct Top {
  index: u32,
  key: u32,
}

fn row_argmax(base: u32, lid: u32) -> Top {
  var key = 0u;
  var index = NONE;
  for (var q = lid; q < row_quads(); q += WG) {
    let x = logit_quad(base, q);
    for (var j = 0u; j < 4u && 4u * q + j < p.cols; j++) {
      let k = key_of(x[j]);
      if (index == NONE || k > key) {
        key = k;
        index = 4u * q + j;
      }
    }
  }
  let top = workgroup_reduce(Acc(0.0, 0u, NONE, key), lid).hi;
  let first = workgroup_reduce(Acc(0.0, 0u, select(NONE, index, key == top), 0u), lid).lo;
  return Top(first, top);
}

// Over the row: n = tokens with key >= theta, f = their weight (when with_mass, else 0), lo =
// their smallest key, hi = the largest key below theta.
fn above(base: u32, lid: u32, theta: u32, with_mass: bool, m: f32, t: f32) -> Acc {
  var a = Acc(0.0, 0u, NONE, 0u);
  for (var q = lid; q < row_quads(); q += WG) {
    let xq = logit_quad(base, q);
    for (var j = 0u; j < 4u && 4u * q + j < p.cols; j++) {
      let x = xq[j];
      let k = key_of(x);
      if (k >= theta) {
        a.n += 1u;
        a.lo = min(a.lo, k);
        if (with_mass) { a.f += exp((x - m) / t); }
      } else {
        a.hi = max(a.hi, k);
      }
    }
  }
  return workgroup_reduce(a, lid);
}

// A search pass's 8 thresholds (or the counts / weight sums above them), as two vec4s.
struct Probes {
  a: vec4<u32>,
  b: vec4<u32>,
}

var<workgroup> probe_acc: array<Probes, WG>;

// Sums the threads' probes over the workgroup (as f32 bits when by_mass); every thread gets the
// result as a uniform value.
fn reduce_probes(v: Probes, lid: u32, by_mass: bool) -> Probes {
  probe_acc[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      let x = probe_acc[lid];
      let y = probe_acc[lid + s];
      if (by_mass) {
        probe_acc[lid] = Probes(
          bitcast<vec4<u32>>(bitcast<vec4<f32>>(x.a) + bitcast<vec4<f32>>(y.a)),
          bitcast<vec4<u32>>(bitcast<vec4<f32>>(x.b) + bitcast<vec4<f32>>(y.b)),
        );
      } else {
        probe_acc[lid] = Probes(x.a + y.a, x.b + y.b);
      }
    }
    workgroupBarrier();
  }
  let total = workgroupUniformLoad(&probe_acc[0]);
  workgroupBarrier();
  return total;
}

// Up to CACHE_SIZE logits a thread keeps during a search, in row order: those of its columns
// with key >= lo at the pass that collected them. Once every thread's fit (cache_valid, uniform),
// later passes read them instead of the row: the rest of that search, the kept weight after it
// and the next search, whose floors are never lower, so they hold every token those count or
// weigh.
const CACHE_SIZE = 16u;
var<private> cached: array<f32, CACHE_SIZE>;
var<private> cached_count: u32;
var<private> cache_valid: bool;

// One search pass's sums over this thread's tokens, for thresholds th_a and th_b.
var<private> n_a: vec4<u32>;
var<private> n_b: vec4<u32>;
var<private> f_a: vec4<f32>;
var<private> f_b: vec4<f32>;

// Adds logit x to the pass's sums: its count, or with by_mass its weight, at every threshold its
// key reaches.
fn probe(x: f32, th_a: vec4<u32>, th_b: vec4<u32>, by_mass: bool, m: f32, t: f32) {
  let k = vec4<u32>(key_of(x));
  if (by_mass) {
    let w = vec4<f32>(exp((x - m) / t));
    f_a += select(vec4<f32>(), w, k >= th_a);
    f_b += select(vec4<f32>(), w, k >= th_b);
  } else {
    n_a += select(vec4<u32>(), vec4<u32>(1u), k >= th_a);
    n_b += select(vec4<u32>(), vec4<u32>(1u), k >= th_b);
  }
}

// The largest key theta in [lo0, hi0) whose tokens (key >= theta) number at least `count`, or
// with by_mass weigh at least `mass`; the condition must hold at lo0, and it fails at hi0 unless
// it holds everywhere (then the result is hi0 - 1). Each pass counts (or weighs) the tokens above
// 8 thresholds that cut [lo, hi) into 9 near-equal parts and keeps the part where the condition
// changes: at most 11 passes for any 32-bit range. Passes over the row also collect each thread's
// tokens with key >= lo (`cached`); once they fit for every thread, the remaining passes read
// those alone. The result is the key a bisection finds (the condition changes only at keys of the
// row), and each weight sum is formed in the order `above` forms it (row order, skipping tokens
// below the threshold, which add nothing).
fn search(
  base: u32,
  lid: u32,
  lo0: u32,
  hi0: u32,
  by_mass: bool,
  count: u32,
  mass: f32,
  m: f32,
  t: f32,
) -> u32 {
  let steps_a = vec4<u32>(1u, 2u, 3u, 4u);
  let steps_b = vec4<u32>(5u, 6u, 7u, 8u);
  var lo = lo0;
  var hi = hi0;
  for (var round = 0u; round < 12u && hi - lo > 1u; round++) {
    let span = hi - lo;
    let th_a = lo + steps_a * (span / 9u) + steps_a * (span % 9u) / 9u;
    let th_b = lo + steps_b * (span / 9u) + steps_b * (span % 9u) / 9u;
    n_a = vec4<u32>();
    n_b = vec4<u32>();
    f_a = vec4<f32>();
    f_b = vec4<f32>();
    if (cache_valid) {
      for (var i = 0u; i < cached_count; i++) { probe(cached[i], th_a, th_b, by_mass, m, t); }
    } else {
      var found = 0u;
      for (var q = lid; q < row_quads(); q += WG) {
        let xq = logit_quad(base, q);
        for (var j = 0u; j < 4u && 4u * q + j < p.cols; j++) {
          let x = xq[j];
          probe(x, th_a, th_b, by_mass, m, t);
          if (key_of(x) >= lo) {
            if (found < CACHE_SIZE) { cached[found] = x; }
            found++;
          }
        }
      }
      cached_count = found;
      cache_valid = workgroup_reduce(Acc(0.0, 0u, NONE, found), lid).hi <= CACHE_SIZE;
    }
    var mine = Probes(n_a, n_b);
    if (by_mass) { mine = Probes(bitcast<vec4<u32>>(f_a), bitcast<vec4<u32>>(f_b)); }
    let total = reduce_probes(mine, lid, by_mass);
    let by_count_a = total.a >= vec4<u32>(count);
    let by_count_b = total.b >= vec4<u32>(count);
    let by_mass_a = bitcast<vec4<f32>>(total.a) >= vec4<f32>(mass);
    let by_mass_b = bitcast<vec4<f32>>(total.b) >= vec4<f32>(mass);
    let ones = vec4<u32>(1u);
    // The condition holds at the first `held` thresholds and fails at the others.
    let held = dot(select(vec4<u32>(), ones, select(by_count_a, by_mass_a, by_mass)), ones) +
      dot(select(vec4<u32>(), ones, select(by_count_b, by_mass_b, by_mass)), ones);
    let th = array<u32, 8>(th_a.x, th_a.y, th_a.z, th_a.w, th_b.x, th_b.y, th_b.z, th_b.w);
    if (held > 0u) { lo = th[held - 1u]; }
    if (held < 8u) { hi = th[held]; }
  }
  return lo;
}

// The weight of the row's tokens with key >= theta, as `above` sums it (from the search cache
// when it is valid: the same tokens in the same order).
fn kept_weight(base: u32, lid: u32, theta: u32, m: f32, t: f32) -> f32 {
  if (!cache_valid) { return above(base, lid, theta, true, m, t).f; }
  var f = 0.0;
  for (var i = 0u; i < cached_count; i++) {
    let x = cached[i];
    if (key_of(x) >= theta) { f += exp((x - m) / t); }
  }
  return workgroup_reduce(Acc(f, 0u, NONE, 0u), lid).f;
}

@compute @workgroup_size(WG)
fn sample(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  let top = row_argmax(base, lid);
  let t = settings[row * 3u];
  if (t <= 0.0) {
    if (lid == 0u) { out[row] = top.index; }
    return;
  }
  let m = logit(base, top.index);
  let top_k = u32(clamp(settings[row * 3u + 1u], 0.0, f32(p.cols)));
  let top_p = settings[row * 3u + 2u];

  var theta = 0u;
  if (top_k >= 1u && top_k < p.cols) {
    theta = search(base, lid, 0u, top.key + 1u, false, top_k, 0.0, m, t);
  }
  if (top_p < 1.0) {
    let kept = kept_weight(base, lid, theta, m, t);
    theta = search(base, lid, theta, top.key + 1u, true, 0u, top_p * kept, m, t);
  }

  // Inverse CDF: thread lid owns the contiguous quads [start, end) (columns 4 start .. 4 end - 1
  // within the row); the thread whose share of the running sum contains the target walks them.
  let chunk = (row_quads() + WG - 1u) / WG;
  let start = min(lid * chunk, row_quads());
  let end = min(start + chunk, row_quads());
  var s = 0.0;
  for (var q = start; q < end; q++) {
    let xq = logit_quad(base, q);
    for (var j = 0u; j < 4u && 4u * q + j < p.cols; j++) {
      let x = xq[j];
      if (key_of(x) >= theta) { s += exp((x - m) / t); }
    }
  }
  inclusive_scan(s, lid);
  var before = 0.0;
  if (lid > 0u) { before = prefix[lid - 1u]; }
  let goal = uniform01(aux[row * 2u], aux[row * 2u + 1u]) * prefix[WG - 1u];
  let owns = s > 0.0 && before <= goal;
  let owner = workgroup_reduce(Acc(0.0, 0u, NONE, select(0u, lid, owns)), lid).hi;
  if (lid != owner) { return; }
  var running = before;
  var token = 4u * start;
  for (var q = start; q < end && running <= goal; q++) {
    let xq = logit_quad(base, q);
    for (var j = 0u; j < 4u && 4u * q + j < p.cols; j++) {
      let x = xq[j];
      let w = exp((x - m) / t);
      if (key_of(x) >= theta && w > 0.0) {
        running += w;
        token = 4u * q + j;
        if (running > goal) { break; }
      }
    }
  }
  out[row] = token;
}

@compute @workgroup_size(WG)
fn logprob(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  let m = logit(base, row_argmax(base, lid).index);
  let t = select(1.0, settings[row * 3u], settings[row * 3u] > 0.0);
  let total = above(base, lid, 0u, true, m, t).f;
  if (lid != 0u) { return; }
  let token = aux[row];
  var value = 0.0;
  if (token < p.cols) { value = (logit(base, token) - m) / t - log(total); }
  out[row] = bitcast<u32>(value);
}

@compute @workgroup_size(WG)
fn advance(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let row = gid.x + gid.y * nwg.x * WG;
  if (row >= p.rows) { return; }
  out[row * 2u] = aux[row * 2u];
  out[row * 2u + 1u] = aux[row * 2u + 1u] + 1u;
}
