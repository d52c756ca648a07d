//! The text of the ranks side by side, the job they make up and its collectives.

use super::fmt::{self, clip, rank_label, RULE};
use crate::report::{JobView, PathSide, Report};
use crate::vocab::units::fmt_us;
use std::fmt::Write;

pub(super) fn render_ranks(o: &mut String, report: &Report) {
    rank_table(o, report);
    let Some(job) = &report.job else { return };
    job_summary(o, report, job);
    if !job.collectives.is_empty() {
        collectives(o, report, job);
    }
    if !job.critical_path.is_empty() {
        job_path(o, report, job);
    }
}

/// One line per rank, then the mean MFU.
fn rank_table(o: &mut String, report: &Report) {
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
}

/// Whether the files are one job, and the spread of each metric across its ranks.
fn job_summary(o: &mut String, report: &Report, job: &JobView) {
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
}

/// The collectives matched across ranks, and the straggler that kept the others waiting.
fn collectives(o: &mut String, report: &Report, job: &JobView) {
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

/// Stretches of the job's path listed (`--json` has every one).
const STRETCHES_LISTED: usize = 20;

/// The job's critical path: at each matched collective, the rank that arrived last and the
/// largest piece of its own path since its previous collective.
fn job_path(o: &mut String, report: &Report, job: &JobView) {
    let _ = writeln!(
        o,
        "\n Job critical path (at each matched collective, the rank everyone waited for and what held it on its own path):"
    );
    let _ = writeln!(
        o,
        "   {:14} {:>6} {:10} {:>11} {:>11} {:>11}  held by",
        "collective", "#", "last", "held", "stretch", "waited"
    );
    for s in job.critical_path.iter().take(STRETCHES_LISTED) {
        let side = match s.side {
            PathSide::Cpu => "CPU",
            PathSide::Gpu => "GPU",
            PathSide::Launch => "launch",
            PathSide::Gap => "gap",
        };
        let _ = writeln!(
            o,
            "   {:14} {:>6} {:10} {:>11} {:>11} {:>11}  {side} {}",
            clip(&s.collective, 14),
            s.seq.map_or("-".to_string(), |q| q.to_string()),
            s.rank.map_or_else(|| rank_label(report, s.row), |r| format!("rank {r}")),
            fmt_us(s.held_us),
            fmt_us(s.stretch_us),
            fmt_us(s.wait_us),
            clip(&s.held_by, 60)
        );
    }
    let more = job.critical_path_len() - job.critical_path.len().min(STRETCHES_LISTED) as u64;
    if more > 0 {
        let _ = writeln!(o, "   ... {more} more stretches (--json has every one)");
    }
    let mut by_rank: Vec<(String, u32, f64)> = Vec::new();
    for s in &job.critical_path {
        let who = s.rank.map_or_else(|| rank_label(report, s.row), |r| format!("rank {r}"));
        match by_rank.iter_mut().find(|(w, _, _)| *w == who) {
            Some(e) => (e.1, e.2) = (e.1 + 1, e.2 + s.stretch_us),
            None => by_rank.push((who, 1, s.stretch_us)),
        }
    }
    by_rank.sort_by(|a, b| b.2.total_cmp(&a.2));
    let held: Vec<String> = by_rank.iter().map(|(w, n, us)| format!("{w}: {n} ({})", fmt_us(*us))).collect();
    let _ = writeln!(o, "   stretches held, by rank (their time on the path): {}", held.join(", "));
}
