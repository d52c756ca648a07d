//! The per-rank collective bandwidth table.

use super::fmt::{fmt_bytes, gbps};
use crate::report::TraceReport;
use crate::vocab::units::fmt_us;
use std::fmt::Write;

/// Per collective kind: calls, bytes, time, algbw and busbw, then what the figures cannot see.
pub(super) fn render_bandwidth(o: &mut String, t: &TraceReport) {
    let Some(b) = &t.collective_bandwidth else { return };
    let _ = writeln!(o, "\n Collective bandwidth on this rank (record_param_comms sizes; busbw as nccl-tests):");
    if !b.kinds.is_empty() {
        let _ = writeln!(
            o,
            " {:16} {:>5} {:>7} {:>10} {:>12} {:>10} {:>10}",
            "collective", "ranks", "# calls", "bytes", "time", "algbw GB/s", "busbw GB/s"
        );
    }
    for r in &b.kinds {
        let _ = writeln!(
            o,
            " {:16} {:>5} {:>7} {:>10} {:>12} {:>10} {:>10}",
            r.name,
            r.group_size,
            r.calls,
            fmt_bytes(r.bytes as i64),
            fmt_us(r.time_us),
            gbps(Some(r.algbw_gb_s)),
            gbps(r.busbw_gb_s)
        );
    }
    if b.unsized_calls > 0 {
        let _ = writeln!(
            o,
            "   {} collective kernels ({}) left out: no message size, dtype or group size recorded",
            b.unsized_calls,
            fmt_us(b.unsized_us)
        );
    }
    if !b.kinds.is_empty() {
        let _ = writeln!(o, "   ! {}", b.caveat);
    }
}
