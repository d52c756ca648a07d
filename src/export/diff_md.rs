//! A diff as Markdown, for a pull request comment: the verdict, the gates' results, the per-rank
//! figures and buckets, the largest changed kernels and ops.

use crate::analysis::job::diff::{Change, Diff, Status};
use crate::analysis::job::gate::Check;
use crate::vocab::fmt_us;
use std::fmt::Write;

fn rel(c: &Change) -> String {
    match (c.rel_pct, c.status) {
        (Some(p), _) => format!("{p:+.1}%"),
        (None, Status::New) => "new".into(),
        _ => String::new(),
    }
}

/// Table cells hold no pipes or newlines.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

pub fn render(d: &Diff, checks: &[Check], top: usize) -> String {
    let mut o = String::new();
    let failed = checks.iter().filter(|c| !c.passed).count();
    let _ = writeln!(o, "### tracesight diff\n\n**{}**\n", cell(&d.verdict));
    if !checks.is_empty() {
        let head = if failed == 0 {
            format!("All {} limits hold.", checks.len())
        } else {
            format!("{failed} of {} limits failed.", checks.len())
        };
        let _ = writeln!(o, "{head}\n");
        for c in checks {
            let _ = writeln!(o, "- {} `{}`", if c.passed { "✅" } else { "❌" }, cell(&c.message));
        }
        o.push('\n');
    }
    let _ = writeln!(o, "| per rank | A | B | change | |\n|---|---:|---:|---:|---:|");
    let rows = d.metrics.iter().map(|m| (m.metric.label(), &m.change));
    for (label, c) in rows.chain(d.buckets.iter().map(|b| (b.bucket.name(), &b.change))) {
        let _ =
            writeln!(o, "| {label} | {} | {} | {} | {} |", fmt_us(c.a_us), fmt_us(c.b_us), fmt_us(c.delta_us), rel(c));
    }
    if d.backend_a != d.backend_b {
        let _ = writeln!(o, "\nAttention backend: {} → {}", d.backend_a.label(), d.backend_b.label());
    }
    for (title, rows) in [("kernels", &d.kernels), ("ops", &d.ops)] {
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n<details><summary>Changed {title} ({})</summary>\n", rows.len());
        let _ = writeln!(o, "| change | | name |\n|---:|---:|---|");
        for r in rows.iter().take(top) {
            let _ = writeln!(o, "| {} | {} | `{}` |", fmt_us(r.change.delta_us), rel(&r.change), cell(&r.name));
        }
        let _ = writeln!(o, "\n</details>");
    }
    o
}
