//! The checks of a decoded link's report that its types and generic bounds do not make:
//! indices into other parts, and the few lists whose length has a meaning (traces, ranks,
//! notes). The view part checks itself ([`super::LinkView::check`]).

use super::common::*;
use crate::analysis::rules::taxonomy::Bucket as BucketId;
use crate::report::{CriticalPath, JobStretch, JobView, RankMetric, Report};

/// The report's indices and meaningful lengths (texts, numbers and list sizes are bounded
/// generically before, in `bounds`).
pub fn check_report(r: &Report) -> Result<(), String> {
    if r.traces.is_empty() {
        return Err("no traces".into());
    }
    if r.traces.len() > MAX_TRACES || r.errors.len() > MAX_TRACES {
        return Err(format!("more than {MAX_TRACES} traces"));
    }
    if r.ranks.len() > MAX_RANKS {
        return Err(format!("more than {MAX_RANKS} ranks"));
    }
    for k in &r.ranks {
        if k.top_buckets.len() > BucketId::ALL.len() || k.outlier.len() > RankMetric::ALL.len() {
            return Err("too many top buckets or outliers on a rank".into());
        }
    }
    if let Some(j) = &r.job {
        check_job(j, r.ranks.len())?;
    }
    for t in &r.traces {
        if t.device.count > MAX_ROWS {
            return Err("too many devices".into());
        }
        if t.window.is_some_and(|w| w.start_ns >= w.end_ns) {
            return Err("an empty analysed range".into());
        }
        if let Some(p) = &t.critical_path {
            check_path(p, r.job.is_none())?;
        }
    }
    Ok(())
}

fn check_job(j: &JobView, ranks: usize) -> Result<(), String> {
    let row = |i: usize| if i < ranks { Ok(()) } else { Err(format!("rank row {i} of {ranks}")) };
    if j.notes.len() > 16 {
        return Err("too many notes on the job".into());
    }
    if j.waits.len() > ranks || j.metrics.len() > RankMetric::ALL.len() {
        return Err("more waits or metrics than ranks or metrics".into());
    }
    j.straggler.map_or(Ok(()), row)?;
    j.waits.iter().try_for_each(|w| row(w.row))?;
    for m in &j.metrics {
        row(m.min_row)?;
        row(m.max_row)?;
        m.outliers.iter().try_for_each(|&i| row(i))?;
    }
    if j.critical_path.len() > JobStretch::LINK_STRETCHES {
        return Err("more stretches of the job's critical path than a link carries".into());
    }
    for s in &j.critical_path {
        row(s.row)?;
        if [s.held_us, s.stretch_us, s.wait_us].iter().any(|&v| v < 0.0) {
            return Err("a stretch of the job's critical path out of range".into());
        }
    }
    if j.critical_path_not_carried > MAX_COUNT {
        return Err("a count of stretches out of range".into());
    }
    for c in &j.collectives {
        if c.ranks > ranks {
            return Err("a collective on ranks that do not exist".into());
        }
        row(c.last_row)?;
        if c.bytes.is_some_and(|b| b < 0) {
            return Err("a message size out of range".into());
        }
    }
    Ok(())
}

/// Counts of parts a link left out above this are not plausible (a step or collective each).
const MAX_COUNT: u64 = 1 << 32;

/// A trace's critical path as links carry it: at most the steps, pieces and buckets of the
/// subset (none in a link of several ranks), no segments in time, and no negative time.
fn check_path(p: &CriticalPath, steps: bool) -> Result<(), String> {
    let most = if steps { CriticalPath::LINK_STEPS } else { 0 };
    if p.steps.len() > most || p.steps_not_carried > MAX_COUNT || !p.arrivals.is_empty() {
        return Err("more of the critical path than a link carries".into());
    }
    // The path in time is drawn on the GPU timeline, which no link carries.
    let timed = p.steps.iter().any(|s| !s.segments.is_empty() || s.segments_left_out > 0);
    if timed || p.segments_not_carried > MAX_COUNT {
        return Err("the critical path's segments in a link".into());
    }
    for s in &p.steps {
        if s.pieces.len() > CriticalPath::LINK_PIECES || s.buckets.len() > CriticalPath::LINK_BUCKETS {
            return Err("more pieces of a step's critical path than a link carries".into());
        }
        if s.pieces.iter().any(|x| x.name as usize >= p.names.len()) {
            return Err("a piece of a step's critical path names no name the link carries".into());
        }
        let parts = [s.span_us, s.path_us, s.cpu_us, s.gpu_us, s.launch_us, s.gap_us, s.longest_row_us];
        let pieces = s.pieces.iter().map(|x| x.us).chain(s.buckets.iter().map(|b| b.us));
        if parts.iter().chain(&pieces.collect::<Vec<_>>()).any(|&v| v < 0.0) {
            return Err("a negative time on a step's critical path".into());
        }
    }
    Ok(())
}
