//! The "why the GPU waits" and memory sections of the text report.

use super::fmt::{clip, fmt_bytes};
use crate::analysis::passes::idle::IdleCause;
use crate::report::TraceReport;
use crate::vocab::fmt_us;
use std::fmt::Write;

/// Idle causes, time by layer and memory: each only when the trace has the data.
pub(super) fn render_why(o: &mut String, t: &TraceReport) {
    let i = &t.idle;
    if i.gaps > 0 {
        let _ = writeln!(
            o,
            "\n Why the GPU waits (its idle {}, each gap by the row that ended it; {} gaps between rows on a stream):",
            fmt_us(t.gpu.idle_us),
            i.gaps
        );
        let _ = writeln!(
            o,
            "   {} {} (the CPU launched late)   {} {} (gaps < {})   {} {}",
            IdleCause::Host.label(),
            fmt_us(i.host_wait_us),
            IdleCause::Kernel.label(),
            fmt_us(i.kernel_wait_us),
            fmt_us(i.kernel_wait_threshold_us),
            IdleCause::Other.label(),
            fmt_us(i.other_us)
        );
        if !i.host_ops.is_empty() {
            let _ = writeln!(o, "   the CPU during host waits:");
            for h in i.host_ops.iter().take(5) {
                let _ = writeln!(o, "     {:>12} {:>6}x  {}", fmt_us(h.time_us), h.count, clip(&h.name, 70));
            }
        }
        if !i.syncs.is_empty() {
            let _ = writeln!(o, "   synchronising calls while the GPU was idle:");
            for h in i.syncs.iter().take(5) {
                let _ = writeln!(o, "     {:>12} {:>6}x  {}", fmt_us(h.time_us), h.count, h.name);
            }
        }
    }
    if !t.layers.is_empty() {
        layers(o, &t.layers);
    }
    if let Some(m) = &t.memory {
        let _ = writeln!(o, "\n Memory ({} [memory] events):", m.events);
        for d in &m.devices {
            let dev = if d.device < 0 { "host".to_string() } else { format!("device {}", d.device) };
            let rel = if d.relative { " (allocated since the trace began)" } else { "" };
            let _ = writeln!(
                o,
                "   {dev}: peak allocated {}{rel} at +{}",
                fmt_bytes(d.peak_allocated_bytes),
                fmt_us(d.peak_at_us)
            );
            let what = if d.live_at_peak { "holding most at the peak" } else { "allocating most before the peak" };
            for (op, b) in d.top_ops.iter().take(3) {
                let _ = writeln!(o, "     {:>10}  {op} ({what})", fmt_bytes(*b));
            }
        }
    }
}

/// GPU time by layer; with the work known (shapes or counts), each layer's achieved TFLOP/s
/// over the kernels whose work is known, and how much of its time that is.
fn layers(o: &mut String, layers: &[crate::report::LayerNode]) {
    let work = layers.iter().any(|l| l.flops > 0.0);
    let _ = write!(o, "\n GPU time by layer (forward / backward, inclusive");
    let _ = writeln!(
        o,
        "{}):",
        if work {
            "; achieved TFLOP/s and TB/s over the kernels whose work is known, and their share of the time"
        } else {
            ""
        }
    );
    for l in layers.iter().filter(|l| l.depth < 4).take(20) {
        let indent = "  ".repeat(l.depth as usize);
        let name = format!("{indent}{}", l.name);
        let _ = write!(o, "   {:48} {:>12} {:>12}", clip(&name, 48), fmt_us(l.forward_us), fmt_us(l.backward_us));
        if work && l.work_us > 0.0 {
            let tflops = l.tflops_per_s().map_or("-".to_string(), |r| format!("{r:.2}"));
            let tbps = l.bytes / (l.work_us * 1e-6) / 1e12;
            let _ = writeln!(o, " {tflops:>9} TFLOP/s {tbps:>6.2} TB/s {:>5.1}%", l.work_known_pct());
        } else {
            let _ = writeln!(o);
        }
    }
}
