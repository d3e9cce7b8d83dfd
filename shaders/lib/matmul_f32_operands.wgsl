// A and B of the vec4 workgroup-tile matmuls as f32 storage buffers read four elements at a time
// (lib/matmul_vec4_tiles.wgsl's `operand_quad`).

@group(0) @binding(0) var<storage, read> a: array<vec4f>;
@group(0) @binding(1) var<storage, read> b: array<vec4f>;

// Elements i .. i+3 (i a multiple of 4) of A (src 0) or B (src 1).
fn operand_quad(src: u32, i: u32) -> vec4f {
  if (src == 0u) { return a[i / 4u]; }
  return b[i / 4u];
}
