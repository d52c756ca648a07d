//! The Markdown summary's critical path: per step its length against the step, its CPU / GPU
//! / launch / gap split and largest pieces; with several ranks, the job's path instead. It
//! shows what a share link carries (`CriticalPath::link_subset`, `JobStretch::LINK_STRETCHES`),
//! so the summary reads the same from a link.

use super::escape::{clip, code, escape, prose};
use crate::report::{CriticalPath, JobView, Report, TraceReport};
use crate::text::fmt_us;
use std::fmt::Write;

/// Stretches of the job's path listed (a link carries more; the JSON has every one).
const STRETCHES_LISTED: usize = 10;

/// One trace's section: its steps' paths alone, a line with several ranks (the job's path,
/// above, is what a summary of several ranks carries).
pub(super) fn critical_path(o: &mut String, t: &TraceReport, several: bool) {
    let Some(cp) = &t.critical_path else { return };
    let n = cp.step_count();
    if !cp.has_steps() {
        return;
    }
    if several {
        let _ = writeln!(
            o,
            "**Critical path:** {n} step(s); with several ranks this summary shows the job's path (above), \
             the text report and JSON each step's.\n"
        );
        return;
    }
    let _ = writeln!(o, "### Critical path\n");
    let _ = writeln!(
        o,
        "What each step waited on (HTA's lightweight model; docs/definitions.md says what it cannot see).\n"
    );
    if !cp.steps.is_empty() {
        let _ = writeln!(o, "| step | path | of the step | CPU | GPU | launch delay | queue gaps | largest pieces |");
        let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---|");
    }
    for s in cp.steps.iter().take(CriticalPath::LINK_STEPS) {
        let p = s.path_us.max(f64::MIN_POSITIVE);
        let share = |v: f64| format!("{:.0}%", v / p * 100.0);
        let pieces: Vec<String> = s
            .pieces
            .iter()
            .take(CriticalPath::LINK_PIECES)
            .map(|x| format!("{} {} ({})", code(&clip(cp.name(x.name), 60)), fmt_us(x.us), x.side.label()))
            .collect();
        let _ = writeln!(
            o,
            "| {}{} | {} | {:.1}% | {} | {} | {} | {} | {} |",
            code(&s.step),
            crate::text::through(s.syncs, s.event_waits).replace(';', ","),
            fmt_us(s.path_us),
            s.path_us / s.span_us.max(f64::MIN_POSITIVE) * 100.0,
            share(s.cpu_us),
            share(s.gpu_us),
            share(s.launch_us),
            share(s.gap_us),
            pieces.join(" · ")
        );
    }
    let more = n - cp.steps.len().min(CriticalPath::LINK_STEPS) as u64;
    if more > 0 {
        let _ = writeln!(o, "\n… {more} more steps (`tracesight --json` has every one).");
    }
    for line in crate::text::unseen(cp) {
        let _ = writeln!(o, "\n{}.", prose(&line));
    }
    if let Some(w) = &cp.what_if {
        let _ = writeln!(
            o,
            "\n**What if {} were {:.0}% faster:** steps {} → {} along the critical path (the naive sum says {} saved).",
            code(&w.target),
            w.faster_pct,
            fmt_us(w.step_before_us),
            fmt_us(w.step_after_us),
            fmt_us(w.naive_saving_us)
        );
    }
    o.push('\n');
}

/// The job's path: at each matched collective, the rank everyone waited for and what held it.
pub(super) fn job_path(o: &mut String, report: &Report, j: &JobView) {
    let _ = writeln!(o, "## Job critical path\n");
    let _ = writeln!(
        o,
        "At each matched collective, the rank that arrived last and the largest piece of its own path since \
         its previous collective (from that rank's trace alone).\n"
    );
    let _ = writeln!(o, "| collective | # | last to arrive | held by | held | its stretch | others waited |");
    let _ = writeln!(o, "|---|---:|---|---|---:|---:|---:|");
    for s in j.critical_path.iter().take(STRETCHES_LISTED) {
        let who = match (s.rank, report.ranks.get(s.row)) {
            (Some(r), _) => format!("rank {r}"),
            (None, Some(row)) => escape(&row.file),
            (None, None) => format!("row {}", s.row),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {who} | {} {} | {} | {} | {} |",
            code(&clip(&s.collective, 40)),
            s.seq.map_or(String::new(), |q| q.to_string()),
            s.side.label(),
            code(&clip(&s.held_by, 60)),
            fmt_us(s.held_us),
            fmt_us(s.stretch_us),
            fmt_us(s.wait_us)
        );
    }
    let more = j.critical_path_len() - j.critical_path.len().min(STRETCHES_LISTED) as u64;
    if more > 0 {
        let _ = writeln!(o, "\n… {more} more stretches (`tracesight --json` has every one).");
    }
    o.push('\n');
}
