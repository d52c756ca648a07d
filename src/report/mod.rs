//! The Report: the one result every front end shows (CLI text, CLI `--json`, the web views,
//! share links, golden tests). Field names listed in the JSON contract (docs/cli.md) are stable:
//! add fields freely, never rename those. Times are microseconds (f64), shares are percent.

#![forbid(unsafe_code)]

pub use crate::vocab::Severity;
use crate::vocab::{Backend, Bucket as BucketId, DiagnosticId, HintId};
use serde::{Deserialize, Serialize};

mod bandwidth;
mod coverage;
mod critical_path;
mod efficiency;
mod graphs;
mod idle;
mod job;
mod layers;
mod memory;
mod steps;
mod timeline;
mod window;

pub use bandwidth::{BandwidthRow, CollectiveBandwidth, CollectiveCall, BANDWIDTH_CAVEAT};
pub use coverage::{BucketEvidence, LaunchCoverage};
pub use critical_path::{
    index_piece_names, name_index, Arrival, CriticalPath, JobStretch, PathBucket, PathPiece, PathSegment, PathSide,
    PathStream, StepPath, StepTooLarge, WhatIf,
};
pub use efficiency::{
    Bound, BucketWork, Efficiency, KernelWork, Mfu, ModelSize, Peaks, WorkCoverage, WorkSource, ABOVE_ROOF,
    LINK_KERNELS, TARGET_PCT,
};
pub use graphs::{CaptureMatch, GraphReplays, MatchMethod, ReplayedGraph};
pub use idle::{IdleCauses, NameTime, StreamIdle};
pub use job::{JobView, MatchedCollective, MetricSpread, RankMetric, RankRow, RankWait};
pub use layers::LayerNode;
pub use memory::{MemoryDevice, MemoryView};
pub use steps::{HfModel, Step, StepLaunch};
pub use timeline::{LaneBin, StepMark, Timeline, TimelineLane};
pub use window::TimeWindow;

/// Everything tracesight says about one or more trace files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub tool_version: String,
    /// One entry per trace that could be read, in rank order (then file name).
    pub traces: Vec<TraceReport>,
    /// Files that could not be read at all: each with a one-line reason.
    #[serde(default)]
    pub errors: Vec<FileError>,
    /// Side-by-side numbers when more than one rank was analysed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankRow>,
    /// The job view of those ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileError {
    pub file: String,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceReport {
    pub file: String,
    /// Number of trace events visited (all phases and categories).
    pub events: u64,
    /// Bytes of JSON read (after decompression).
    #[serde(default)]
    pub json_bytes: u64,
    pub device: DeviceInfo,
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    #[serde(default)]
    pub distributed_backend: Option<String>,
    /// True when the trace has GPU activity rows (kernel / memcpy / memset).
    #[serde(default)]
    pub has_gpu: bool,
    pub gpu: GpuTime,
    /// Per device, only when the file has more than one device with GPU rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceTime>,
    pub buckets: Vec<Bucket>,
    pub attention: Attention,
    pub top_kernels: Vec<TopRow>,
    pub top_ops: Vec<TopRow>,
    pub steps: Vec<Step>,
    pub hints: Vec<Hint>,
    pub diagnostics: Vec<Diagnostic>,
    /// Kernel launch statistics behind the launch-bound and efficiency hints.
    #[serde(default)]
    pub launch: LaunchStats,
    /// GPU time by how it was launched (by an op, by graph replay, with no launch).
    #[serde(default)]
    pub launch_coverage: LaunchCoverage,
    /// GPU time by what decided its bucket (the launching op, the name, nothing); absent
    /// without GPU rows, and from links.
    #[serde(default, skip_serializing_if = "BucketEvidence::is_empty")]
    pub bucket_evidence: BucketEvidence,
    /// Whether the trace shows training (backward ops or an optimizer) or only inference.
    #[serde(default)]
    pub training: bool,
    /// memcpy / memset rows by direction.
    #[serde(default)]
    pub copies: Copies,
    /// GEMM and convolution kernel time by whether it runs on tensor cores.
    #[serde(default)]
    pub tensor_cores: TensorCoreUse,
    /// Every kernel name with its bucket (all of them: what a diff between runs needs).
    #[serde(default)]
    pub kernels: Vec<KernelTotal>,
    /// Every launching op with the GPU time it launched.
    #[serde(default)]
    pub ops: Vec<OpTotal>,
    /// Every collective kernel on this rank, in time order (what matching across ranks needs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collectives: Vec<CollectiveCall>,
    /// Per-rank bandwidth of those collectives by kind, where their sizes were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collective_bandwidth: Option<CollectiveBandwidth>,
    /// Why the GPU waits: every gap between rows on a stream, classified.
    #[serde(default)]
    pub idle: IdleCauses,
    /// GPU time by layer (`nn.Module`, else the outermost op under the step), forward and
    /// backward.
    #[serde(default)]
    pub layers: Vec<LayerNode>,
    /// Memory over time, from `[memory]` events (None when the trace has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryView>,
    /// FLOPs, bytes, roofline efficiency and MFU (None without kernels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<Efficiency>,
    /// GPU utilisation over time, downsampled (bounded size whatever the trace's length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
    /// The time range the analysis was restricted to (`--range`), on the trace's clock; None
    /// for the whole trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<TimeWindow>,
    /// CUDA/HIP graph replays grouped by graph (None without graph launches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphs: Option<GraphReplays>,
    /// The critical path of each step (what bounds it), and the what-if asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_path: Option<CriticalPath>,
}

/// A kernel name's total in one bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelTotal {
    pub name: String,
    pub bucket: BucketId,
    pub time_us: f64,
    pub count: u64,
}

/// A launching op's total GPU time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpTotal {
    pub name: String,
    pub time_us: f64,
    pub count: u64,
}

/// memcpy / memset GPU time by direction (microseconds, summed row durations).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Copies {
    pub host_to_device_us: f64,
    pub device_to_host_us: f64,
    /// Host copies from or to pageable (not pinned) host memory.
    pub pageable_us: f64,
    pub device_to_device_us: f64,
    pub peer_to_peer_us: f64,
    pub memset_us: f64,
}

/// GEMM / convolution kernel time split by tensor-core use (from the kernel family's name).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TensorCoreUse {
    pub tensor_core_us: f64,
    /// fp32/fp64 SIMT kernels (sgemm, fp32 cuDNN implicit GEMM / winograd / FFT).
    pub simt_us: f64,
    /// Matrix-vector shaped kernels (gemv, gemmk1): SIMT by shape, not by precision.
    #[serde(default)]
    pub vector_us: f64,
    /// Kernels whose name does not tell.
    pub unknown_us: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub name: Option<String>,
    pub sm_count: Option<i64>,
    #[serde(default)]
    pub compute_capability: Option<String>,
    #[serde(default)]
    pub memory_gb: Option<f64>,
    /// How many devices the trace's metadata lists.
    #[serde(default)]
    pub count: usize,
}

/// Time metrics in the HolisticTraceAnalysis / TensorBoard sense (see docs/definitions.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuTime {
    /// Sum of GPU row durations (kernels + memcpy + memset), overlaps counted twice.
    pub kernel_time_us: f64,
    /// |union of GPU intervals|.
    pub busy_us: f64,
    /// Last GPU end - first GPU start.
    pub span_us: f64,
    /// span - busy.
    pub idle_us: f64,
    /// |union of compute (non-communication) GPU intervals|.
    pub compute_us: f64,
    /// |union of communication kernel intervals|.
    pub comm_us: f64,
    /// |comm - compute|: communication time not hidden behind computation.
    pub exposed_comm_us: f64,
    /// |comm AND compute| / |comm| in percent (0 when there is no communication).
    pub overlap_pct: f64,
    /// |union of memcpy + memset intervals|.
    #[serde(default)]
    pub memory_us: f64,
    /// Number of GPU rows.
    #[serde(default)]
    pub kernel_count: u64,
    /// Duration-weighted estimate in percent (TensorBoard's definition), when the trace has
    /// `blocks per SM`.
    #[serde(default)]
    pub est_sm_efficiency_pct: Option<f64>,
    /// Duration-weighted `est. achieved occupancy %`, when present, over the kernels whose
    /// figure is not 0 (which the profiler writes when it has none).
    #[serde(default)]
    pub achieved_occupancy_pct: Option<f64>,
    /// Kernel time whose occupancy was written as 0 (unknown), left out of the average.
    #[serde(default)]
    pub occupancy_unknown_us: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceTime {
    pub device: i64,
    #[serde(flatten)]
    pub time: GpuTime,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The stable id (`gemm`, `attention`, ..., see docs/definitions.md).
    pub id: BucketId,
    /// Display name.
    pub name: String,
    pub time_us: f64,
    pub pct: f64,
    pub count: u64,
    /// What puts a GPU row in this bucket (the rule definition, in words).
    pub rule: String,
    /// The rules that actually matched in this trace, with their time.
    #[serde(default)]
    pub matched: Vec<RuleHit>,
    /// The largest kernel names in the bucket.
    pub top_names: Vec<NameTime>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleHit {
    pub rule: String,
    pub time_us: f64,
    pub count: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Attention {
    /// `flash`, `flash-attn`, `memory-efficient`, `cudnn`, `math`, `eager`, `vendor`, or `none`.
    pub backend: Backend,
    /// The library of the winning backend's kernels, when the name tells (FlashInfer, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// GPU time of the winning backend's rows.
    pub time_us: f64,
    /// Total GPU time attributed to attention (all backends).
    #[serde(default)]
    pub total_us: f64,
    pub evidence: Vec<Evidence>,
    /// Why the fused flash kernel may not have been chosen (from the SDPA op's arguments).
    #[serde(default)]
    pub not_flash_reasons: Vec<String>,
    /// The suggested fix when the backend is not flash (None when flash or none).
    #[serde(default)]
    pub fix: Option<String>,
    /// The Hugging Face model family its `nn.Module` names show, if one is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hf_model: Option<HfModel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub backend: Backend,
    /// What kind of name is the evidence.
    pub kind: EvidenceKind,
    pub name: String,
    /// Display form of the name.
    #[serde(default)]
    pub short: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    pub time_us: f64,
    pub count: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvidenceKind {
    /// A kernel whose name is a backend's signature.
    Kernel,
    /// The op the kernels ran under.
    Op,
    /// The module or op a hand-written attention was found in.
    Scope,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopRow {
    pub name: String,
    /// Display form of the name (kernels: see `analysis::kernel_name`; ops: the name).
    #[serde(default)]
    pub short: String,
    pub time_us: f64,
    pub pct: f64,
    pub count: u64,
    pub mean_us: f64,
    pub max_us: f64,
    /// Kernels: the op that launched the most of its time. Ops: the most common parent op.
    pub op: Option<String>,
    /// The bucket of this row's time (a kernel whose time falls into several buckets has a
    /// row per bucket; an op's is its largest share).
    pub bucket: BucketId,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hint {
    pub id: HintId,
    /// `info`, `warning` or `critical`.
    pub severity: Severity,
    pub message: String,
    /// The numbers that triggered the hint, as readable `name = value` strings.
    pub evidence: Vec<String>,
    /// What to try.
    #[serde(default)]
    pub fix: String,
    /// The GPU time the hint is about, in microseconds: what fixing it could win at most (idle
    /// time, exposed communication, a bucket's time, ...; each rule's is in docs/definitions.md).
    /// Whole microseconds; hints are ranked by it.
    #[serde(default)]
    pub stake_us: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub id: DiagnosticId,
    pub count: u64,
    pub message: String,
    /// `info`, `warning` or `error`.
    pub severity: Severity,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchStats {
    /// Kernels whose launching runtime call was found.
    pub launched_kernels: u64,
    /// Of those, kernels that ran shorter than their launch call took on the CPU (graph
    /// launches excluded: one call replays many kernels).
    pub shorter_than_launch: u64,
    /// Kernels replayed by a CUDA/HIP graph launch (not in `launched_kernels`).
    #[serde(default)]
    pub graph_kernels: u64,
    /// CUDA/HIP graph launch calls (`cudaGraphLaunch`, `hipGraphLaunch`) and their CPU time.
    #[serde(default)]
    pub graph_launches: u64,
    #[serde(default)]
    pub graph_launch_call_us: f64,
    /// Total time of runtime launch calls.
    pub launch_call_us: f64,
    /// Total time in synchronising runtime calls (cudaDeviceSynchronize, ...).
    pub sync_call_us: f64,
}

impl std::fmt::Display for EvidenceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            EvidenceKind::Kernel => "kernel",
            EvidenceKind::Op => "op",
            EvidenceKind::Scope => "scope",
        })
    }
}
