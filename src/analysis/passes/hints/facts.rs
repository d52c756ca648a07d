//! What a hint rule reads and returns, and the thresholds the rules share (quoted by
//! docs/definitions.md).

use crate::analysis::passes::extra::{Extra, LaunchingOps};
use crate::analysis::rules::taxonomy::Bucket;
use crate::report::{Severity, StepLaunch, TraceReport};
use crate::vocab::fmt_us;

/// Thresholds, in one place so docs/definitions.md can quote them.
pub const COLLECTIVE_SHARE: f64 = 15.0;
pub const ELEMENTWISE_SHARE: f64 = 15.0;
pub const MEMORY_SHARE: f64 = 8.0;
pub const CORE_COMPUTE_LOW: f64 = 50.0;
pub const IDLE_SHARE: f64 = 10.0;
pub const IDLE_SHARE_CRITICAL: f64 = 30.0;
pub const LAUNCH_BOUND_SHARE: f64 = 50.0;
pub const LAUNCH_BOUND_MIN_KERNELS: u64 = 100;
pub const EXPOSED_COMM_SHARE: f64 = 10.0;
pub const HOST_COPY_SHARE: f64 = 10.0;
pub const DATALOADER_SHARE: f64 = 10.0;
pub const SIMT_GEMM_SHARE: f64 = 20.0;
pub const SYNC_SHARE: f64 = 10.0;
/// Graphs replay the work when they replay at least this share of the launched kernels.
pub const GRAPH_REPLAY_SHARE: f64 = 50.0;
/// One gap holding more than this share of the idle (more than all the others together) is
/// one-time work, not the steady state.
pub const ONE_GAP_SHARE: f64 = 50.0;

/// The kernels furthest below their roofs fire a hint when the time they would save at
/// [`crate::report::TARGET_PCT`] of their roof is more than this share of the span.
pub const BELOW_ROOF_SHARE: f64 = 5.0;
/// How many kernels below their roof that hint names and counts.
pub const BELOW_ROOF_LISTED: usize = 3;

/// Launch-bound by the CPU time per op, over a window of `span_us` (the trace, or one step):
/// the ops that launch kernels one by one take more CPU time per op than their kernels take GPU
/// time, and the GPU idles more than [`IDLE_SHARE`] of the window between those kernels. None
/// when no op launched kernels one by one.
pub fn launch_verdict(o: &LaunchingOps, span_us: f64) -> Option<StepLaunch> {
    if o.ops == 0 {
        return None;
    }
    let per_op = |ns: i64| ns as f64 / 1000.0 / o.ops as f64;
    let (cpu_per_op_us, kernel_per_op_us) = (per_op(o.cpu_ns), per_op(o.kernel_ns));
    let idle_us = o.idle_ns as f64 / 1000.0;
    let launch_bound =
        cpu_per_op_us > kernel_per_op_us && idle_us / span_us.max(f64::MIN_POSITIVE) * 100.0 > IDLE_SHARE;
    Some(StepLaunch { ops: o.ops, cpu_per_op_us, kernel_per_op_us, idle_us, launch_bound })
}

/// What a rule reads.
pub struct Facts<'a> {
    pub r: &'a TraceReport,
    pub x: &'a Extra,
}

impl Facts<'_> {
    pub(super) fn share(&self, b: Bucket) -> f64 {
        self.r.buckets.iter().find(|x| x.id == b).map(|x| x.pct).unwrap_or(0.0)
    }
    pub(super) fn span(&self) -> f64 {
        self.r.gpu.span_us.max(f64::MIN_POSITIVE)
    }
    /// Share of the launched kernels that graph launches replayed, in percent (0 without graphs).
    pub(super) fn graph_share(&self) -> f64 {
        let l = &self.r.launch;
        l.graph_kernels as f64 * 100.0 / (l.graph_kernels + l.launched_kernels).max(1) as f64
    }
    /// "676 of 713 kernels replayed by 1 graph launch (979 us of CPU)", when graphs ran.
    pub(super) fn graph_line(&self) -> Option<String> {
        let l = &self.r.launch;
        (l.graph_kernels > 0).then(|| {
            format!(
                "{} of {} kernels replayed by {} graph launch{} ({} of CPU in the launch calls)",
                l.graph_kernels,
                l.graph_kernels + l.launched_kernels,
                l.graph_launches,
                if l.graph_launches == 1 { "" } else { "es" },
                fmt_us(l.graph_launch_call_us)
            )
        })
    }
    pub(super) fn idle_pct(&self) -> f64 {
        self.r.gpu.idle_us / self.span() * 100.0
    }
}

pub(super) struct Fired {
    /// The GPU time the hint is about (what fixing it could win at most), in microseconds;
    /// None where the report's summary gives it ([`derived_stake`]).
    pub(super) stake_us: Option<f64>,
    pub(super) severity: Severity,
    pub(super) message: String,
    pub(super) evidence: Vec<String>,
    pub(super) fix: String,
}

pub(super) fn fired(
    stake_us: Option<f64>,
    severity: Severity,
    message: String,
    evidence: Vec<String>,
    fix: impl Into<String>,
) -> Option<Fired> {
    Some(Fired { stake_us, severity, message, evidence, fix: fix.into() })
}

pub(super) type Rule = fn(&Facts) -> Option<Fired>;
