// GEMV for GPUs (see lib/gemv_core.wgsl): a decode step's products x W^T, optionally with the
// RMSNorm of x and a gated second weight (SwiGLU), the lanes' sums of each column added in
// workgroup memory.

// #include gemv_core
// #include gemv_weights
// #include gemv_workgroup_sums
// #include activation
// #include half_weights
