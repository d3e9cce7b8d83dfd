// Workgroup-wide f32 reduction shared by the row kernels; a shader pulls it in with the line
// `// #include workgroup_reduce`. Needs `override WG: u32` (the workgroup size, a power of two)
// in the including shader, and every invocation of the workgroup must call it (it has barriers).

var<workgroup> wg_partial: array<f32, WG>;

// Max (take_max) or sum of v over the workgroup; every invocation gets the result.
fn workgroup_reduce(v: f32, lid: u32, take_max: bool) -> f32 {
  wg_partial[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (lid < s) {
      let other = wg_partial[lid + s];
      wg_partial[lid] = select(wg_partial[lid] + other, max(wg_partial[lid], other), take_max);
    }
    workgroupBarrier();
  }
  let total = wg_partial[0];
  workgroupBarrier();
  return total;
}
