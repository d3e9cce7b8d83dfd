// A decoder layer's RMSNorm and q, k and v products (with their biases) as one GEMV for GPUs (see
// lib/gemv_core.wgsl, lib/gemv_qkv_weights.wgsl): q's, k's and v's columns side by side, the
// lanes' sums of each column added in workgroup memory.

// #include gemv_core
// #include gemv_qkv_weights
// #include gemv_workgroup_sums
// #include activation
// #include half_weights
