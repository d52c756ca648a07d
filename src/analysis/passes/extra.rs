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
}
