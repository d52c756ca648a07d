//! The ranks of one job side by side: per-rank numbers with their spread and outliers, and
//! every collective matched across ranks to find the rank that holds the others back.
//!
//! Waiting is measured from durations, not timestamps, so ranks on hosts with unaligned clocks
//! compare correctly: all ranks leave a collective together, so the rank that arrives last has
//! the shortest kernel; the shortest duration is the transfer itself and the rest of every
//! other rank's duration is time spent waiting for it.

use crate::report::{
    CollectiveCall, JobStretch, JobView, MatchedCollective, MetricSpread, RankMetric, RankRow, RankWait, TraceReport,
};
use rustc_hash::FxHashMap;

/// Per-rank rows, in the order of `traces` (sorted by rank by the caller).
pub fn rank_rows(traces: &[TraceReport]) -> Vec<RankRow> {
    let max_busy = traces.iter().map(|t| t.gpu.busy_us).fold(0.0, f64::max);
    traces
        .iter()
        .map(|t| {
            let step_us = if t.steps.is_empty() {
                None
            } else {
                Some(t.steps.iter().map(|s| s.cpu_us).sum::<f64>() / t.steps.len() as f64)
            };
            RankRow {
                file: t.file.clone(),
                rank: t.rank,
                kernel_time_us: t.gpu.kernel_time_us,
                busy_us: t.gpu.busy_us,
                span_us: t.gpu.span_us,
                idle_us: t.gpu.idle_us,
                compute_us: t.gpu.compute_us,
                comm_us: t.gpu.comm_us,
                exposed_comm_us: t.gpu.exposed_comm_us,
                step_us,
                top_buckets: t.buckets.iter().take(3).map(|b| (b.id, b.pct)).collect(),
                busy_vs_max_pct: if max_busy > 0.0 { t.gpu.busy_us / max_busy * 100.0 } else { 0.0 },
                wait_us: 0.0,
                outlier: Vec::new(),
                mfu_pct: t.efficiency.as_ref().and_then(|e| e.mfu.first()).and_then(|m| m.mfu_pct),
            }
        })
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// A rank is an outlier on a metric when it is further from the median than three median
/// absolute deviations and than 10% of the median (so near-identical ranks are never flagged).
fn spread(metric: RankMetric, rows: &[RankRow]) -> Option<MetricSpread> {
    let vals: Vec<(usize, f64)> = rows.iter().enumerate().filter_map(|(i, r)| metric.of(r).map(|v| (i, v))).collect();
    if vals.is_empty() {
        return None;
    }
    let mut xs: Vec<f64> = vals.iter().map(|x| x.1).collect();
    let med = median(&mut xs);
    let mut dev: Vec<f64> = vals.iter().map(|x| (x.1 - med).abs()).collect();
    let mad = median(&mut dev);
    let limit = (3.0 * mad).max(0.1 * med.abs());
    let (min_i, min) = vals.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or((0, 0.0));
    let (max_i, max) = vals.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or((0, 0.0));
    let outliers = if vals.len() >= 3 {
        vals.iter().filter(|x| (x.1 - med).abs() > limit).map(|x| x.0).collect()
    } else {
        Vec::new()
    };
    Some(MetricSpread { metric, min, median: med, max, min_row: min_i, max_row: max_i, outliers })
}

/// The spread of every metric across `rows`; marks each row's outlier metrics.
pub fn spreads(rows: &mut [RankRow]) -> Vec<MetricSpread> {
    let metrics: Vec<MetricSpread> = RankMetric::ALL.iter().filter_map(|&m| spread(m, rows)).collect();
    for r in rows.iter_mut() {
        r.outlier.clear();
    }
    for m in &metrics {
        for &i in &m.outliers {
            rows[i].outlier.push(m.metric);
        }
    }
    metrics
}

/// The rank that made the others wait most by arriving last, if any waited.
pub fn straggler(waits: &[RankWait]) -> Option<usize> {
    waits.iter().filter(|w| w.caused_us > 0.0).max_by(|a, b| a.caused_us.total_cmp(&b.caused_us)).map(|w| w.row)
}

/// Collectives the ranks view lists (most waiting first); share links carry these.
pub const COLLECTIVES_SHOWN: usize = 15;

/// The job view of several traces (already sorted by rank).
pub fn job_view(traces: &[TraceReport], rows: &mut [RankRow]) -> JobView {
    let mut notes = Vec::new();
    let ranks: Vec<Option<i64>> = traces.iter().map(|t| t.rank).collect();
    let world: Vec<i64> = traces.iter().filter_map(|t| t.world_size).collect();
    let mut one_job = true;
    if ranks.iter().any(Option::is_none) {
        one_job = false;
        notes.push("some files carry no rank (distributedInfo): they may not be ranks of one job".to_string());
    }
    let mut seen: Vec<i64> = ranks.iter().flatten().copied().collect();
    seen.sort_unstable();
    if seen.windows(2).any(|w| w[0] == w[1]) {
        one_job = false;
        notes.push(
            "two files carry the same rank: they are not ranks of one job (or one run was profiled twice)".to_string(),
        );
    }
    if world.windows(2).any(|w| w[0] != w[1]) {
        one_job = false;
        notes.push(format!("the files disagree on the world size ({:?})", {
            let mut w = world.clone();
            w.dedup();
            w
        }));
    }
    let world_size = world.first().copied();
    if let Some(w) = world_size {
        if one_job && (seen.len() as i64) < w {
            notes.push(format!("{} of {w} ranks present", seen.len()));
        }
    }
    let metrics = spreads(rows);
    let (collectives, waits, matched_by_seq, unmatched, critical_path) = match_collectives(traces);
    for w in &waits {
        rows[w.row].wait_us = w.wait_us;
    }
    let straggler = straggler(&waits);
    JobView {
        one_job,
        notes,
        world_size,
        metrics,
        matched_by_seq,
        unmatched,
        straggler,
        waits,
        collectives,
        critical_path,
        critical_path_not_carried: 0,
    }
}

/// Matches each collective across ranks: by (group, sequence number) when every rank's trace
/// has them, else by (group, name, occurrence). Returns the matched collectives (largest wait
/// first, at most 200), per-rank waits, whether sequence numbers were used, and how many
/// collectives ran on only one rank.
fn match_collectives(traces: &[TraceReport]) -> (Vec<MatchedCollective>, Vec<RankWait>, bool, u64, Vec<JobStretch>) {
    let by_seq = traces.iter().all(|t| !t.collectives.is_empty() && t.collectives.iter().all(|c| c.seq.is_some()));
    type Key = (Option<String>, String, i64);
    let mut groups: FxHashMap<Key, Vec<(usize, &CollectiveCall)>> = FxHashMap::default();
    let mut order: Vec<Key> = Vec::new();
    for (row, t) in traces.iter().enumerate() {
        let mut occurrence: FxHashMap<(Option<&str>, &str), i64> = FxHashMap::default();
        for c in &t.collectives {
            let k = if by_seq {
                c.seq.unwrap_or(-1)
            } else {
                let n = occurrence.entry((c.group.as_deref(), c.name.as_str())).or_default();
                *n += 1;
                *n - 1
            };
            let key: Key = (c.group.clone(), if by_seq { String::new() } else { c.name.clone() }, k);
            let e = groups.entry(key.clone()).or_default();
            if e.is_empty() {
                order.push(key);
            }
            e.push((row, c));
        }
    }
    let mut waits: Vec<RankWait> = traces
        .iter()
        .enumerate()
        .map(|(row, t)| RankWait { row, rank: t.rank, wait_us: 0.0, caused_us: 0.0, last_count: 0 })
        .collect();
    let mut matched = Vec::new();
    let mut path = Vec::new();
    let mut unmatched = 0u64;
    for key in order {
        let calls = &groups[&key];
        if calls.len() < 2 {
            unmatched += 1;
            continue;
        }
        let transfer = calls.iter().map(|(_, c)| c.dur_ns).min().unwrap_or(0);
        let (last_row, _) = calls.iter().min_by_key(|(row, c)| (c.dur_ns, *row)).copied().unwrap_or((0, calls[0].1));
        let mut wait_total = 0i64;
        for (row, c) in calls {
            let w = c.dur_ns - transfer;
            waits[*row].wait_us += w as f64 / 1e3;
            wait_total += w;
        }
        waits[last_row].caused_us += wait_total as f64 / 1e3;
        waits[last_row].last_count += 1;
        if let Some(s) = stretch(traces, calls, last_row, wait_total) {
            path.push(s);
        }
        let first = calls[0].1;
        let start_min = calls.iter().map(|(_, c)| c.start_ns).min().unwrap_or(0);
        let start_max = calls.iter().map(|(_, c)| c.start_ns).max().unwrap_or(0);
        let bytes = first.bytes;
        matched.push(MatchedCollective {
            name: first.name.clone(),
            group: first.group.clone(),
            seq: first.seq,
            index: key.2,
            ranks: calls.len(),
            bytes,
            transfer_us: transfer as f64 / 1e3,
            wait_us: wait_total as f64 / 1e3,
            skew_us: (start_max - start_min) as f64 / 1e3,
            last_row,
            durations_us: calls.iter().map(|(row, c)| (*row, c.dur_ns as f64 / 1e3)).collect(),
            algbw_gbps: bytes.filter(|_| transfer > 0).map(|b| b as f64 / transfer as f64),
        });
    }
    matched.sort_by(|a, b| b.wait_us.total_cmp(&a.wait_us).then(a.index.cmp(&b.index)));
    matched.truncate(200);
    (matched, waits, by_seq, unmatched, path)
}

/// The job's path at one matched collective: the rank that arrived last and what its own
/// critical path spent the stretch before it on (its `Arrival` at that collective row).
fn stretch(
    traces: &[TraceReport],
    calls: &[(usize, &CollectiveCall)],
    last: usize,
    wait_ns: i64,
) -> Option<JobStretch> {
    let (_, c) = calls.iter().find(|(row, _)| *row == last)?;
    let t = &traces[last];
    let a = t.critical_path.as_ref()?.arrivals.iter().find(|a| a.start_ns == c.start_ns && a.dur_ns == c.dur_ns)?;
    Some(JobStretch {
        collective: c.name.clone(),
        seq: c.seq,
        row: last,
        rank: t.rank,
        held_by: a.held_by.clone(),
        side: a.side,
        held_us: a.held_us,
        stretch_us: a.stretch_us,
        wait_us: wait_ns as f64 / 1e3,
    })
}
