// Where the q/k/v GEMV's weights lie (see gemv_core.wgsl): the output's columns are q's, then k's,
// then v's, side by side as one product by [Wq; Wk; Wv] would give them: columns [0, n1) read w
// (Wq), [n1, n2) w2 (Wk), [n2, n) w3 (Wv), each row of its own weight; with BIAS each column adds
// its module's bias. A fused qkv module (one weight) has n1 = n2 = n.
// Bindings after the core's: w3 (read, chunks), bias, bias2, bias3 (read, f32; callers bind a
// weight for unused ones), c (read_write) [M, N], params.

override BIAS: bool = false;

@group(0) @binding(4) var<storage, read> w3: array<vec4u>;
@group(0) @binding(5) var<storage, read> bias: array<f32>;
@group(0) @binding(6) var<storage, read> bias2: array<f32>;
@group(0) @binding(7) var<storage, read> bias3: array<f32>;
@group(0) @binding(8) var<storage, read_write> c: array<f32>;
@group(0) @binding(9) var<uniform> p: Params;

fn weight_chunk(col: u32, q: u32, chunks: u32) -> vec4u {
  if (col < p.n1) { return w[col * chunks + q]; }
  if (col < p.n2) { return w2[(col - p.n1) * chunks + q]; }
  return w3[(col - p.n2) * chunks + q];
}

fn column_bias(col: u32) -> f32 {
  if (!BIAS) { return 0.0; }
  if (col < p.n1) { return bias[col]; }
  if (col < p.n2) { return bias2[col - p.n1]; }
  return bias3[col - p.n2];
}
