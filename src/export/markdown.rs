//! A Markdown summary of a Report: headline numbers, buckets, the attention verdict, top
//! kernels and ops, hints. GitHub-flavoured tables; every text from the trace (file, kernel
//! and op names) is escaped or put in a code span, so a name can never become markup.

mod critical_path;
mod escape;

use crate::analysis::rules::taxonomy::Backend;
use crate::report::{Report, TopRow, TraceReport};
use crate::text::fmt_us;
use crate::vocab::fmt_si;
use critical_path::critical_path;
use escape::{clip, prose};
pub use escape::{code, escape};
use std::fmt::Write;

/// Rows of the kernel and op tables in the summary (the JSON and CSV have them all).
pub const TOP_ROWS: usize = 10;
/// Names longer than this are cut (with `…`) to keep tables readable in chat.
const NAME_CHARS: usize = 90;

/// The whole summary: one section per trace, then the rank table and unreadable files.
pub fn render(report: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# tracesight report\n");
    if report.traces.len() > 1 {
        let _ = writeln!(o, "{} traces (tracesight {}).\n", report.traces.len(), escape(&report.tool_version));
    }
    if !report.ranks.is_empty() {
        let _ = writeln!(o, "## Ranks\n");
        let _ = writeln!(o, "| rank | file | kernel time | busy | idle | comm | exposed comm | busy vs slowest |");
        let _ = writeln!(o, "|---:|---|---:|---:|---:|---:|---:|---:|");
        for r in &report.ranks {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} | {:.1}% |",
                r.rank.map_or("–".to_string(), |x| x.to_string()),
                escape(&r.file),
                fmt_us(r.kernel_time_us),
                fmt_us(r.busy_us),
                fmt_us(r.idle_us),
                fmt_us(r.comm_us),
                fmt_us(r.exposed_comm_us),
                r.busy_vs_max_pct
            );
        }
        o.push('\n');
    }
    if let Some(j) = report.job.as_ref().filter(|j| j.critical_path_len() > 0) {
        critical_path::job_path(&mut o, report, j);
    }
    for t in &report.traces {
        trace(&mut o, t, report.job.is_some());
    }
    if !report.errors.is_empty() {
        let _ = writeln!(o, "## Files that could not be read\n");
        for e in &report.errors {
            let _ = writeln!(o, "- {}: {}", code(&e.file), escape(&e.message));
        }
        o.push('\n');
    }
    while o.ends_with("\n\n") {
        o.pop();
    }
    o
}

/// The device (with its SM count) and the rank, as the heading line names them.
fn device_and_rank(t: &TraceReport) -> (String, String) {
    let device = match (&t.device.name, t.device.sm_count) {
        (Some(n), Some(sm)) => format!("{} ({sm} SMs)", escape(n)),
        (Some(n), None) => escape(n),
        _ => "unknown device".into(),
    };
    let rank = match (t.rank, t.world_size) {
        (Some(r), Some(w)) => format!(" · rank {r} of {w}"),
        (Some(r), None) => format!(" · rank {r}"),
        _ => String::new(),
    };
    (device, rank)
}

fn trace(o: &mut String, t: &TraceReport, several: bool) {
    heading(o, t);
    if !t.has_gpu {
        let _ = writeln!(o, "**No GPU rows in this trace** ({}).\n", crate::text::no_gpu_rows_reason(t));
    } else {
        gpu_summary(o, t);
    }
    attention(o, t);
    buckets(o, t);
    top(o, "Top kernels", "kernel", &t.top_kernels, true);
    top(o, "Top ops", "op", &t.top_ops, false);
    efficiency(o, t);
    critical_path(o, t, several);
    bandwidth(o, t);
    hints(o, t);
}

/// The file, device, rank and event count, and the analysed range when there is one.
fn heading(o: &mut String, t: &TraceReport) {
    let _ = writeln!(o, "## {}\n", code(&t.file));
    let (device, rank) = device_and_rank(t);
    let _ = writeln!(o, "{device}{rank} · {} events\n", t.events);
    if let Some(w) = &t.window {
        let (from, to) = w.after_first_row_us();
        let _ = writeln!(
            o,
            "**Range:** {} – {} after the first GPU row (every number below is inside it).\n",
            fmt_us(from),
            fmt_us(to)
        );
    }
}

/// Span, busy and idle; how the GPU time was launched; graph replays; communication.
fn gpu_summary(o: &mut String, t: &TraceReport) {
    let g = &t.gpu;
    let sp = g.span_us.max(f64::MIN_POSITIVE);
    let _ = writeln!(o, "| GPU span | busy | idle | kernel time | GPU rows | steps |");
    let _ = writeln!(o, "|---:|---:|---:|---:|---:|---:|");
    let _ = writeln!(
        o,
        "| {} | {} ({:.1}%) | {} ({:.1}%) | {} | {} | {} |\n",
        fmt_us(g.span_us),
        fmt_us(g.busy_us),
        g.busy_us / sp * 100.0,
        fmt_us(g.idle_us),
        g.idle_us / sp * 100.0,
        fmt_us(g.kernel_time_us),
        g.kernel_count,
        t.steps.len()
    );
    let counters = crate::text::sm_counters(g);
    if !counters.is_empty() {
        let _ = writeln!(o, "{}\n", counters.join(" · "));
    }
    let lc = &t.launch_coverage;
    if lc.op_us < lc.total_us() {
        let _ = writeln!(o, "GPU time {}.\n", lc.line());
    }
    if let Some(g) = &t.graphs {
        for line in crate::text::graph_lines(g) {
            let _ = writeln!(o, "- {line}");
        }
        o.push('\n');
    }
    if g.comm_us > 0.0 {
        let _ = writeln!(
            o,
            "Communication {} · exposed {} · overlap {:.1}%\n",
            fmt_us(g.comm_us),
            fmt_us(g.exposed_comm_us),
            g.overlap_pct
        );
    }
}

/// The attention verdict, with the reasons and the fix when it is not flash.
fn attention(o: &mut String, t: &TraceReport) {
    let a = &t.attention;
    let lib = a.library.as_deref().map(|l| format!(" ({})", escape(l))).unwrap_or_default();
    let verdict = match a.backend {
        Backend::None => "no attention kernels or SDPA ops found".to_string(),
        Backend::Flash | Backend::FlashAttn => format!("fused flash kernels, {}", fmt_us(a.time_us)),
        _ => format!("{} of GPU time", fmt_us(a.time_us)),
    };
    let mark = if a.fix.is_some() { " ⚠️" } else { "" };
    let _ = writeln!(o, "**Attention backend: `{}`**{lib}{mark}: {verdict}.", a.backend.id());
    if a.fix.is_some() {
        for r in &a.not_flash_reasons {
            let _ = writeln!(o, "- {}", prose(r));
        }
        if let Some(f) = &a.fix {
            let _ = writeln!(o, "- Fix: {}", prose(f));
        }
    }
    o.push('\n');
}

fn buckets(o: &mut String, t: &TraceReport) {
    let buckets: Vec<_> = t.buckets.iter().filter(|b| b.time_us > 0.0 || b.count > 0).collect();
    if buckets.is_empty() {
        return;
    }
    let _ = writeln!(o, "### GPU time by category\n");
    let _ = writeln!(o, "| category | time | share | rows |");
    let _ = writeln!(o, "|---|---:|---:|---:|");
    for b in buckets {
        let _ = writeln!(o, "| {} | {} | {:.1}% | {} |", escape(&b.name), fmt_us(b.time_us), b.pct, b.count);
    }
    o.push('\n');
}

/// The hints, largest time at stake first (the report's order).
fn hints(o: &mut String, t: &TraceReport) {
    let _ = writeln!(o, "### Hints\n");
    if t.hints.is_empty() {
        let _ = writeln!(o, "No hint rule fired.\n");
        return;
    }
    for h in &t.hints {
        let _ = writeln!(
            o,
            "- **{}** `{}` ({} at stake): {}",
            h.severity,
            h.id.id(),
            fmt_us(h.stake_us),
            prose(&h.message)
        );
        if !h.evidence.is_empty() {
            let ev: Vec<String> = h.evidence.iter().map(|e| prose(e)).collect();
            let _ = writeln!(o, "  - {}", ev.join(" · "));
        }
        if !h.fix.is_empty() {
            let _ = writeln!(o, "  - Try: {}", prose(&h.fix));
        }
    }
    o.push('\n');
}

/// Per-rank collective bandwidth by kind, with what one rank cannot see.
fn bandwidth(o: &mut String, t: &TraceReport) {
    let Some(b) = &t.collective_bandwidth else { return };
    if b.kinds.is_empty() {
        return;
    }
    let _ = writeln!(o, "### Collective bandwidth (this rank)\n");
    let _ = writeln!(o, "| collective | ranks | calls | bytes | time | algbw GB/s | busbw GB/s |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|");
    for r in &b.kinds {
        let busbw = r.busbw_gb_s.map_or_else(|| "-".to_string(), |x| format!("{x:.1}"));
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {:.1} | {busbw} |",
            escape(&r.name),
            r.group_size,
            r.calls,
            crate::text::fmt_bytes(r.bytes as i64),
            fmt_us(r.time_us),
            r.algbw_gb_s
        );
    }
    if b.unsized_calls > 0 {
        let _ = writeln!(
            o,
            "\n{} collective kernels ({}) left out: no message size, dtype or group size recorded.",
            b.unsized_calls,
            fmt_us(b.unsized_us)
        );
    }
    let _ = writeln!(o, "\n> {}\n", prose(&b.caveat));
}

/// Kernels in the efficiency table.
const EFFICIENCY_ROWS: usize = 5;

fn efficiency(o: &mut String, t: &TraceReport) {
    let Some(e) = &t.efficiency else { return };
    let known = e.coverage.known_total_us();
    if known <= 0.0 {
        return;
    }
    let _ = writeln!(
        o,
        "### Efficiency
"
    );
    let peaks = match &e.peaks {
        Some(p) => format!("against {} ({} TB/s; {})", escape(&p.device), p.tbps, prose(&p.source)),
        None => "no peaks: the device is not in the table (give `--peak-tflops`, `--peak-tbps`)".into(),
    };
    let mfu = e.mfu.first().and_then(|m| m.mfu_pct.map(|v| format!("**MFU {v:.1}%** over the GPU span · ")));
    let _ = writeln!(
        o,
        "{}{} of work for {:.1}% of kernel time, {peaks}.\n",
        mfu.unwrap_or_default(),
        fmt_si(e.flops, "FLOP"),
        known / e.coverage.kernel_us.max(f64::MIN_POSITIVE) * 100.0
    );
    let rows: Vec<_> = e.kernels.iter().filter(|k| k.recoverable_us > 0.0).take(EFFICIENCY_ROWS).collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(o, "| kernel | time | TFLOP/s | % of peak | TB/s | % of bandwidth | recoverable |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|");
    let pct = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.0}%"));
    for k in rows {
        let _ = writeln!(
            o,
            "| {} | {} | {:.1} | {} | {:.2} | {} | {} |",
            code(&clip(&k.short, 60)),
            fmt_us(k.time_us),
            k.tflops_per_s,
            pct(k.pct_of_peak),
            k.tbps,
            pct(k.pct_of_bandwidth),
            fmt_us(k.recoverable_us)
        );
    }
    o.push('\n');
}

fn top(o: &mut String, title: &str, what: &str, rows: &[TopRow], kernels: bool) {
    if rows.is_empty() {
        return;
    }
    let shown = rows.len().min(TOP_ROWS);
    let more = if rows.len() > shown { format!(" (top {shown} of {})", rows.len()) } else { String::new() };
    let _ = writeln!(o, "### {title}{more}\n");
    let _ = writeln!(o, "| # | {what} | time | share | count | mean | category |");
    let _ = writeln!(o, "|---:|---|---:|---:|---:|---:|---|");
    for (i, r) in rows.iter().take(shown).enumerate() {
        let name = if kernels && !r.short.is_empty() { &r.short } else { &r.name };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {:.1}% | {} | {} | {} |",
            i + 1,
            code(&clip(name, NAME_CHARS)),
            fmt_us(r.time_us),
            r.pct,
            r.count,
            fmt_us(r.mean_us),
            escape(r.bucket.name())
        );
    }
    o.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_never_become_markup() {
        assert_eq!(escape("<script>alert(1)</script> | *x*"), "&lt;script>alert(1)&lt;/script> \\| \\*x\\*");
        assert_eq!(escape("attn_mask [2, 1] <= 256 & _x_ a]("), "attn_mask [2, 1] <= 256 & \\_x\\_ a\\](");
        assert_eq!(code("a`b|c"), "``a`b\\|c``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(prose("use `torch.compile` <now>"), "use `torch.compile` &lt;now>");
    }
}
