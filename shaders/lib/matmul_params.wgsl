// The uniform params every matmul shader takes (matmul_regblock, matmul_tiled, matmul_tiled_vec4,
// matmul_texture, matmul_skinny), pulled in with the line `// #include matmul_params`: the sizes
// and batch strides of C[b] = op(A[b]) @ op(B[b]), bound at 3 (the including shader binds A, B and
// C at 0..2). A batch stride of 0 shares that operand across the batch. The overrides TRANS_A,
// TRANS_B and ACCUMULATE stay in each shader: declared here, after the shader's own override-sized
// workgroup arrays, they made naga 29 panic on matmul_tiled.

struct Params {
  m: u32,
  n: u32,
  k: u32,
  stride_a: u32,
  stride_b: u32,
  stride_c: u32,
}

@group(0) @binding(3) var<uniform> p: Params;
