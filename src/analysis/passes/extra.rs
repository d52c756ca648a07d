//! What the build hands the hints and diagnostics besides the report.

/// Numbers the hints and diagnostics read that are not fields of the report.
#[derive(Default)]
pub struct Extra {
    pub unattributed: (u64, i64),
    pub dangling_correlation: u64,
    pub external_mismatch: u64,
    pub dataloader_ns: i64,
    pub cpu_step_ns: i64,
    pub cpu_extent_ns: i64,
    /// Gaps over 50 us in the busy union: count, total and the largest (ns).
    pub idle_gaps: (u64, i64, i64),
    /// GPU time with no launch call, attributed through the rows' own External ids.
    pub external_only_us: f64,
    /// The ops that launched kernels one by one (graph launches aside), for the launch-bound
    /// hint's CPU time per op beside the kernel time per op.
    pub launching_ops: LaunchingOps,
    /// Elementwise-bucket time in kernels Inductor already fused (ns).
    pub inductor_elementwise_ns: i64,
    /// Memory-bucket time in ATen's index copies (index, gather, scatter kernels; ns).
    pub index_copy_ns: i64,
}

/// The innermost ops around the launch calls of kernels launched one by one.
#[derive(Default, Debug, Clone, Copy, PartialEq)]
pub struct LaunchingOps {
    /// How many op spans launched such kernels.
    pub ops: u64,
    /// Their CPU durations, summed (ns).
    pub cpu_ns: i64,
    /// The GPU time of the kernels they launched, summed (ns).
    pub kernel_ns: i64,
    /// The device's idle that ends at one of those kernels: the gaps between them (ns).
    pub idle_ns: i64,
}
