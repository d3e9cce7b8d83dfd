// Where the plain and gated GEMVs' weights lie (see gemv_core.wgsl): column col reads row col of
// w (and of w2, GATED); no bias.
// Bindings after the core's: c (read_write) [M, N], params.

@group(0) @binding(4) var<storage, read_write> c: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

fn weight_chunk(col: u32, q: u32, chunks: u32) -> vec4u {
  return w[col * chunks + q];
}

fn column_bias(col: u32) -> f32 {
  return 0.0;
}
