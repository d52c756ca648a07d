//! How far from fast: the work the trace's ops did (FLOPs, bytes), what rate that is against
//! the device's peaks, and MFU. Every figure says where it came from.

use crate::vocab::{Bucket as BucketId, Precision};
use serde::{Deserialize, Serialize};

/// Where an op's FLOPs come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkSource {
    /// Computed here from the op's recorded shapes (`record_shapes=True`).
    Shapes,
    /// The profiler's own count (`with_flops=True`: the op's `flops` argument).
    Profiler,
    /// Inductor's count on the kernel (`kernel_flop` / `kernel_num_gb` arguments).
    Inductor,
}

impl WorkSource {
    pub fn id(self) -> &'static str {
        match self {
            WorkSource::Shapes => "shapes",
            WorkSource::Profiler => "profiler",
            WorkSource::Inductor => "inductor",
        }
    }
}

/// What limits a kernel at its arithmetic intensity: the compute roof or the memory roof
/// (which of the two is lower at that intensity, against the ridge point).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Compute,
    Memory,
}

/// The peaks efficiency is measured against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peaks {
    /// The device as the table names it, or "user figures".
    pub device: String,
    /// Dense peak TFLOP/s per precision (only those the device has).
    pub tflops: Vec<(Precision, f64)>,
    /// Memory bandwidth, TB/s.
    pub tbps: f64,
    /// The datasheet or whitepaper, or "given on the command line / page".
    pub source: String,
}

/// One kernel name's work and rate (or one op name's: the kernels it launched together, with
/// `short` its name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelWork {
    /// The kernel's name as the trace writes it, and shortened (as in the kernel tables).
    pub name: String,
    pub short: String,
    pub bucket: BucketId,
    /// Time of the rows that carry work (us).
    pub time_us: f64,
    pub count: u64,
    pub flops: f64,
    pub bytes: f64,
    /// The precision that holds most of this kernel's FLOPs.
    pub precision: Option<Precision>,
    pub source: WorkSource,
    /// True when some of its ops launched several kernels, so their work was split by time.
    #[serde(default)]
    pub split: bool,
    /// True when some of its work is causal attention, counted as half the full product.
    #[serde(default)]
    pub causal: bool,
    pub tflops_per_s: f64,
    pub tbps: f64,
    /// FLOP per byte; None with no bytes.
    pub intensity: Option<f64>,
    /// % of the compute peak for its precision; None without peaks or FLOPs.
    pub pct_of_peak: Option<f64>,
    /// % of the memory bandwidth; None without peaks or bytes.
    pub pct_of_bandwidth: Option<f64>,
    pub bound: Option<Bound>,
    /// What its time would be at [`TARGET_PCT`] of the roof at its intensity, and the time
    /// that saves (0 when already there).
    pub recoverable_us: f64,
}

/// % of the roof (the lower of the compute and memory roofs at the kernel's intensity) that
/// "recoverable time" assumes a tuned kernel reaches.
pub const TARGET_PCT: f64 = 70.0;

/// Kernels a share link carries: those the Markdown summary lists (the most recoverable).
pub const LINK_KERNELS: usize = 5;

impl Efficiency {
    /// What a share link carries: the peaks, the totals and coverage (without the unmodelled
    /// ops' names), the trace's MFU and the most recoverable kernels; steps' MFU, buckets and
    /// the other kernels stay in the report.
    pub fn link_subset(&self) -> Efficiency {
        let mut e = self.clone();
        e.coverage.unmodelled_ops.clear();
        e.kernels.retain(|k| k.recoverable_us > 0.0);
        e.kernels.truncate(LINK_KERNELS);
        e.buckets.clear();
        e.ops.clear();
        e.mfu.truncate(1);
        e
    }
}

impl KernelWork {
    /// % of the roof at its intensity: of the compute peak when compute-bound, of the bandwidth
    /// when memory-bound.
    pub fn roof_pct(&self) -> Option<f64> {
        match self.bound? {
            Bound::Compute => self.pct_of_peak,
            Bound::Memory => self.pct_of_bandwidth,
        }
    }

    /// Above 100% of a roof: its data came from cache (L2 beats the memory bandwidth), or the
    /// work estimated from its shapes is more than it did.
    pub fn above_roof(&self) -> bool {
        self.pct_of_peak.is_some_and(|p| p > 100.0) || self.pct_of_bandwidth.is_some_and(|p| p > 100.0)
    }
}

/// What a kernel above its roof means, for every front end.
pub const ABOVE_ROOF: &str = "above 100% of a roof: the algorithm does fewer operations than the formula counts (Winograd or FFT convolutions), its data came from cache (L2 is faster than the memory bandwidth), or the shapes overstate its work";

/// A bucket's time-weighted efficiency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketWork {
    pub bucket: BucketId,
    pub time_us: f64,
    pub flops: f64,
    pub bytes: f64,
    /// Time-weighted mean of the kernels' % of their roof at their intensity.
    pub pct_of_roof: Option<f64>,
}

/// Model FLOPs utilisation over one window (a step, or the trace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mfu {
    pub name: String,
    pub span_us: f64,
    /// FLOPs of the kernels that started in the window (measured from the trace's shapes and
    /// counts).
    pub flops: f64,
    /// The precision that holds most FLOPs; the peak MFU is taken against.
    pub precision: Option<Precision>,
    pub mfu_pct: Option<f64>,
    /// 6·N·T / (span x peak), when the model's parameters and tokens per step are given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analytic_mfu_pct: Option<f64>,
}

/// The analytic model figures the user gave.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelSize {
    pub params: f64,
    pub tokens_per_step: f64,
}

/// What the efficiency figures could see.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkCoverage {
    /// Kernel time whose launching op's work is known (us), by where the FLOPs came from.
    pub known_us: Vec<(WorkSource, f64)>,
    /// Kernel time launched by ops with shapes but no work model here (us), and the largest
    /// such ops.
    pub unmodelled_us: f64,
    pub unmodelled_ops: Vec<(String, f64)>,
    /// Kernel time launched by no op, by an op whose shapes were not recorded, or whose shapes
    /// do not fit the model (varlen attention, transposed convolution) (us).
    pub unknown_us: f64,
    /// Kernel time replayed by graph launches whose work is not known: the op around a launch
    /// is not the one that captured the kernel (per-op work needs the capture trace) (us).
    #[serde(default)]
    pub graph_us: f64,
    /// Kernel time in all, communication aside (us).
    pub kernel_us: f64,
    /// Communication kernels' time, left out (us): their rate is the links', in the collectives.
    #[serde(default)]
    pub communication_us: f64,
    /// Ops the trace recorded shapes for (0: `record_shapes` was off).
    pub ops_with_shapes: u64,
}

impl WorkCoverage {
    /// Kernel time whose work is known, whatever its source (us).
    pub fn known_total_us(&self) -> f64 {
        self.known_us.iter().map(|x| x.1).sum()
    }
}

/// The efficiency section of a trace's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Efficiency {
    /// None when the device is not in the table and no figures were given.
    pub peaks: Option<Peaks>,
    /// The device name as the trace wrote it, when the table does not know it (None: the
    /// table knows it, or the trace lists no device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_device: Option<String>,
    pub flops: f64,
    pub bytes: f64,
    pub coverage: WorkCoverage,
    /// Kernels with work, the largest recoverable time first: the top ones by recoverable time
    /// and the top ones by time.
    pub kernels: Vec<KernelWork>,
    /// The ops that launched kernels with work, by the time of those kernels, as many as the
    /// top ops table lists: the figures of that table's rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<KernelWork>,
    pub buckets: Vec<BucketWork>,
    /// The whole trace (its GPU span), then each step.
    pub mfu: Vec<Mfu>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSize>,
    /// FLOPs per parameter per token the analytic figure uses: 6 (forward and backward) for
    /// training, 2 (forward) for inference.
    pub analytic_factor: f64,
}
