//! The text of the ranks side by side, the job they make up and its collectives.

use super::fmt::{self, clip, rank_label, RULE};
use crate::report::{JobView, Report};
use crate::vocab::units::fmt_us;
use std::fmt::Write;

pub(super) fn render_ranks(o: &mut String, report: &Report) {
    rank_table(o, report);
    let Some(job) = &report.job else { return };
    job_summary(o, report, job);
    if !job.collectives.is_empty() {
        collectives(o, report, job);
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
