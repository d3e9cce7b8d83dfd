// Per-row token log-probability log_softmax(z)[target] and entropy of softmax(z) over the last
// axis of logits z viewed as [rows, cols] (cols: the vocabulary), without materialising the
// log-softmax, and their backward. One workgroup per row, row = wid.x + wid.y * nwg.x (2-D grid
// when rows > 65535); threads stride over the columns (any cols >= 1) and combine with a tree
// reduction in workgroup memory. WG must be a power of two.
// ENTROPY (override): false token log-prob, true entropy.
// Per row: m = max(z), u = z - m, s = sum(exp(u)), p = exp(u) / s, pu = sum(p * u).
// Bindings (both entry points): z [rows, cols] (read), targets [rows] (read, i32 or u32 read as
// u32; unused for entropy: callers bind z), g [rows] (read; unused by forward: callers bind z),
// out (write), params.
// forward:  out [rows]. log-prob: u[target] - log(s), or 0 when target >= cols (a negative i32
//           included); entropy: log(s) - pu.
// backward: g = gradient of the forward output; out [rows, cols] = dz.
//           log-prob: dz_j = g * (onehot(target)_j - p_j), or 0 when target >= cols;
//           entropy:  dz_j = -g * p_j * (u_j - pu).

override ENTROPY: bool = false;
override WG: u32 = 256u;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> z: array<f32>;
@group(0) @binding(1) var<storage, read> targets: array<u32>;
@group(0) @binding(2) var<storage, read> g: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

// Running softmax statistics of a set of values x relative to their max m: s = sum(exp(x - m)),
// t = sum(exp(x - m) * (x - m)) (entropy only, else 0). One pass over the row builds them (an
// online softmax: each new max rescales s and t), so the forward reads the logits once and the
// backward twice; on CPU adapters every storage load runs a lane at a time, and two exps per
// value cost less than a second pass over the row.
struct Stats {
  m: f32,
  s: f32,
  t: f32,
}

var<workgroup> partial: array<Stats, WG>;

// The statistics of the union of the sets a and b describe (a.s == 0 for an empty set).
fn merge(a: Stats, b: Stats) -> Stats {
  let m = max(a.m, b.m);
  let da = a.m - m;
  let db = b.m - m;
  let ea = exp(da);
  let eb = exp(db);
  var t = 0.0;
  if (ENTROPY) { t = ea * (a.t + da * a.s) + eb * (b.t + db * b.s); }
  return Stats(m, ea * a.s + eb * b.s, t);
}

// (m, s, pu) of the row starting at base, pu = t / s (0 for the log-prob).
fn row_stats(base: u32, lid: u32) -> vec3f {
  // Threads past the end start from the last column with an empty set: merge keeps m finite.
  var acc = Stats(z[base + min(lid, p.cols - 1u)], 0.0, 0.0);
  for (var c = lid; c < p.cols; c += WG) { acc = merge(acc, Stats(z[base + c], 1.0, 0.0)); }
  partial[lid] = acc;
  workgroupBarrier();
  for (var half = WG / 2u; half > 0u; half = half / 2u) {
    if (lid < half) { partial[lid] = merge(partial[lid], partial[lid + half]); }
    workgroupBarrier();
  }
  let total = partial[0];
  return vec3f(total.m, total.s, total.t / total.s);
}

@compute @workgroup_size(WG)
fn forward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  let stats = row_stats(base, lid);
  if (lid != 0u) { return; }
  let log_s = log(stats.y);
  if (ENTROPY) {
    out[row] = log_s - stats.z;
    return;
  }
  let tok = targets[row];
  var value = 0.0;
  if (tok < p.cols) { value = z[base + tok] - stats.x - log_s; }
  out[row] = value;
}

@compute @workgroup_size(WG)
fn backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  let stats = row_stats(base, lid);
  let gr = g[row];
  // `target` is a reserved word. tok is meaningless for entropy (z is bound there) and unused.
  let tok = targets[row];
  // Log-prob: an out-of-range target gets no gradient (scale 0).
  let scale = select(select(0.0, gr, tok < p.cols), -gr, ENTROPY);
  for (var c = lid; c < p.cols; c += WG) {
    let u = z[base + c] - stats.x;
    let pc = exp(u) / stats.y;
    out[base + c] = scale * select(f32(c == tok) - pc, pc * (u - stats.z), ENTROPY);
  }
}
