//! Memory over time, from `[memory]` events.

use serde::{Deserialize, Serialize};

/// Memory of one device over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryDevice {
    /// The device id (-1 is host memory).
    pub device: i64,
    pub peak_allocated_bytes: i64,
    /// Peak time, microseconds after the first memory event.
    pub peak_at_us: f64,
    pub peak_reserved_bytes: Option<i64>,
    /// (time after the first event in us, allocated bytes, reserved bytes): at most 400 points,
    /// each the maximum of its time bin, so the peak is never lost.
    pub series: Vec<(f64, i64, Option<i64>)>,
    /// The ops holding the most memory at the peak (when the trace records addresses), else
    /// the ops that allocated most before the peak.
    pub top_ops: Vec<(String, i64)>,
    /// Whether top_ops are live allocations at the peak (addresses known).
    pub live_at_peak: bool,
    /// True when the allocator totals were missing and allocated memory is the running sum of
    /// allocations since the trace began.
    pub relative: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryView {
    pub events: u64,
    pub devices: Vec<MemoryDevice>,
}
