//! The launch coverage line and the graph replays, grouped by graph.

use super::fmt::clip;
use crate::report::{GraphReplays, TraceReport};
use crate::vocab::units::fmt_us;
use std::fmt::Write;

/// " GPU time launched by an op ..." and, when graphs were replayed, one line per graph and
/// what a capture trace mapped (or that mapping needs one).
pub(super) fn render_coverage(o: &mut String, t: &TraceReport) {
    let _ = writeln!(o, " GPU time {}", t.launch_coverage.line());
    if let Some(g) = &t.graphs {
        for line in graph_lines(g) {
            let _ = writeln!(o, "   {line}");
        }
    }
}

/// The graph section as lines (the text report indents them; Markdown lists them).
pub fn graph_lines(g: &GraphReplays) -> Vec<String> {
    let distinct = g.graphs.len() as u64 + g.more_graphs;
    let mut out = vec![format!(
        "Graph replays: {} launch{} of {distinct} graph{}, {}",
        g.launches,
        if g.launches == 1 { "" } else { "es" },
        if distinct == 1 { "" } else { "s" },
        fmt_us(g.replayed_us)
    )];
    for r in &g.graphs {
        let rows = if r.rows_min == r.rows_max {
            format!("{} rows", r.rows_min)
        } else {
            format!("{}-{} rows", r.rows_min, r.rows_max)
        };
        let id = r.graph_id.map(|i| format!(" (graph id {i})")).unwrap_or_default();
        let under = match &r.launched_under {
            Some(u) => format!(", launched under {} ({}x)", clip(u, 90), r.launched_under_count),
            None => ", launched outside any op".to_string(),
        };
        let matched = match r.method {
            Some(m) => format!(", {} matched {}", fmt_us(r.matched_us), m.label()),
            None => String::new(),
        };
        out.push(format!(
            "{}{id}: {} replay{} x {rows}, {}{under}{matched}; sequence {}, starts {}",
            r.label,
            r.launches,
            if r.launches == 1 { "" } else { "s" },
            fmt_us(r.gpu_us),
            r.signature,
            r.first_kernels.iter().map(|k| clip(k, 40)).collect::<Vec<_>>().join(", ")
        ));
    }
    if g.more_graphs > 0 {
        out.push(format!("... and {} more graphs", g.more_graphs));
    }
    out.push(match &g.capture {
        None => "Per-op attribution of replayed kernels needs the capture trace (--capture FILE): the op above \
                 is the one around the launch, not the ones that captured the kernels."
            .to_string(),
        Some(k) => format!(
            "Capture {}: {} captured graph{} ({} launches, {} named); matched {} of {} replayed rows, {} of {} \
             ({:.1}%: by graph node order {}, by kernel-name sequence {}), {} of it to a captured op",
            k.file,
            k.captured_graphs,
            if k.captured_graphs == 1 { "" } else { "s" },
            k.captured_launches,
            k.named_launches,
            k.matched_rows,
            k.replayed_rows,
            fmt_us(k.matched_us),
            fmt_us(k.replayed_us),
            k.matched_pct(),
            fmt_us(k.by_node_order_us),
            fmt_us(k.by_sequence_us),
            fmt_us(k.matched_to_op_us)
        ),
    });
    out
}
