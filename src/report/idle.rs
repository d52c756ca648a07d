//! Why the GPU idled: the causes of its idle, per stream, and what the CPU did meanwhile.

use serde::{Deserialize, Serialize};

/// Why the GPU idled. The totals split the device's idle (the gaps of the busy union of every
/// stream: they sum to `gpu.idle_us`), each gap by the row that ends it; `streams` holds each
/// stream's own gaps, classified as HolisticTraceAnalysis does (they overlap other streams'
/// work, so their sum can exceed the idle).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IdleCauses {
    /// The launch call of the row that ended the gap began after the GPU went idle: the CPU
    /// was late.
    pub host_wait_us: f64,
    /// Gaps shorter than `kernel_wait_threshold_us` (launch-to-launch overhead).
    pub kernel_wait_us: f64,
    /// Other gaps (waiting on another stream, an event, or a row with no launch call).
    pub other_us: f64,
    /// Gaps between consecutive rows on a stream, every stream counted.
    pub gaps: u64,
    pub kernel_wait_threshold_us: f64,
    /// The innermost op running on the launching thread during host-wait gaps.
    pub host_ops: Vec<NameTime>,
    /// Synchronising calls that overlapped idle time on the GPU.
    pub syncs: Vec<NameTime>,
    /// Per device and stream.
    pub streams: Vec<StreamIdle>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamIdle {
    pub device: i64,
    pub stream: i64,
    pub host_wait_us: f64,
    pub kernel_wait_us: f64,
    pub other_us: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NameTime {
    pub name: String,
    /// Display form of the name (see `analysis::kernel_name`).
    #[serde(default)]
    pub short: String,
    pub time_us: f64,
    pub count: u64,
}
