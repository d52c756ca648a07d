//! The crate's leaf: the ids, severities, buckets and units every other layer speaks, with
//! their stable names and formatting. It imports nothing of the crate, so anything may use it.

#![forbid(unsafe_code)]

pub mod buckets;
pub mod ids;
pub mod precision;
pub mod units;

pub use buckets::{Backend, Bucket};
pub use ids::{DiagnosticId, HintId, IdleCause, Severity};
pub use precision::Precision;
pub use units::{fmt_si, fmt_us, pct, us};

/// The version written into every report.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");
