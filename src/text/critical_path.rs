//! The text report's critical-path section: per step, the path's length against the step, its
//! CPU and GPU shares and largest pieces; the what-if when one was asked for.

use super::fmt::clip;
use crate::report::{CriticalPath, TraceReport};
use crate::vocab::fmt_us;
use std::fmt::Write;

/// Steps listed one by one; more are summarised.
const STEPS_LISTED: usize = 4;

pub(super) fn render_critical_path(o: &mut String, t: &TraceReport) {
    let Some(cp) = &t.critical_path else { return };
    if cp.steps.is_empty() && cp.steps_too_large.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n Critical path (what each step waited on; HTA's model, see docs/definitions.md):");
    for s in cp.steps.iter().take(STEPS_LISTED) {
        let p = s.path_us.max(f64::MIN_POSITIVE);
        let _ = writeln!(
            o,
            "   {}: path {} of the step's {}; CPU {:.0}%  GPU {:.0}%  launch delay {:.0}%  queue gaps {:.0}%{}",
            s.step,
            fmt_us(s.path_us),
            fmt_us(s.span_us),
            s.cpu_us / p * 100.0,
            s.gpu_us / p * 100.0,
            s.launch_us / p * 100.0,
            s.gap_us / p * 100.0,
            through(s.syncs, s.event_waits)
        );
        for x in s.pieces.iter().take(crate::report::StepPath::PIECES_SHOWN) {
            let side = x.side.label();
            let _ = writeln!(
                o,
                "     {:>10} {:>5.1}%  {side:6} {}",
                fmt_us(x.us),
                x.pct_of_path,
                clip(cp.name(x.name), 70)
            );
        }
    }
    if cp.steps.len() > STEPS_LISTED {
        let _ = writeln!(o, "   ... {} more steps (--json has every one)", cp.steps.len() - STEPS_LISTED);
    }
    for line in unseen(cp) {
        let _ = writeln!(o, "   {line}");
    }
    if let Some(w) = &cp.what_if {
        let _ = writeln!(
            o,
            "   What if {} were {:.0}% faster: steps {} -> {} along the critical path (the naive sum says {} saved)",
            w.target,
            w.faster_pct,
            fmt_us(w.step_before_us),
            fmt_us(w.step_after_us),
            fmt_us(w.naive_saving_us)
        );
    }
}

/// "; through 2 synchronisation(s) and 1 event wait(s)", or nothing.
pub(crate) fn through(syncs: u32, event_waits: u32) -> String {
    match (syncs, event_waits) {
        (0, 0) => String::new(),
        (n, 0) => format!("; through {n} synchronisation(s)"),
        (0, w) => format!("; through {w} event wait(s)"),
        (n, w) => format!("; through {n} synchronisation(s) and {w} event wait(s)"),
    }
}

/// What the path could not see, one sentence each (the text report and Markdown share them).
pub(crate) fn unseen(cp: &CriticalPath) -> Vec<String> {
    let mut out = Vec::new();
    if cp.unmatched_syncs > 0 {
        out.push(format!(
            "{} synchronising call(s) waited on no GPU row seen: their time stays on the CPU",
            cp.unmatched_syncs
        ));
    }
    if cp.stream_waits_unseen > 0 {
        out.push(format!(
            "{} stream wait(s) (cudaStreamWaitEvent / hipStreamWaitEvent) without the profiler's cuda_sync rows \
             (CUDA: enable_cuda_sync_events=True in the experimental config; HIP writes none): not edges, \
             so a stream held by another reads as launch- or CPU-bound",
            cp.stream_waits_unseen
        ));
    }
    for t in &cp.steps_too_large {
        let of = match t.step.as_str() {
            CriticalPath::WHOLE_TRACE => "the trace (it has no ProfilerStep)".to_string(),
            step => format!("step {step}"),
        };
        out.push(format!(
            "the path of {of} was not computed: it holds {} rows, calls, ops and syncs, over the limit of {} a step \
             (memory); every other figure is exact",
            t.items,
            crate::limits::MAX_PATH_ITEMS
        ));
    }
    out
}
