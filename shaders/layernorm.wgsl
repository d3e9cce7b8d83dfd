// LayerNorm and RMSNorm over the last axis of x viewed as [rows, cols] (RMSNorm is LayerNorm
// without centering and bias), and their backward. One workgroup per row, row = wid.x + wid.y *
// nwg.x (2-D grid when rows > 65535); threads stride over the columns (any cols >= 1) and combine
// with tree reductions in workgroup memory. WG must be a power of two. All math in f32.
// LAYERNORM (override): true:  mu = mean(x), rstd = rsqrt(mean((x - mu)^2) + eps) (biased
//                              variance, two passes), xhat = (x - mu) * rstd, y = xhat * w + b
//                              (torch.nn.LayerNorm);
//                       false: rstd = rsqrt(mean(x^2) + eps), xhat = x * rstd, y = xhat * w
//                              (HF LlamaRMSNorm / Qwen3RMSNorm; b is unused).
// WEIGHT_OFFSET (override): added to w wherever it scales, w + WEIGHT_OFFSET rounded to f32 first
//                           (Gemma's RMSNorm scales by 1 + w: 1.0).
// Bindings (every entry point): x [rows, cols] (read), w [cols] (read), b [cols] (read),
// g [rows, cols] (read), out [rows, cols] (write), params. Callers bind x where a binding is
// unused.
// forward:     out = y                                                  (g unused)
// backward:    g = dy; out = dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w,
//              where the mean(gw) term is LayerNorm's only                (b unused)
// weight_grad: g = dy; out = g * xhat, the per-row terms of dw (summed over rows by the caller)
//                                                                         (w, b unused)
// forward_rows: forward for cols a multiple of 4 with one invocation per row (CPU adapters, where
//              each barrier switches between SIMD groups): row = (wid.x + wid.y * nwg.x) * WG
//              + lid; x, w, b and out bound as vec4 arrays.

override LAYERNORM: bool = true;
override WG: u32 = 256u;
override WEIGHT_OFFSET: f32 = 0.0;

struct Params {
  rows: u32,
  cols: u32,
  eps: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> g: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

// #include workgroup_reduce

// What normalizing one row needs: xhat = (x - mu) * rstd (mu = 0 for RMSNorm).
struct RowStats {
  mu: f32,
  rstd: f32,
}

fn row_stats(base: u32, lid: u32) -> RowStats {
  let n = f32(p.cols);
  var mu = 0.0;
  if (LAYERNORM) {
    var s = 0.0;
    for (var c = lid; c < p.cols; c += WG) { s += x[base + c]; }
    mu = workgroup_reduce(s, lid, false) / n;
  }
  var ss = 0.0;
  for (var c = lid; c < p.cols; c += WG) {
    let d = x[base + c] - mu;
    ss += d * d;
  }
  let variance = workgroup_reduce(ss, lid, false) / n;
  return RowStats(mu, inverseSqrt(variance + p.eps));
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
  let st = row_stats(base, lid);
  for (var c = lid; c < p.cols; c += WG) {
    // HF order: (x * rstd) first, then the weight.
    var y = ((x[base + c] - st.mu) * st.rstd) * (w[c] + WEIGHT_OFFSET);
    if (LAYERNORM) { y += b[c]; }
    out[base + c] = y;
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
  let n = f32(p.cols);
  let st = row_stats(base, lid);
  var s_gw = 0.0;
  var s_gwx = 0.0;
  for (var c = lid; c < p.cols; c += WG) {
    let gw = g[base + c] * (w[c] + WEIGHT_OFFSET);
    s_gw += gw;
    s_gwx += gw * ((x[base + c] - st.mu) * st.rstd);
  }
  var mean_gw = 0.0;
  if (LAYERNORM) { mean_gw = workgroup_reduce(s_gw, lid, false) / n; }
  let mean_gwx = workgroup_reduce(s_gwx, lid, false) / n;
  for (var c = lid; c < p.cols; c += WG) {
    let xhat = (x[base + c] - st.mu) * st.rstd;
    out[base + c] = st.rstd * (g[base + c] * (w[c] + WEIGHT_OFFSET) - mean_gw - xhat * mean_gwx);
  }
}

@compute @workgroup_size(WG)
fn weight_grad(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * nwg.x;
  if (row >= p.rows) { return; }
  let base = row * p.cols;
  let st = row_stats(base, lid);
  for (var c = lid; c < p.cols; c += WG) {
    out[base + c] = g[base + c] * ((x[base + c] - st.mu) * st.rstd);
  }
}

// The same buffers as vec4s, for forward_rows (never used by the same entry point as the above).
@group(0) @binding(0) var<storage, read> x4: array<vec4f>;
@group(0) @binding(1) var<storage, read> w4: array<vec4f>;
@group(0) @binding(2) var<storage, read> b4: array<vec4f>;
@group(0) @binding(4) var<storage, read_write> out4: array<vec4f>;

// forward_rows: each invocation walks its row four columns at a time (the same passes as
// row_stats and forward), with no workgroup memory and no barrier.
@compute @workgroup_size(WG)
fn forward_rows(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = (wid.x + wid.y * nwg.x) * WG + lid;
  if (row >= p.rows) { return; }
  let quads = p.cols / 4u;
  let base = row * quads;
  let n = f32(p.cols);
  var mu = 0.0;
  if (LAYERNORM) {
    var s = vec4f(0.0);
    for (var c = 0u; c < quads; c++) { s += x4[base + c]; }
    mu = (s.x + s.y + s.z + s.w) / n;
  }
  var ss = vec4f(0.0);
  for (var c = 0u; c < quads; c++) {
    let d = x4[base + c] - mu;
    ss += d * d;
  }
  let rstd = inverseSqrt((ss.x + ss.y + ss.z + ss.w) / n + p.eps);
  for (var c = 0u; c < quads; c++) {
    var y = ((x4[base + c] - mu) * rstd) * (w4[c] + WEIGHT_OFFSET);
    if (LAYERNORM) { y += b4[c]; }
    out4[base + c] = y;
  }
}
