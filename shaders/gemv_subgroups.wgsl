// GEMV for GPUs (see lib/gemv_core.wgsl), as gemv.wgsl, the lanes' sums of each column added by
// subgroup sums: for devices where `subgroups` works.

// #include gemv_core
// #include gemv_weights
// #include gemv_subgroup_sums
// #include activation
// #include half_weights
