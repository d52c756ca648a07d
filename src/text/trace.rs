//! The text of one trace's report, section by section in the seed's order.

use super::fmt::{self, clip, RULE};
use super::{bandwidth, critical_path, efficiency, graphs, timeline, why::render_why};
use crate::analysis::rules::taxonomy::{Backend, Bucket};
use crate::report::TraceReport;
use crate::vocab::units::fmt_us;
use std::fmt::Write;

pub(super) fn render_trace(o: &mut String, t: &TraceReport) {
    header(o, t);
    gpu_time(o, t);
    buckets(o, t);
    attention(o, t);
    bandwidth::render_bandwidth(o, t);
    top_kernels_and_ops(o, t);
    efficiency::render_efficiency(o, t);
    render_why(o, t);
    critical_path::render_critical_path(o, t);
    steps(o, t);
    hints(o, t);
    diagnostics(o, t);
}

/// The file, its device and rank, and how many events it held.
fn header(o: &mut String, t: &TraceReport) {
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
}

/// GPU time: span, busy and idle, coverage, compute and communication, per device, the range and the timeline (or why there are no GPU rows).
fn gpu_time(o: &mut String, t: &TraceReport) {
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
        let counters = fmt::sm_counters(g);
        if !counters.is_empty() {
            let _ = writeln!(o, " {}", counters.join("   "));
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
}

/// Time by bucket, each with its largest kernel.
fn buckets(o: &mut String, t: &TraceReport) {
    if !t.buckets.is_empty() {
        let _ = writeln!(o, "\n Time by bucket (% of GPU kernel time):");
        let _ = writeln!(o, " {:40} {:>12} {:>8} {:>8}", "bucket", "time", "% total", "# calls");
    }
    for b in &t.buckets {
        let _ = writeln!(o, " {:40} {:>12} {:>7.1}% {:>8}", b.name, fmt_us(b.time_us), b.pct, b.count);
        if b.id == Bucket::Other {
            // What no rule knew is listed: what a rule of your own (--rules) would take.
            for top in &b.top_names {
                let _ = writeln!(o, "   {:>10}  {}", fmt_us(top.time_us), clip(&top.short, 64));
            }
        } else if let Some(top) = b.top_names.first() {
            let _ = writeln!(o, "   e.g. {}", clip(&top.short, 72));
        }
    }
    if t.bucket_evidence.total_us() > 0.0 {
        let _ = writeln!(o, " Buckets decided by {}", t.bucket_evidence.line());
    }
}

/// The attention backend, its evidence and, when it is not FlashAttention, why and the fix.
fn attention(o: &mut String, t: &TraceReport) {
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
}

/// The top kernels (with the op that launched each) and the top ops.
fn top_kernels_and_ops(o: &mut String, t: &TraceReport) {
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
}

/// One line per step.
fn steps(o: &mut String, t: &TraceReport) {
    if !t.steps.is_empty() {
        let _ = writeln!(o, "\n Steps:");
        let _ = writeln!(
            o,
            " {:22} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}  launch-bound (idle at stake)",
            "step", "GPU span", "busy", "idle", "host wait", "exposed comm", "CPU"
        );
        for s in &t.steps {
            // The step's verdict by CPU time per op against kernel time per op ("-": no op
            // launched its kernels one by one).
            let launch = s.launch.as_ref().map_or("-".to_string(), |l| {
                format!("{} ({})", if l.launch_bound { "yes" } else { "no" }, fmt_us(l.idle_us))
            });
            let _ = writeln!(
                o,
                " {:22} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}  {launch}",
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
}

/// The hints, then the share of core compute (matmul and attention).
fn hints(o: &mut String, t: &TraceReport) {
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
        // What low means, and for which models, is the core_compute_low hint's to say.
        let _ = writeln!(o, "\n Matmul + Attention (core compute): {core:.1}%");
    }
}

/// What reading the trace found wrong with it.
fn diagnostics(o: &mut String, t: &TraceReport) {
    if !t.diagnostics.is_empty() {
        let _ = writeln!(o, "\n Diagnostics:");
        for d in &t.diagnostics {
            let _ = writeln!(o, "   [{}] {} x{}: {}", d.severity, d.id, d.count, d.message);
        }
    }
}
