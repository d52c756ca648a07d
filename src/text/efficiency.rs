//! The text report's efficiency section: the peaks and where they come from, what the work
//! figures could see, MFU, and the kernels furthest below their roofs.

use super::fmt::clip;
use crate::report::{Bound, Efficiency, TraceReport, WorkSource};
use crate::vocab::{fmt_si, fmt_us};
use std::fmt::Write;

/// Kernels listed.
const LISTED: usize = 10;
/// Steps listed one by one; more are summarised.
const STEPS_LISTED: usize = 6;

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}%"))
}

pub(super) fn render_efficiency(o: &mut String, t: &TraceReport) {
    let Some(e) = &t.efficiency else { return };
    let c = &e.coverage;
    let known = c.known_total_us();
    if known <= 0.0 && c.ops_with_shapes == 0 {
        let _ = writeln!(o, "\n Efficiency: no op work known (no shapes recorded; see the no_shapes hint).");
        return;
    }
    let _ = writeln!(o, "\n Efficiency (roofline, MFU):");
    render_peaks(o, e);
    let _ = writeln!(o, "   {}", coverage_line(c, known));
    if known <= 0.0 {
        return;
    }
    let _ = writeln!(
        o,
        "   total {}, {} moved (memcpy / memset rows not counted)",
        fmt_si(e.flops, "FLOP"),
        fmt_si(e.bytes, "B")
    );
    render_mfu(o, e);
    if e.kernels.is_empty() {
        return;
    }
    render_kernels(o, e);
    let above = e.kernels.iter().filter(|k| k.above_roof()).count();
    if above > 0 {
        let _ = writeln!(o, "   ! {above} kernel(s) {}", crate::report::ABOVE_ROOF);
    }
    let buckets: Vec<String> =
        e.buckets.iter().filter_map(|b| b.pct_of_roof.map(|p| format!("{} {p:.1}%", b.bucket.id()))).collect();
    if !buckets.is_empty() {
        let _ = writeln!(o, "   % of roof by bucket (time-weighted): {}", buckets.join(", "));
    }
}

fn render_peaks(o: &mut String, e: &Efficiency) {
    match &e.peaks {
        Some(p) => {
            let peaks: Vec<String> = p.tflops.iter().map(|(pr, v)| format!("{} {v}", pr.id())).collect();
            let _ = writeln!(o, "   peaks: {}: {} TFLOP/s dense, {} TB/s", p.device, peaks.join(", "), p.tbps);
            let _ = writeln!(o, "   source: {}", clip(&p.source, 140));
        }
        None => {
            let why = match e.unknown_device.as_deref() {
                Some(d) => format!("{d} is not in the device table"),
                None => "the trace lists no device".into(),
            };
            let _ = writeln!(o, "   peaks: unknown ({why}): give --peak-tflops and --peak-tbps for % of peak");
        }
    }
}

/// What the work figures could see, as one line.
fn coverage_line(c: &crate::report::WorkCoverage, known: f64) -> String {
    let share = |us: f64| us / c.kernel_us.max(f64::MIN_POSITIVE) * 100.0;
    let sources: Vec<String> = c
        .known_us
        .iter()
        .map(|(s, us)| {
            let from = match s {
                WorkSource::Shapes => "from shapes",
                WorkSource::Profiler => "profiler's FLOP counts",
                WorkSource::Inductor => "Inductor's counts",
            };
            format!("{from} {}", fmt_us(*us))
        })
        .collect();
    let unmodelled: Vec<&str> = c.unmodelled_ops.iter().take(4).map(|x| x.0.as_str()).collect();
    let mut parts = vec![if known > 0.0 {
        format!("work known for {:.1}% of kernel time ({})", share(known), sources.join(", "))
    } else {
        "work known for none of the kernel time".to_string()
    }];
    if c.unmodelled_us > 0.0 {
        parts.push(format!("no model for {:.1}% ({})", share(c.unmodelled_us), unmodelled.join(", ")));
    }
    if c.unknown_us > 0.0 {
        parts.push(format!(
            "unknown {:.1}% (no launching op, no shapes, or shapes that do not fit)",
            share(c.unknown_us)
        ));
    }
    if c.graph_us > 0.0 {
        parts.push(format!(
            "replayed by graph launches {:.1}% (per-op work needs the capture trace)",
            share(c.graph_us)
        ));
    }
    if c.communication_us > 0.0 {
        parts.push(format!("communication {} left out", fmt_us(c.communication_us)));
    }
    parts.join("; ")
}

/// The kernels furthest below their roofs.
fn render_kernels(o: &mut String, e: &Efficiency) {
    let _ = writeln!(
        o,
        "   {:>10} {:>9} {:>7} {:>8} {:>7} {:>8} {:>7} {:>11}  kernel (the most recoverable first)",
        "time", "TFLOP/s", "% peak", "TB/s", "% bw", "FLOP/B", "bound", "recoverable"
    );
    for k in e.kernels.iter().take(LISTED) {
        let bound = match k.bound {
            Some(Bound::Compute) => "compute",
            Some(Bound::Memory) => "memory",
            None => "-",
        };
        let ai = k.intensity.map_or("-".into(), |a| format!("{a:.1}"));
        let _ = writeln!(
            o,
            "   {:>10} {:>9.2} {:>7} {:>8.3} {:>7} {:>8} {:>7} {:>11} {}{} [{}{}]",
            fmt_us(k.time_us),
            k.tflops_per_s,
            pct(k.pct_of_peak),
            k.tbps,
            pct(k.pct_of_bandwidth),
            ai,
            bound,
            fmt_us(k.recoverable_us),
            if k.above_roof() { "!" } else { " " },
            clip(&k.short, 56),
            k.precision.map_or("?", |p| p.id()),
            if k.causal { ", causal counted half" } else { "" }
        );
    }
}

fn render_mfu(o: &mut String, e: &Efficiency) {
    let Some(trace) = e.mfu.first() else { return };
    let line = |m: &crate::report::Mfu| {
        let analytic = m.analytic_mfu_pct.map(|a| format!(", analytic {a:.1}%")).unwrap_or_default();
        format!(
            "{} ({} in {}, {}{analytic})",
            pct(m.mfu_pct),
            fmt_si(m.flops, "FLOP"),
            fmt_us(m.span_us),
            m.precision.map_or("?", |p| p.id())
        )
    };
    let _ = writeln!(o, "   MFU over the GPU span: {} (measured: the FLOPs of the known work only)", line(trace));
    let steps = &e.mfu[1..];
    if steps.len() <= STEPS_LISTED {
        for m in steps {
            let _ = writeln!(o, "     {:22} {}", m.name, line(m));
        }
    } else {
        let v: Vec<f64> = steps.iter().filter_map(|m| m.mfu_pct).collect();
        if !v.is_empty() {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            let _ = writeln!(o, "     {} steps: mean {mean:.1}%, min {lo:.1}%, max {hi:.1}%", steps.len());
        }
    }
    if let (Some(m), f) = (e.model, e.analytic_factor) {
        let _ = writeln!(
            o,
            "     analytic: {f}·N·T with N = {} parameters, T = {} tokens per step",
            fmt_si(m.params, "").trim_end(),
            fmt_si(m.tokens_per_step, "").trim_end()
        );
    }
}
