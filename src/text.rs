//! Plain-text rendering of a Report (the CLI's default output, in the seed's section order),
//! and the small formatting helpers the web views share.

#![forbid(unsafe_code)]

use crate::analysis::rules::taxonomy::{Backend, Bucket};
use crate::report::{Report, TraceReport};
use std::fmt::Write;

pub(crate) mod critical_path;
mod efficiency;
mod fmt;
mod graphs;
mod timeline;
mod why;

pub use crate::analysis::rules::kernel_name::short_name;
pub use crate::vocab::units::fmt_us;
use fmt::clip;
pub use fmt::{fmt_bytes, no_gpu_rows_reason};
pub use graphs::graph_lines;
use why::render_why;

const RULE: &str = "================================================================================";

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

fn rank_label(report: &Report, row: usize) -> String {
    match report.ranks.get(row) {
        Some(r) => r.rank.map(|x| format!("rank {x}")).unwrap_or_else(|| r.file.clone()),
        None => format!("row {row}"),
    }
}

fn render_ranks(o: &mut String, report: &Report) {
    let _ = writeln!(o, "\n{RULE}\n Ranks side by side\n{RULE}");
    let _ = writeln!(
        o,
        " {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>6}  flags",
        "rank", "busy", "idle", "compute", "comm", "exposed", "step", "waited", "MFU"
    );
    for r in &report.ranks {
        let rank = r.rank.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
        let step = r.step_us.map(fmt_us).unwrap_or_else(|| "-".into());
        let flags: Vec<&str> = r.outlier.iter().map(|m| m.label()).collect();
        let flags = if flags.is_empty() { String::new() } else { format!("outlier: {}", flags.join(", ")) };
        let _ = writeln!(
            o,
            " {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>6}  {flags}",
            rank,
            fmt_us(r.busy_us),
            fmt_us(r.idle_us),
            fmt_us(r.compute_us),
            fmt_us(r.comm_us),
            fmt_us(r.exposed_comm_us),
            step,
            fmt_us(r.wait_us),
            r.mfu_pct.map_or("-".into(), |m| format!("{m:.1}%"))
        );
    }
    let mfu: Vec<f64> = report.ranks.iter().filter_map(|r| r.mfu_pct).collect();
    if !mfu.is_empty() {
        let mean = mfu.iter().sum::<f64>() / mfu.len() as f64;
        let _ = writeln!(o, " MFU: mean {mean:.1}% over the {} ranks with known work", mfu.len());
    }
    let Some(job) = &report.job else { return };
    if job.one_job {
        let w = job.world_size.map(|w| format!(" of world size {w}")).unwrap_or_default();
        let _ = writeln!(o, "\n {} ranks{w}, one job.", report.ranks.len());
    } else {
        let _ = writeln!(o, "\n These files are not the ranks of one job:");
    }
    for n in &job.notes {
        let _ = writeln!(o, "   - {n}");
    }
    for m in &job.metrics {
        let _ = writeln!(
            o,
            "   {:22} min {:>10} ({})  median {:>10}  max {:>10} ({})",
            m.metric.label(),
            fmt_us(m.min),
            rank_label(report, m.min_row),
            fmt_us(m.median),
            fmt_us(m.max),
            rank_label(report, m.max_row)
        );
    }
    if job.collectives.is_empty() {
        return;
    }
    let how = if job.matched_by_seq { "by sequence number" } else { "by order of name per process group" };
    let _ = writeln!(o, "\n Collectives matched across ranks ({how}; {} on one rank only):", job.unmatched);
    if let Some(s) = job.straggler {
        let w = &job.waits[s];
        let _ = writeln!(
            o,
            "   straggler: {} arrived last at {} collectives and made the others wait {} in all",
            rank_label(report, s),
            w.last_count,
            fmt_us(w.caused_us)
        );
    }
    let _ = writeln!(
        o,
        "   {:14} {:>6} {:>11} {:>11} {:>11} {:>10} {:>10}  last",
        "collective", "#", "transfer", "waited", "skew", "algbw GB/s", "busbw GB/s"
    );
    for c in job.collectives.iter().take(10) {
        let bandwidths = format!("{:>10} {:>10}", fmt::gbps(c.algbw_gbps), fmt::gbps(c.busbw_gbps()));
        let _ = writeln!(
            o,
            "   {:14} {:>6} {:>11} {:>11} {:>11} {}  {}",
            clip(&c.name, 14),
            c.seq.unwrap_or(c.index),
            fmt_us(c.transfer_us),
            fmt_us(c.wait_us),
            fmt_us(c.skew_us),
            bandwidths,
            rank_label(report, c.last_row)
        );
    }
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

fn render_trace(o: &mut String, t: &TraceReport) {
    let _ = writeln!(o, "\n{RULE}\n {}\n{RULE}", t.file);
    let dev = match (&t.device.name, t.device.sm_count) {
        (Some(n), Some(sm)) => format!("{n} ({sm} SMs)"),
        (Some(n), None) => n.clone(),
        _ => "unknown".into(),
    };
    let rank = match (t.rank, t.world_size) {
        (Some(r), Some(w)) => format!("rank {r} of {w}"),
        (Some(r), None) => format!("rank {r}"),
        _ => "single process".into(),
    };
    let _ = writeln!(o, " events: {}   device: {dev}   {rank}", t.events);
    let g = &t.gpu;
    let _ = writeln!(o, " Total GPU kernel time: {}  ({} GPU rows)", fmt_us(g.kernel_time_us), g.kernel_count);
    if !t.has_gpu {
        let _ = writeln!(o, "\n No GPU rows in this trace ({}).", fmt::no_gpu_rows_reason(t));
    } else {
        let sp = g.span_us.max(f64::MIN_POSITIVE);
        let _ = writeln!(
            o,
            " span {}   busy {} ({:.1}%)   idle {} ({:.1}%)",
            fmt_us(g.span_us),
            fmt_us(g.busy_us),
            g.busy_us / sp * 100.0,
            fmt_us(g.idle_us),
            g.idle_us / sp * 100.0
        );
        graphs::render_coverage(o, t);
        let _ = writeln!(
            o,
            " compute {}   communication {}   exposed communication {}   overlap {:.1}%",
            fmt_us(g.compute_us),
            fmt_us(g.comm_us),
            fmt_us(g.exposed_comm_us),
            g.overlap_pct
        );
        if let Some(e) = g.est_sm_efficiency_pct {
            let unknown = if g.occupancy_unknown_us > 0.0 {
                format!(" (leaving out {} of kernels written as 0: unknown)", fmt_us(g.occupancy_unknown_us))
            } else {
                String::new()
            };
            let occ =
                g.achieved_occupancy_pct.map(|x| format!("   achieved occupancy {x:.1}%{unknown}")).unwrap_or_default();
            let _ = writeln!(o, " est. SM efficiency {e:.1}%{occ}");
        }
        for d in &t.devices {
            let _ = writeln!(
                o,
                "   device {:>2}: kernel {}  busy {}  span {}  idle {}",
                d.device,
                fmt_us(d.time.kernel_time_us),
                fmt_us(d.time.busy_us),
                fmt_us(d.time.span_us),
                fmt_us(d.time.idle_us)
            );
        }
        if let Some(w) = &t.window {
            let (from, to) = w.after_first_row_us();
            let _ = writeln!(
                o,
                " range: {} .. {} after the first GPU row (every time in this report is inside it)",
                fmt_us(from),
                fmt_us(to)
            );
        }
        if let Some(tl) = &t.timeline {
            timeline::render_timeline(o, tl);
        }
    }

    if !t.buckets.is_empty() {
        let _ = writeln!(o, "\n Time by bucket (% of GPU kernel time):");
        let _ = writeln!(o, " {:40} {:>12} {:>8} {:>8}", "bucket", "time", "% total", "# calls");
    }
    for b in &t.buckets {
        let _ = writeln!(o, " {:40} {:>12} {:>7.1}% {:>8}", b.name, fmt_us(b.time_us), b.pct, b.count);
        if let Some(top) = b.top_names.first() {
            let _ = writeln!(o, "   e.g. {}", clip(&top.short, 72));
        }
    }

    let a = &t.attention;
    let lib = a.library.as_deref().map(|l| format!(" ({l})")).unwrap_or_default();
    let _ = writeln!(o, "\n Attention backend: {}{lib}", a.backend);
    for e in &a.evidence {
        let _ = writeln!(
            o,
            "   {:18} {:>12} {:>7}x  {} {}",
            e.backend,
            fmt_us(e.time_us),
            e.count,
            e.kind,
            clip(&e.short, 60)
        );
    }
    if a.backend == Backend::None {
        let _ = writeln!(o, "   (no attention kernels or SDPA ops found)");
    }
    if a.fix.is_some() {
        let _ = writeln!(o, "   ! Not using FlashAttention ({}).", a.backend);
        for r in &a.not_flash_reasons {
            let _ = writeln!(o, "     - {r}");
        }
        if let Some(f) = &a.fix {
            let _ = writeln!(o, "   Fix: {f}");
        }
    }

    if !t.top_kernels.is_empty() {
        let _ = writeln!(o, "\n Top {} kernels:", t.top_kernels.len());
        let _ = writeln!(
            o,
            " {:>4} {:>12} {:>8} {:>8} {:>10}  name  [launching op]",
            "rank", "time", "% total", "# calls", "mean"
        );
    }
    for (i, k) in t.top_kernels.iter().enumerate() {
        let op = k.op.as_deref().map(|x| format!("  [{x}]")).unwrap_or_default();
        let _ = writeln!(
            o,
            " {:>4} {:>12} {:>7.1}% {:>8} {:>10}  {}{}",
            i + 1,
            fmt_us(k.time_us),
            k.pct,
            k.count,
            fmt_us(k.mean_us),
            clip(&k.short, 70),
            op
        );
    }
    if !t.top_ops.is_empty() {
        let _ = writeln!(o, "\n Top {} ops (GPU time they launched):", t.top_ops.len());
        let _ = writeln!(o, " {:>4} {:>12} {:>8} {:>8} {:>10}  name", "rank", "time", "% total", "# calls", "mean");
    }
    for (i, k) in t.top_ops.iter().enumerate() {
        let _ = writeln!(
            o,
            " {:>4} {:>12} {:>7.1}% {:>8} {:>10}  {}",
            i + 1,
            fmt_us(k.time_us),
            k.pct,
            k.count,
            fmt_us(k.mean_us),
            clip(&k.name, 80)
        );
    }

    efficiency::render_efficiency(o, t);
    render_why(o, t);
    critical_path::render_critical_path(o, t);

    if !t.steps.is_empty() {
        let _ = writeln!(o, "\n Steps:");
        let _ = writeln!(
            o,
            " {:22} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}",
            "step", "GPU span", "busy", "idle", "host wait", "exposed comm", "CPU"
        );
        for s in &t.steps {
            let _ = writeln!(
                o,
                " {:22} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}",
                s.name,
                fmt_us(s.span_us),
                fmt_us(s.busy_us),
                fmt_us(s.idle_us),
                fmt_us(s.host_wait_us),
                fmt_us(s.exposed_comm_us),
                fmt_us(s.cpu_us)
            );
        }
    }

    let _ = writeln!(o, "\n{RULE}\n Optimisation hints\n{RULE}");
    if t.hints.is_empty() {
        let _ = writeln!(o, " (none triggered)");
    }
    for h in &t.hints {
        let _ = writeln!(o, " [{}] {} ({} at stake): {}", h.severity, h.id, fmt_us(h.stake_us), h.message);
        for e in &h.evidence {
            let _ = writeln!(o, "     {e}");
        }
        if !h.fix.is_empty() {
            let _ = writeln!(o, "   -> {}", h.fix);
        }
    }
    let core =
        t.buckets.iter().filter(|b| matches!(b.id, Bucket::Gemm | Bucket::Attention)).map(|b| b.pct).sum::<f64>();
    if t.has_gpu && t.gpu.kernel_time_us > 0.0 {
        let _ = writeln!(o, "\n Matmul + Attention (core compute): {core:.1}%");
        if core < crate::analysis::passes::hints::CORE_COMPUTE_LOW {
            let _ = writeln!(o, " Below 50% most time goes to non-core ops: large room to optimise. Llama 3 training typically shows 60-75%.");
        }
    }

    if !t.diagnostics.is_empty() {
        let _ = writeln!(o, "\n Diagnostics:");
        for d in &t.diagnostics {
            let _ = writeln!(o, "   [{}] {} x{}: {}", d.severity, d.id, d.count, d.message);
        }
    }
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
