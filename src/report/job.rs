//! The job view of several ranks: the side-by-side table, each metric's spread and outliers,
//! waiting in collectives and the straggler.

use crate::vocab::Bucket as BucketId;
use serde::{Deserialize, Serialize};

/// One row of the cross-rank table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankRow {
    pub file: String,
    pub rank: Option<i64>,
    pub kernel_time_us: f64,
    pub busy_us: f64,
    pub span_us: f64,
    pub idle_us: f64,
    #[serde(default)]
    pub compute_us: f64,
    pub comm_us: f64,
    pub exposed_comm_us: f64,
    /// Mean ProfilerStep duration on the CPU, when the trace has steps.
    #[serde(default)]
    pub step_us: Option<f64>,
    /// The three largest buckets with their share of kernel time.
    #[serde(default)]
    pub top_buckets: Vec<(BucketId, f64)>,
    /// busy_us of this rank relative to the slowest (largest busy) rank, percent.
    pub busy_vs_max_pct: f64,
    /// Time this rank's collectives spent waiting for other ranks.
    #[serde(default)]
    pub wait_us: f64,
    /// The metrics on which this rank is an outlier.
    #[serde(default)]
    pub outlier: Vec<RankMetric>,
    /// The rank's MFU over its GPU span (measured FLOPs against its device's peak).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mfu_pct: Option<f64>,
}

/// A per-rank number whose spread across ranks is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankMetric {
    Busy,
    Idle,
    Compute,
    Comm,
    ExposedComm,
    Step,
}

impl RankMetric {
    pub const ALL: [RankMetric; 6] = [
        RankMetric::Busy,
        RankMetric::Idle,
        RankMetric::Compute,
        RankMetric::Comm,
        RankMetric::ExposedComm,
        RankMetric::Step,
    ];

    pub fn of(self, r: &RankRow) -> Option<f64> {
        match self {
            RankMetric::Busy => Some(r.busy_us),
            RankMetric::Idle => Some(r.idle_us),
            RankMetric::Compute => Some(r.compute_us),
            RankMetric::Comm => Some(r.comm_us),
            RankMetric::ExposedComm => Some(r.exposed_comm_us),
            RankMetric::Step => r.step_us,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RankMetric::Busy => "GPU busy",
            RankMetric::Idle => "GPU idle",
            RankMetric::Compute => "compute",
            RankMetric::Comm => "communication",
            RankMetric::ExposedComm => "exposed communication",
            RankMetric::Step => "step time",
        }
    }
}

/// Min / median / max of one metric across ranks (rows index `Report::ranks`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricSpread {
    pub metric: RankMetric,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub min_row: usize,
    pub max_row: usize,
    pub outliers: Vec<usize>,
}

/// Waiting in collectives, per rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankWait {
    pub row: usize,
    pub rank: Option<i64>,
    /// Time this rank's collectives waited for the last rank to arrive.
    pub wait_us: f64,
    /// Waiting this rank caused the others by arriving last.
    pub caused_us: f64,
    /// Collectives this rank arrived at last.
    pub last_count: u64,
}

/// One collective matched across ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchedCollective {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    /// Occurrence of this (group, name) on each rank, or the sequence number.
    pub index: i64,
    pub ranks: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<i64>,
    /// The shortest duration across ranks: the transfer itself.
    pub transfer_us: f64,
    /// Summed waiting of all ranks (duration minus transfer).
    pub wait_us: f64,
    /// Latest start minus earliest start (meaningful when the ranks share a clock).
    pub skew_us: f64,
    /// The row of the rank that arrived last (its kernel was the shortest).
    pub last_row: usize,
    /// (row, duration) per rank.
    pub durations_us: Vec<(usize, f64)>,
    /// Algorithm bandwidth: bytes / transfer time, when the message size is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algbw_gbps: Option<f64>,
}

impl MatchedCollective {
    /// Bus bandwidth (GB/s): the algorithm bandwidth times NCCL's factor for the collective
    /// over its ranks, so that every collective reads against the link's speed (nccl-tests'
    /// PERFORMANCE.md): all-reduce 2(n-1)/n; reduce-scatter and all-to-all (n-1)/n; all-gather
    /// (n-1)/n of its output, n times the input message the trace records; broadcast, reduce,
    /// send / recv 1. None for names it does not know.
    pub fn busbw_gbps(&self) -> Option<f64> {
        let algbw = self.algbw_gbps?;
        let n = self.ranks.max(1) as f64;
        let name: String = self.name.to_lowercase().chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        let has = |w: &str| name.contains(w);
        let factor = if has("allreduce") {
            2.0 * (n - 1.0) / n
        } else if has("reducescatter") || has("alltoall") {
            (n - 1.0) / n
        } else if has("allgather") {
            n - 1.0
        } else if has("broadcast") || has("reduce") || has("send") || has("recv") {
            1.0
        } else {
            return None;
        };
        Some(algbw * factor)
    }
}

/// The ranks of one job: whether they are one job, the spread of each metric, and the
/// collectives matched across ranks with the rank that holds the others back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobView {
    pub one_job: bool,
    pub notes: Vec<String>,
    pub world_size: Option<i64>,
    pub metrics: Vec<MetricSpread>,
    /// Collectives matched by sequence number (else by order of name per group).
    pub matched_by_seq: bool,
    /// Collectives found on one rank only.
    pub unmatched: u64,
    /// The row of the rank that caused the most waiting, if any.
    pub straggler: Option<usize>,
    pub waits: Vec<RankWait>,
    /// Matched collectives, largest wait first (at most 200).
    pub collectives: Vec<MatchedCollective>,
    /// The job's critical path through its matched collectives, in order: per collective the
    /// rank that arrived last and what held it (from that rank's own path).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub critical_path: Vec<super::critical_path::JobStretch>,
    /// Stretches a share link left out (it carries the first
    /// [`JobStretch::LINK_STRETCHES`](super::JobStretch::LINK_STRETCHES)); 0 in a report read
    /// from traces.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub critical_path_not_carried: u64,
}

impl JobView {
    /// The stretches of the job's path, carried or not.
    pub fn critical_path_len(&self) -> u64 {
        self.critical_path.len() as u64 + self.critical_path_not_carried
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[cfg(test)]
mod tests {
    use super::MatchedCollective;

    fn collective(name: &str, ranks: usize) -> MatchedCollective {
        MatchedCollective {
            name: name.into(),
            group: None,
            seq: None,
            index: 0,
            ranks,
            bytes: Some(1 << 30),
            transfer_us: 10_000.0,
            wait_us: 0.0,
            skew_us: 0.0,
            last_row: 0,
            durations_us: Vec::new(),
            algbw_gbps: Some(100.0),
        }
    }

    #[test]
    fn bus_bandwidth_by_nccl_factors() {
        let bus = |name: &str, n: usize| collective(name, n).busbw_gbps();
        assert_eq!(bus("allreduce", 8), Some(175.0), "2(n-1)/n");
        assert_eq!(bus("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 4), Some(150.0));
        assert_eq!(bus("_reduce_scatter_base", 8), Some(87.5), "(n-1)/n");
        assert_eq!(bus("all_to_allv", 2), Some(50.0));
        assert_eq!(bus("all_gather_into_tensor", 8), Some(700.0), "the input message, n times over");
        assert_eq!(bus("broadcast", 8), Some(100.0));
        assert_eq!(bus("send", 2), Some(100.0));
        assert_eq!(bus("barrier", 8), None);
        let mut unknown_size = collective("allreduce", 8);
        unknown_size.algbw_gbps = None;
        assert_eq!(unknown_size.busbw_gbps(), None);
    }
}
