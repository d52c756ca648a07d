//! The checks of a decoded link's report that its types and generic bounds do not make:
//! indices into other parts, and the few lists whose length has a meaning (traces, ranks,
//! notes). The view part checks itself ([`super::LinkView::check`]).

use super::common::*;
use crate::analysis::rules::taxonomy::Bucket as BucketId;
use crate::report::{JobView, RankMetric, Report};

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
