//! The text report's critical-path section: per step, the path's length against the step, its
//! CPU and GPU shares and largest pieces; the what-if when one was asked for.

use super::fmt::clip;
use crate::report::{PathSide, TraceReport};
use crate::vocab::fmt_us;
use std::fmt::Write;

/// Steps listed one by one; more are summarised.
const STEPS_LISTED: usize = 4;
/// Pieces listed per step.
const PIECES_LISTED: usize = 5;

pub(super) fn render_critical_path(o: &mut String, t: &TraceReport) {
    let Some(cp) = &t.critical_path else { return };
    if cp.steps.is_empty() {
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
            if s.syncs > 0 { format!("; through {} synchronisation(s)", s.syncs) } else { String::new() }
        );
        for x in s.pieces.iter().take(PIECES_LISTED) {
            let side = match x.side {
                PathSide::Cpu => "CPU",
                PathSide::Gpu => "GPU",
                PathSide::Launch => "launch",
                PathSide::Gap => "gap",
            };
            let _ = writeln!(o, "     {:>10} {:>5.1}%  {side:6} {}", fmt_us(x.us), x.pct_of_path, clip(&x.name, 70));
        }
    }
    if cp.steps.len() > STEPS_LISTED {
        let _ = writeln!(o, "   ... {} more steps (--json has every one)", cp.steps.len() - STEPS_LISTED);
    }
    if cp.unmatched_syncs > 0 {
        let _ = writeln!(
            o,
            "   {} synchronising call(s) waited on no GPU row seen: their time stays on the CPU",
            cp.unmatched_syncs
        );
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
