//! The time range an analysis was restricted to.

use serde::{Deserialize, Serialize};

/// A half-open time range `[start_ns, end_ns)` on the trace's clock (nanoseconds), and the
/// start of the whole trace's GPU timeline (its first GPU row), which times are shown from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeWindow {
    pub start_ns: i64,
    pub end_ns: i64,
    #[serde(default)]
    pub origin_ns: i64,
}

impl TimeWindow {
    /// Start and end in microseconds after the whole trace's first GPU row (as the timeline's
    /// axis and `--range` show them).
    pub fn after_first_row_us(&self) -> (f64, f64) {
        let us = |ns: i64| (ns - self.origin_ns) as f64 / 1000.0;
        (us(self.start_ns), us(self.end_ns))
    }
}
