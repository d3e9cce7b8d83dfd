// The GEMV kernels' lane sums (see gemv_core.wgsl) added by subgroup sums (`subgroupAdd`), then
// across the column's subgroups in workgroup memory (partial[column * (LANES / size) + lane /
// size]), and their entry point: for devices where `subgroups` works (src/gpu/subgroups.ts), with
// LANES a multiple of the subgroup size, so that a subgroup never spans two columns. Deno's WGSL
// compiler takes the subgroup built-ins without (and rejects) `enable subgroups;`.

var<private> subgroup_size: u32;

fn reduce_lanes(x: vec4f, lane: u32, column: u32) -> vec4f {
  let sum = subgroupAdd(x);
  let per_column = LANES / subgroup_size;
  if (lane % subgroup_size == 0u) { partial[column * per_column + lane / subgroup_size] = sum; }
  workgroupBarrier();
  var total = vec4f(0.0);
  for (var i = 0u; i < per_column; i++) { total += partial[column * per_column + i]; }
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(LANES, COLS)
fn main(inv: Invocation, @builtin(subgroup_size) size: u32) {
  subgroup_size = size;
  gemv(inv);
}
