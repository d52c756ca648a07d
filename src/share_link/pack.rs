//! Report <-> wire form.

use super::pack_trace::{pack_trace, unpack_trace};
use super::wire::*;
use crate::report::*;

// ---------------------------------------------------------------------------------------

/// The part of `report` a link carries: what the views show. Fields the views do not read
/// (per-device times, launch statistics, copies, tensor-core split, ...) are left at their
/// defaults. `decode(encode(r, s))` gives back `for_link(r)`.
pub fn for_link(report: &Report) -> Report {
    unpack_report(pack_report(report))
}

pub fn pack_report(r: &Report) -> WReport {
    WReport {
        v: r.tool_version.clone(),
        t: r.traces.iter().map(pack_trace).collect(),
        e: r.errors.iter().map(|e| (e.file.clone(), e.message.clone())).collect(),
        k: r.ranks
            .iter()
            .map(|k| {
                WRank(
                    k.file.clone(),
                    k.rank,
                    k.kernel_time_us,
                    k.busy_us,
                    k.span_us,
                    k.idle_us,
                    k.comm_us,
                    k.exposed_comm_us,
                    k.busy_vs_max_pct,
                )
            })
            .collect(),
        m: if r.ranks.iter().any(|k| k.mfu_pct.is_some()) {
            r.ranks.iter().map(|k| k.mfu_pct).collect()
        } else {
            Vec::new()
        },
        j: r.job.as_ref().map(|j| pack_job(j, &r.ranks)),
    }
}

fn pack_job(j: &JobView, rows: &[RankRow]) -> WJob {
    WJob {
        o: j.one_job,
        n: j.notes.clone(),
        w: j.world_size,
        q: j.matched_by_seq,
        u: j.unmatched,
        r: rows
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let w = j.waits.iter().find(|w| w.row == i);
                WRankJob(
                    k.compute_us,
                    k.step_us,
                    k.wait_us,
                    w.map_or(0.0, |w| w.caused_us),
                    w.map_or(0, |w| w.last_count),
                    k.top_buckets.clone(),
                )
            })
            .collect(),
        c: j.collectives
            .iter()
            .take(crate::analysis::ranks::COLLECTIVES_SHOWN)
            .map(|c| {
                WCollective(
                    c.name.clone(),
                    c.group.clone(),
                    c.seq,
                    c.index,
                    c.ranks,
                    c.bytes,
                    c.transfer_us,
                    c.wait_us,
                    c.skew_us,
                    c.last_row,
                )
            })
            .collect(),
    }
}

/// The job view from a link: rows get their per-rank part, and what the analysis derives
/// (spreads, outliers, the straggler, bandwidth) is derived again.
fn unpack_job(w: WJob, rows: &mut [RankRow]) -> JobView {
    let mut waits = Vec::with_capacity(rows.len());
    for (i, (row, WRankJob(compute, step, wait, caused, last, top))) in rows.iter_mut().zip(w.r).enumerate() {
        row.compute_us = compute;
        row.step_us = step;
        row.wait_us = wait;
        row.top_buckets = top;
        waits.push(RankWait { row: i, rank: row.rank, wait_us: wait, caused_us: caused, last_count: last });
    }
    let metrics = crate::analysis::ranks::spreads(rows);
    let collectives =
        w.c.into_iter()
            .map(|WCollective(name, group, seq, index, ranks, bytes, transfer_us, wait_us, skew_us, last_row)| {
                // As the analysis computes it, from the integer nanoseconds of the transfer.
                let transfer_ns = (transfer_us * 1e3).round() as i64;
                MatchedCollective {
                    name,
                    group,
                    seq,
                    index,
                    ranks,
                    bytes,
                    transfer_us,
                    wait_us,
                    skew_us,
                    last_row,
                    durations_us: Vec::new(),
                    algbw_gbps: bytes.filter(|_| transfer_ns > 0).map(|b| b as f64 / transfer_ns as f64),
                }
            })
            .collect();
    JobView {
        one_job: w.o,
        notes: w.n,
        world_size: w.w,
        metrics,
        matched_by_seq: w.q,
        unmatched: w.u,
        straggler: crate::analysis::ranks::straggler(&waits),
        waits,
        collectives,
        critical_path: Vec::new(),
    }
}

pub fn unpack_report(w: WReport) -> Report {
    let mut ranks: Vec<RankRow> = w.k.into_iter().map(unpack_rank).collect();
    for (k, m) in ranks.iter_mut().zip(w.m) {
        k.mfu_pct = m;
    }
    let job = w.j.map(|j| unpack_job(j, &mut ranks));
    Report {
        tool_version: w.v,
        traces: w.t.into_iter().map(unpack_trace).collect(),
        errors: w.e.into_iter().map(|(file, message)| FileError { file, message }).collect(),
        ranks,
        job,
    }
}

fn unpack_rank(
    WRank(file, rank, kernel_time_us, busy_us, span_us, idle_us, comm_us, exposed_comm_us, busy_vs_max_pct): WRank,
) -> RankRow {
    RankRow {
        file,
        rank,
        kernel_time_us,
        busy_us,
        span_us,
        idle_us,
        comm_us,
        exposed_comm_us,
        busy_vs_max_pct,
        // The job part (WJob) fills these in when the link has it.
        compute_us: 0.0,
        step_us: None,
        top_buckets: Vec::new(),
        wait_us: 0.0,
        outlier: Vec::new(),
        mfu_pct: None,
    }
}
