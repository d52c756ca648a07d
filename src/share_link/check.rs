//! The checks of a decoded link that its types and generic bounds do not make: indices into
//! other parts, and the few lists whose length has a meaning (traces, ranks, notes).

use super::common::*;
use super::state::*;
use crate::analysis::rules::taxonomy::Bucket as BucketId;
use crate::report::{JobView, RankMetric, Report};

/// Longest rules text a link may carry.
pub const MAX_RULES_BYTES: usize = 4096;

/// The state's bounds, and with a report its indices.
pub fn check_state(s: &ViewState, report: Option<&Report>) -> Result<(), String> {
    for t in [&s.kernels, &s.ops] {
        if t.query.chars().count() > MAX_QUERY || t.query.chars().any(char::is_control) {
            return Err("search text too long or with control characters".into());
        }
        if t.expanded.len() > MAX_ROWS {
            return Err("too many expanded rows".into());
        }
    }
    if s.buckets_open.len() > BucketId::ALL.len() {
        return Err("too many unfolded buckets".into());
    }
    if let Some(c) = &s.compare {
        if c.a.len() > MAX_RANKS || c.b.len() > MAX_RANKS {
            return Err("too many traces compared".into());
        }
        if c.a.iter().any(|i| c.b.contains(i)) {
            return Err("a trace compared with itself".into());
        }
        let sorted = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
        if !sorted(&c.a) || !sorted(&c.b) {
            return Err("a compared set out of order or repeated".into());
        }
    }
    if s.figures
        .fields()
        .iter()
        .any(|f| f.chars().count() > super::state::MAX_FIGURE || f.chars().any(char::is_control))
    {
        return Err("a peak or model figure too long or with control characters".into());
    }
    if s.rules.len() > MAX_RULES_BYTES {
        return Err(format!("bucket rules longer than {MAX_RULES_BYTES} bytes"));
    }
    if let Err(e) = crate::analysis::rules::taxonomy::parse_rules(&s.rules) {
        return Err(format!("bucket rules that cannot be read ({e})"));
    }
    if let Some(r) = report {
        let n = r.traces.len() as u32;
        if s.trace >= n.max(1) {
            return Err(format!("trace {} selected of {n}", s.trace));
        }
        if let Some(c) = &s.compare {
            if c.a.iter().chain(&c.b).any(|&i| i >= n) {
                return Err("compared trace out of range".into());
            }
        }
        if let Some(t) = r.traces.get(s.trace as usize) {
            if s.kernels.expanded.iter().any(|&i| i as usize >= t.top_kernels.len())
                || s.ops.expanded.iter().any(|&i| i as usize >= t.top_ops.len())
            {
                return Err("an expanded row that does not exist".into());
            }
        }
    } else if s.trace as usize >= MAX_TRACES {
        return Err("trace index out of range".into());
    }
    Ok(())
}

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
