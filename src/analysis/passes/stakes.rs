//! What a hint puts at stake: the GPU time it is about, by which hints are ranked.

use crate::report::TraceReport;
use crate::vocab::{Backend, Bucket, HintId};

/// A hint whose time at stake is under this share of the span is info, whatever its rule says.
pub const SMALL_STAKE_PCT: f64 = 2.0;

/// The time at stake of a hint whose rule reads it from the report's summary (GPU time,
/// buckets, attention), so that a share link can derive it instead of carrying it. None for the
/// rules that read more (idle causes, syncs, copies, the data loader, tensor-core use).
pub fn derived_stake(id: HintId, r: &TraceReport) -> Option<f64> {
    let bucket = |b: Bucket| r.buckets.iter().find(|x| x.id == b).map(|x| x.time_us).unwrap_or(0.0);
    let us = match id {
        HintId::GpuIdle => r.gpu.idle_us,
        HintId::CollectiveShare | HintId::ExposedComm => r.gpu.exposed_comm_us,
        HintId::ElementwiseShare => bucket(Bucket::Elementwise),
        // Communication has its own hints (collective_share, exposed_comm): not counted twice.
        HintId::CoreComputeLow => {
            r.gpu.kernel_time_us - bucket(Bucket::Gemm) - bucket(Bucket::Attention) - bucket(Bucket::Communication)
        }
        HintId::NoShapes => bucket(Bucket::Gemm) + bucket(Bucket::Attention),
        HintId::AttentionNotFlash => r.attention.time_us,
        HintId::EagerAttention => {
            r.attention.evidence.iter().filter(|e| e.backend == Backend::Eager).map(|e| e.time_us).sum()
        }
        _ => return None,
    };
    Some(us.max(0.0).round())
}
