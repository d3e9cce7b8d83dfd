// The uniform params of every matmul kernel (packed by `matmulParams`, src/ops/matmul_variants.ts),
// bound at 3 after A, B and C: the problem's sizes and each operand's batch stride in elements
// (a stride of 0 shares that operand across the batch).

struct Params {
  m: u32,
  n: u32,
  k: u32,
  stride_a: u32,
  stride_b: u32,
  stride_c: u32,
}

@group(0) @binding(3) var<uniform> p: Params;
