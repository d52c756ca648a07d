//! Collective calls and their per-rank bandwidth from the message sizes the profiler recorded.

use serde::{Deserialize, Serialize};

/// What one rank's trace cannot tell: a collective kernel runs from this rank's arrival until
/// the last rank's data is through, so its time includes waiting for the others.
pub const BANDWIDTH_CAVEAT: &str = "one rank's kernel time includes waiting for the other ranks to arrive, so these rates are lower bounds on the links' (transfer and waiting look the same from one rank): compare the ranks' traces together (several files at once) to see the waiting";

/// Collective bandwidth per collective kind and group size, from the `record_param_comms`
/// sizes on NCCL kernels (or the op around their launch): algbw = bytes / kernel time, busbw =
/// algbw x the collective's bus factor (nccl-tests doc/PERFORMANCE.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectiveBandwidth {
    pub kinds: Vec<BandwidthRow>,
    /// Collective kernels left out: no size, dtype or group size recorded (calls, us).
    pub unsized_calls: u64,
    pub unsized_us: f64,
    /// [`BANDWIDTH_CAVEAT`], in the JSON too.
    pub caveat: String,
}

/// One collective kind at one group size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthRow {
    /// Normalised collective name (`allreduce`, `allgather`, ...).
    pub name: String,
    pub group_size: i64,
    pub calls: u64,
    /// The collective's size S per call, summed: the larger of its input and output (the
    /// gathered output of an all-gather, the input of a reduce-scatter), as nccl-tests counts.
    pub bytes: f64,
    /// Summed kernel time (us).
    pub time_us: f64,
    /// bytes / time (GB/s, 1e9 bytes).
    pub algbw_gb_s: f64,
    /// busbw / algbw: 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and
    /// all-to-all, 1 for broadcast and reduce; None for kinds nccl-tests gives none (send/recv).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busbw_gb_s: Option<f64>,
}

/// One collective kernel: what it was (from its metadata, else its op or kernel name), when it
/// ran on this rank's GPU (trace clock, nanoseconds) and how many bytes it moved when known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectiveCall {
    /// Normalised collective name: `allreduce`, `allgather`, `alltoall`, `sendrecv`, ...
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    pub start_ns: i64,
    pub dur_ns: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<i64>,
    /// The output's bytes ("Out msg nelems" x dtype): an all-gather's gathered output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_bytes: Option<i64>,
    /// Ranks in the collective's group ("Group size").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_size: Option<i64>,
}
