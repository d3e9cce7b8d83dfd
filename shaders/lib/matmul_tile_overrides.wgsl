// The overrides of the 8 x 8 workgroup-tile matmuls (matmul_tiled_8x8.wgsl,
// matmul_tiled_8x8_half.wgsl), all set by the host (src/ops/matmul_variants.ts). A
// shader includes this library first: Naga panics on a workgroup size or a workgroup array size
// whose expression names an override declared later in the module.

// The layout: op(A) and op(B) transpose when set; C += op(A) @ op(B) with ACCUMULATE.
override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false;
// The tile: BM x BN outputs (multiples of 8) per workgroup, BK (a multiple of 4) values of K per
// staging step.
override BM: u32 = 64u;
override BN: u32 = 64u;
override BK: u32 = 16u;
