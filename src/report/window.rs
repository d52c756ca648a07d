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
