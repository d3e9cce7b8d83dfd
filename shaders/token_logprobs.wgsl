// Per-row token statistics of logits z over a vocabulary held in pieces (the columns
// [first, first + cols) of each piece; the LM head's row shards, or any split of the vocabulary),
// without materialising a log-softmax, and their backward. With u = z * inv_temp (the temperature
// folded in), per row: logZ = log(sum(exp(u))), mean = sum(p * u) with p = exp(u - logZ),
// logp = u[target] - logZ (0 when the target is outside [0, vocab): an ignore index), and
// entropy = logZ - mean. One workgroup per row, row = wid.x + wid.y * nwg.x (2-D grid when
// rows > 65535); threads stride over the columns (any cols >= 1). WG must be a power of two.
//
// forward: one launch per piece, in order, each merging its piece into the running statistics held
//        in out [rows, 4] (m: max u, s: sum(exp(u - m)), t: sum(exp(u - m) * (u - m)), u[target]);
//        the first launch (begin = 1) starts them, the last (finish = 1) turns them into
//        (logp, entropy, logZ, mean). Bindings: z [rows, cols] (read), targets (read, i32 or u32
//        read as u32; row r reads targets[offset + r]), g (unused: callers bind z), out (write).
// backward: the gradient of one piece, out [rows, cols] = dz, from stats = (logp, entropy, logZ,
//        mean) [rows, 4] and g = their gradient [rows, 4]:
//        du_j = g0 * (onehot(target)_j - p_j) (0 for an ignored target) - g1 * p_j * (u_j - mean)
//             + g2 * p_j + g3 * p_j * (1 + u_j - mean);  dz_j = du_j * inv_temp.
//        Bindings: z, targets, stats, g (read), out (write). No reduction: one pass over the row.

override WG: u32 = 256u;

struct Params {
  rows: u32,
  cols: u32,
  first: u32,
  vocab: u32,
  offset: u32,
  inv_temp: f32,
  begin: u32,
  finish: u32,
}

@group(0) @binding(0) var<storage, read> z: array<f32>;
@group(0) @binding(1) var<storage, read> targets: array<u32>;
@group(0) @binding(2) var<storage, read> stats: array<f32>;
@group(0) @binding(3) var<storage, read> g: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

// Running softmax statistics of a set of values x relative to their max m: s = sum(exp(x - m)),
// t = sum(exp(x - m) * (x - m)). One pass over the row builds them (an online softmax: each new
// max rescales s and t), so the forward reads the logits once; on CPU adapters every storage load
// runs a lane at a time, and two exps per value cost less than a second pass over the row.
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
  return Stats(m, ea * a.s + eb * b.s, ea * (a.t + da * a.s) + eb * (b.t + db * b.s));
}

// The statistics of the piece's row starting at base (every thread gets them).
fn row_stats(base: u32, lid: u32) -> Stats {
  // Threads past the end start from the last column with an empty set: merge keeps m finite.
  var acc = Stats(z[base + min(lid, p.cols - 1u)] * p.inv_temp, 0.0, 0.0);
  for (var c = lid; c < p.cols; c += WG) {
    acc = merge(acc, Stats(z[base + c] * p.inv_temp, 1.0, 0.0));
  }
  partial[lid] = acc;
  workgroupBarrier();
  for (var half = WG / 2u; half > 0u; half = half / 2u) {
    if (lid < half) { partial[lid] = merge(partial[lid], partial[lid + half]); }
    workgroupBarrier();
  }
  return partial[0];
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
  var acc = row_stats(base, lid);
  if (lid != 0u) { return; }
  let at = row * 4u;
  let tok = targets[p.offset + row];
  var target_u = 0.0;
  if (p.begin == 0u) {
    acc = merge(Stats(out[at], out[at + 1u], out[at + 2u]), acc);
    target_u = out[at + 3u];
  }
  // `target` is a reserved word. A target in this piece is read here, once.
  if (tok >= p.first && tok - p.first < p.cols) { target_u = z[base + tok - p.first] * p.inv_temp; }
  if (p.finish == 0u) {
    out[at] = acc.m;
    out[at + 1u] = acc.s;
    out[at + 2u] = acc.t;
    out[at + 3u] = target_u;
    return;
  }
  let log_z = acc.m + log(acc.s);
  let mean = acc.m + acc.t / acc.s;
  out[at] = select(0.0, target_u - log_z, tok < p.vocab);
  out[at + 1u] = log_z - mean;
  out[at + 2u] = log_z;
  out[at + 3u] = mean;
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
  let at = row * 4u;
  let log_z = stats[at + 2u];
  let mean = stats[at + 3u];
  let tok = targets[p.offset + row];
  // An ignored target gives the log-prob no gradient.
  let g_logp = select(0.0, g[at], tok < p.vocab);
  let g_entropy = g[at + 1u];
  let g_log_z = g[at + 2u];
  let g_mean = g[at + 3u];
  for (var c = lid; c < p.cols; c += WG) {
    let u = z[base + c] * p.inv_temp;
    let pc = exp(u - log_z);
    let centred = u - mean;
    var du = pc * (g_log_z - g_logp - g_entropy * centred + g_mean * (1.0 + centred));
    if (p.first + c == tok) { du += g_logp; }
    out[base + c] = du * p.inv_temp;
  }
}
