//! Hints: a table of typed rules. Each rule reads the finished report (plus a few numbers the
//! report does not carry), and fires with a severity, a message, the numbers behind it and a
//! fix that fits the trace (training or inference, the GPU generation). The seed's
//! bucket-share rules keep its thresholds (15% / 15% / 8%).

use super::stakes::derived_stake;
pub use super::stakes::SMALL_STAKE_PCT;
use crate::analysis::passes::extra::Extra;
use crate::report::{Hint, Severity, TraceReport};
pub use crate::vocab::HintId;

mod compute_rules;
mod facts;
mod time_rules;
mod work_rules;

use compute_rules::*;
pub use facts::*;
use time_rules::*;
use work_rules::*;

/// The optimizer's share of GPU time (%) that, without backward ops, says the run trains.
pub const TRAINING_OPTIMIZER_PCT: f64 = 1.0;

/// The rules, in report order for equal time at stake.
static RULES: &[(HintId, Rule)] = &[
    (HintId::AttentionNotFlash, attention_not_flash),
    (HintId::EagerAttention, eager_attention),
    (HintId::GpuIdle, gpu_idle),
    (HintId::LaunchBound, launch_bound),
    (HintId::HostSync, host_sync),
    (HintId::CollectiveShare, collective_share),
    (HintId::ExposedComm, exposed_comm),
    (HintId::ElementwiseShare, elementwise_share),
    (HintId::MemoryShare, memory_share),
    (HintId::MemcpyShare, memcpy_share),
    (HintId::Dataloader, dataloader),
    (HintId::NoTensorCores, no_tensor_cores),
    (HintId::CoreComputeLow, core_compute_low),
    (HintId::BelowRoof, below_roof),
    (HintId::NoShapes, no_shapes),
];

/// Evaluates every rule. Hints are ranked by the GPU time they put at stake, largest first (table
/// order for equal stakes); a hint whose stake is under [`SMALL_STAKE_PCT`] of the span is info.
pub fn hints(r: &TraceReport, x: &Extra) -> Vec<Hint> {
    if !r.has_gpu || r.gpu.kernel_time_us <= 0.0 {
        return Vec::new();
    }
    let f = Facts { r, x };
    let small = f.span() * SMALL_STAKE_PCT / 100.0;
    let mut out: Vec<Hint> = RULES
        .iter()
        .filter_map(|(id, rule)| {
            rule(&f).map(|h| {
                // Whole microseconds: a bound, not a measurement to the nanosecond.
                let stake_us = h.stake_us.or_else(|| derived_stake(*id, r)).unwrap_or(0.0).max(0.0).round();
                Hint {
                    id: *id,
                    severity: if stake_us < small { Severity::Info } else { h.severity },
                    message: h.message,
                    evidence: h.evidence,
                    fix: h.fix,
                    stake_us,
                }
            })
        })
        .collect();
    out.sort_by(|a, b| b.stake_us.total_cmp(&a.stake_us));
    out
}
