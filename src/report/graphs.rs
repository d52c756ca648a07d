//! CUDA/HIP graph replays: which graphs were replayed, how often, under which op, and how much
//! of their time was mapped back to the ops that captured the kernels (with a capture trace).

use serde::{Deserialize, Serialize};

/// The graph launches of a trace, grouped by graph. None in a trace without graph launches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphReplays {
    /// Graph launch calls that replayed GPU rows in this trace.
    pub launches: u64,
    /// GPU time (us) of the rows they replayed.
    pub replayed_us: f64,
    /// Distinct graphs, most GPU time first (at most [`GraphReplays::MAX_GRAPHS`]).
    pub graphs: Vec<ReplayedGraph>,
    /// Distinct graphs left out of `graphs`.
    #[serde(default)]
    pub more_graphs: u64,
    /// What a capture trace given beside this one mapped; None when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureMatch>,
}

impl GraphReplays {
    pub const MAX_GRAPHS: usize = 20;
}

/// One graph: the replays with the same graph id (when the profiler writes one), else the same
/// kernel-name sequence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayedGraph {
    /// "G1", "G2", ... by GPU time.
    pub label: String,
    /// The profiler's graph id (CUDA 12+ writes it on replayed rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_id: Option<i64>,
    /// 16 hex digits: a hash of the kernel-name sequence of its first replay.
    pub signature: String,
    pub launches: u64,
    /// GPU rows per replay: fewest and most (equal when every replay ran the same rows).
    pub rows_min: u64,
    pub rows_max: u64,
    pub gpu_us: f64,
    /// The first kernels of a replay (short names), to recognise the graph.
    pub first_kernels: Vec<String>,
    /// The op or annotation chain around the launch call (outermost first, " > "), for the
    /// most launches, and how many launches ran under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched_under: Option<String>,
    #[serde(default)]
    pub launched_under_count: u64,
    /// GPU time of its rows mapped to the op that captured them.
    #[serde(default)]
    pub matched_us: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<MatchMethod>,
}

/// How replayed rows were mapped to captured launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchMethod {
    /// The rows' graph node ids, in order, against the capture's launches in order.
    NodeOrder,
    /// The replay's kernel-name sequence aligned with the capture's.
    KernelSequence,
}

impl MatchMethod {
    pub fn label(self) -> &'static str {
        match self {
            MatchMethod::NodeOrder => "by graph node order",
            MatchMethod::KernelSequence => "by kernel-name sequence",
        }
    }
}

/// What the capture trace (or an eager trace of the same step) mapped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CaptureMatch {
    pub file: String,
    /// Capture windows (BeginCapture .. EndCapture) found in it; 0: an eager trace, read as one
    /// sequence of launches.
    pub captured_graphs: u64,
    /// Launch calls (kernels, copies, memsets) inside them, or launches of the eager trace.
    pub captured_launches: u64,
    /// Captured launches with a known kernel name (from the call's `kernel` argument or the
    /// row it ran); only these can be aligned by name.
    pub named_launches: u64,
    pub replayed_rows: u64,
    pub matched_rows: u64,
    pub replayed_us: f64,
    pub matched_us: f64,
    /// Of it, rows whose captured launch had an op around it (the rest keep the op around the
    /// graph launch).
    pub matched_to_op_us: f64,
    pub by_node_order_us: f64,
    pub by_sequence_us: f64,
}

impl CaptureMatch {
    pub fn matched_pct(&self) -> f64 {
        self.matched_us / self.replayed_us.max(f64::MIN_POSITIVE) * 100.0
    }
}
