// GEMV for GPUs (see lib/gemv_core.wgsl): a decode step's products x W^T, optionally with the
// RMSNorm of x and a gated second weight (SwiGLU), the lanes' sums of each column added in
// workgroup memory (a tree of halvings: partial[column * LANES + lane]).

// #include gemv_core
// #include activation
// #include half_weights

fn reduce_lanes(x: vec4f, lane: u32, column: u32) -> vec4f {
  let i = column * LANES + lane;
  partial[i] = x;
  workgroupBarrier();
  for (var half = LANES / 2u; half > 0u; half /= 2u) {
    if (lane < half) { partial[i] += partial[i + half]; }
    workgroupBarrier();
  }
  let total = partial[column * LANES];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(LANES, COLS)
fn main(inv: Invocation) {
  gemv(inv);
}
