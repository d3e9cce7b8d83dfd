// Reductions over the last axis of x viewed as [rows, cols]; the result keeps a trailing 1
// (keepdim): out has shape [rows] = [..., 1]. One workgroup per row, row = wid.x + wid.y * nwg.x
// (2-D grid when rows > 65535); its threads stride over the columns and combine their partial
// results with a tree reduction in workgroup memory. WG must be a power of two.
// OP (override): 0 sum, 1 mean, 2 max.
// Bindings (both entry points): x [rows, cols] (read), g [rows] (read), out (write), params.
// forward:      out[r] = OP over c of x[r, c]       (g is unused; callers bind x there)
// max_backward: out[r, c] = g[r] if c is the first argmax of row r, else 0   (out: [rows, cols])

override OP: u32 = 0u;
override WG: u32 = 256u;

const OP_MEAN: u32 = 1u;
const OP_MAX: u32 = 2u;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> partial: array<f32, WG>;
var<workgroup> partial_index: array<u32, WG>;
// #include workgroup_reduce

@compute @workgroup_size(WG)
fn forward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  var acc: f32;
  if (OP != OP_MAX) {
    acc = 0.0;
    for (var c = lid; c < p.cols; c += WG) { acc += x[base + c]; }
  } else {
    // Threads past the end start from the last column: max is idempotent, so no -inf is needed.
    acc = x[base + min(lid, p.cols - 1u)];
    for (var c = lid + WG; c < p.cols; c += WG) { acc = max(acc, x[base + c]); }
  }
  let total = workgroup_reduce(acc, lid, OP == OP_MAX);
  if (lid == 0u) { out[row] = select(total, total / f32(p.cols), OP == OP_MEAN); }
}

@compute @workgroup_size(WG)
fn max_backward(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  // Each thread's (max, first index), then a tree reduction that prefers the lower index on ties.
  var best_index = min(lid, p.cols - 1u);
  var best = x[base + best_index];
  for (var c = lid + WG; c < p.cols; c += WG) {
    let v = x[base + c];
    if (v > best) {
      best = v;
      best_index = c;
    }
  }
  partial[lid] = best;
  partial_index[lid] = best_index;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      let v = partial[lid + s];
      let i = partial_index[lid + s];
      if (v > partial[lid] || (v == partial[lid] && i < partial_index[lid])) {
        partial[lid] = v;
        partial_index[lid] = i;
      }
    }
    workgroupBarrier();
  }
  let argmax = partial_index[0];
  let grad = g[row];
  for (var c = lid; c < p.cols; c += WG) { out[base + c] = select(0.0, grad, c == argmax); }
}
