//! Plain-text rendering of a Report (the CLI's default output, in the seed's section order),
//! and the small formatting helpers the web views share.

#![forbid(unsafe_code)]

use crate::report::Report;
use std::fmt::Write;

mod bandwidth;
mod critical_path;
mod efficiency;
mod fmt;
mod graphs;
mod ranks;
mod timeline;
mod trace;
mod why;

pub use crate::analysis::rules::kernel_name::short_name;
pub use crate::vocab::units::fmt_us;
pub(crate) use critical_path::{through, unseen};
use fmt::{clip, RULE};
pub use fmt::{fmt_bytes, no_gpu_rows_reason, sm_counters};
pub use graphs::graph_lines;
use ranks::render_ranks;
use trace::render_trace;

/// The whole text report: every trace, then the rank table and unreadable files.
pub fn render(report: &Report) -> String {
    let mut o = String::new();
    for t in &report.traces {
        render_trace(&mut o, t);
    }
    if !report.ranks.is_empty() {
        render_ranks(&mut o, report);
    }
    for e in &report.errors {
        let _ = writeln!(o, "\n[error] {}: {}", e.file, e.message);
    }
    o
}

/// The text of a diff between two runs.
pub fn render_diff(d: &crate::analysis::job::diff::Diff, top: usize) -> String {
    use crate::analysis::job::diff::Status;
    let mut o = String::new();
    let _ = writeln!(o, "\n{RULE}\n A: {}\n B: {}\n{RULE}", d.a_files.join(", "), d.b_files.join(", "));
    let _ = writeln!(o, " {}", d.verdict);
    let pct = |c: &crate::analysis::job::diff::Change| match (c.rel_pct, c.status) {
        (Some(p), _) => format!("{p:+.1}%"),
        (None, Status::New) => "new".into(),
        _ => String::new(),
    };
    let _ = writeln!(o, "\n {:28} {:>12} {:>12} {:>12} {:>8}", "per rank", "A", "B", "change", "");
    for m in &d.metrics {
        let c = &m.change;
        let _ = writeln!(
            o,
            " {:28} {:>12} {:>12} {:>12} {:>8}",
            m.metric.label(),
            fmt_us(c.a_us),
            fmt_us(c.b_us),
            fmt_us(c.delta_us),
            pct(c)
        );
    }
    let _ = writeln!(o, "\n {:28} {:>12} {:>12} {:>12} {:>8}", "bucket", "A", "B", "change", "");
    for b in &d.buckets {
        let c = &b.change;
        let _ = writeln!(
            o,
            " {:28} {:>12} {:>12} {:>12} {:>8}",
            clip(b.bucket.name(), 28),
            fmt_us(c.a_us),
            fmt_us(c.b_us),
            fmt_us(c.delta_us),
            pct(c)
        );
    }
    if d.backend_a != d.backend_b {
        let _ = writeln!(o, "\n Attention backend: {} -> {}", d.backend_a.label(), d.backend_b.label());
    } else {
        let _ = writeln!(o, "\n Attention backend: {} (unchanged)", d.backend_a.label());
    }
    for (title, rows, same) in [("kernels", &d.kernels, d.unchanged_kernels), ("ops", &d.ops, d.unchanged_ops)] {
        let _ = writeln!(o, "\n Changed {title} ({} changed, new or gone; {same} unchanged):", rows.len());
        for r in rows.iter().take(top) {
            let tag = match r.change.status {
                Status::New => "new",
                Status::Gone => "gone",
                _ => "",
            };
            let _ = writeln!(
                o,
                " {:>12} {:>8} {:>4}  {}",
                fmt_us(r.change.delta_us),
                r.change.rel_pct.map(|p| format!("{p:+.0}%")).unwrap_or_default(),
                tag,
                clip(&short_name(&r.name), 90)
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_by_magnitude() {
        assert_eq!(fmt_us(0.0), "0 us");
        assert_eq!(fmt_us(3.136), "3.14 us");
        assert_eq!(fmt_us(532.4), "532 us");
        assert_eq!(fmt_us(1532.4), "1.53 ms");
        assert_eq!(fmt_us(2_500_000.0), "2.50 s");
    }
}
