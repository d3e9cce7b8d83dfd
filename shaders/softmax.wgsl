// Softmax and log-softmax over the last axis of a [rows, cols] view, and their backward.
// One workgroup per row, row = wid.x + wid.y * nwg.x (2-D grid when rows > 65535); threads
// stride over the columns (any cols >= 1) and combine with tree reductions in workgroup memory.
// WG must be a power of two. LOG (override): 0 softmax, 1 log-softmax.
// Bindings (both entry points): a [rows, cols] (read), g [rows, cols] (read), out (write), params.
// forward:  a = x (g unused; callers bind x there). m = max(x), s = sum(exp(x - m));
//           softmax: out = exp(x - m) / s; log-softmax: out = x - m - log(s).
// backward: a = y (the forward output), g = its gradient; out = dx.
//           softmax: dx = y * (g - sum(g * y)); log-softmax: dx = g - exp(y) * sum(g).

override LOG: bool = false;
override WG: u32 = 256u;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

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
  // Threads past the end start from the last column: max is idempotent, so no -inf is needed.
  var m = a[base + min(lid, p.cols - 1u)];
  for (var c = lid + WG; c < p.cols; c += WG) { m = max(m, a[base + c]); }
  m = workgroup_reduce(m, lid, true);
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) { s += exp(a[base + c] - m); }
  s = workgroup_reduce(s, lid, false);
  let log_s = log(s);
  for (var c = lid; c < p.cols; c += WG) {
    let z = a[base + c] - m;
    out[base + c] = select(exp(z) / s, z - log_s, LOG);
  }
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
  var s = 0.0;
  for (var c = lid; c < p.cols; c += WG) {
    s += select(g[base + c] * a[base + c], g[base + c], LOG);
  }
  s = workgroup_reduce(s, lid, false);
  for (var c = lid; c < p.cols; c += WG) {
    let y = a[base + c];
    let gc = g[base + c];
    out[base + c] = select(y * (gc - s), gc - exp(y) * s, LOG);
  }
}
