// The GEMV kernels' lane sums (see gemv_core.wgsl) added in workgroup memory (a tree of halvings:
// partial[column * LANES + lane]), and their entry point.

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
