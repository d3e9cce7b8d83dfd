// Per-row token log-probability log_softmax(z)[target] and entropy of softmax(z) over the last
// axis of logits z viewed as [rows, cols] (cols: the vocabulary), without materialising the
// log-softmax, and their backward. One workgroup per row, row = wid.x + wid.y * nwg.x (2-D grid
// when rows > 65535); threads stride over the columns (any cols >= 1) and combine with tree
// reductions in workgroup memory. WG must be a power of two.
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

var<workgroup> partial: array<vec2f, WG>;

// Component-wise max (take_max) or sum of v over the workgroup; every thread gets the result.
fn workgroup_reduce(v: vec2f, lid: u32, take_max: bool) -> vec2f {
  partial[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      let other = partial[lid + s];
      partial[lid] = select(partial[lid] + other, max(partial[lid], other), take_max);
    }
    workgroupBarrier();
  }
  let total = partial[0];
  workgroupBarrier();
  return total;
}

// (m, s, pu) of the row starting at base; pu is computed for entropy only (0 otherwise).
fn row_stats(base: u32, lid: u32) -> vec3f {
  // Threads past the end start from the last column: max is idempotent, so no -inf is needed.
  var m = z[base + min(lid, p.cols - 1u)];
  for (var c = lid + WG; c < p.cols; c += WG) { m = max(m, z[base + c]); }
  m = workgroup_reduce(vec2f(m), lid, true).x;
  var acc = vec2f(0.0);
  for (var c = lid; c < p.cols; c += WG) {
    let u = z[base + c] - m;
    let e = exp(u);
    acc += vec2f(e, select(0.0, e * u, ENTROPY));
  }
  acc = workgroup_reduce(acc, lid, false);
  return vec3f(m, acc.x, acc.y / acc.x);
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
