//! The declared subset of the report a link carries: the report's own types with the parts no
//! view of a link shows cleared, and text the page derives (bucket names and definitions from
//! the bucket id, a name's display form when it is the name) left empty on the wire, and numbers
//! it derives (a row's share, mean and max, a bucket's share, a hint's stake) written as `-0.0`
//! when the derivation gives them exactly.
//!
//! A field added to the report travels in links with no edit here; one that should not (it is
//! large, or needs the trace) gets one line in [`trace_subset`].

use crate::analysis::passes::stakes::derived_stake;
use crate::report::*;

/// What `decode(encode(report, _))` gives back: the report without the parts links leave out.
pub fn for_link(report: &Report) -> Report {
    let mut r = report.clone();
    // A link of several ranks carries the job's critical path, not each rank's steps (the 8
    // DLRM ranks' would pass the fragment's cap); each trace still says how many it left out.
    let steps = r.job.is_none();
    r.traces.iter_mut().for_each(|t| trace_subset(t, steps));
    if let Some(j) = &mut r.job {
        // The ranks view lists the first collectives, without their per-rank durations.
        j.collectives.truncate(crate::analysis::job::ranks::COLLECTIVES_SHOWN);
        j.collectives.iter_mut().for_each(|c| c.durations_us.clear());
        // The job's critical path: the stretches the page lists, the rest counted.
        let keep = JobStretch::LINK_STRETCHES;
        j.critical_path_not_carried += j.critical_path.len().saturating_sub(keep) as u64;
        j.critical_path.truncate(keep);
    }
    r
}

/// What a link leaves out of one trace: full lists and the why views need the trace (and the
/// fragment's budget); the page shows none of these for a link.
fn trace_subset(t: &mut TraceReport, path_steps: bool) {
    t.distributed_backend = None;
    t.devices.clear();
    t.steps.iter_mut().for_each(|s| (s.host_wait_us, s.kernel_wait_us, s.other_wait_us) = (0.0, 0.0, 0.0));
    t.launch = LaunchStats::default();
    t.training = false;
    // What decided the buckets: a line beside the chart, left to the full report.
    t.bucket_evidence = BucketEvidence::default();
    t.copies = Copies::default();
    t.tensor_cores = TensorCoreUse::default();
    t.kernels.clear();
    t.ops.clear();
    t.collectives.clear();
    t.idle = Default::default();
    t.layers.clear();
    t.memory = None;
    t.timeline = None;
    // The first steps' paths with their largest pieces (none with several ranks).
    t.critical_path = t.critical_path.as_ref().map(|p| p.link_subset(path_steps));
    t.efficiency = t.efficiency.as_ref().map(Efficiency::link_subset).filter(|e| !e.coverage.known_us.is_empty());
}

/// Marks a number the decoder derives again: `-0.0`, which no analysis writes.
const DERIVED: f64 = -0.0;

fn is_derived(v: f64) -> bool {
    v.to_bits() == DERIVED.to_bits()
}

/// `v` as `-0.0` when it is exactly `derived`.
fn strip_num(v: &mut f64, derived: f64) {
    if v.to_bits() == derived.to_bits() {
        *v = DERIVED;
    }
}

fn fill_num(v: &mut f64, derived: f64) {
    if is_derived(*v) {
        *v = derived;
    }
}

/// The analysis' share: integer nanoseconds of the part over the whole, in percent.
fn pct_of(time_us: f64, total_us: f64) -> f64 {
    let (part, whole) = ((time_us * 1000.0).round() as i64, (total_us * 1000.0).round() as i64);
    if whole <= 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The critical path's share (cpath.rs): integer nanoseconds of the piece over the path's.
fn path_pct(us: f64, path_us: f64) -> f64 {
    let (part, len) = ((us * 1000.0).round() as i64, (path_us * 1000.0).round() as i64);
    if len > 0 {
        part as f64 / len as f64 * 100.0
    } else {
        0.0
    }
}

fn mean_of(time_us: f64, count: u64) -> f64 {
    if count > 0 {
        time_us / count as f64
    } else {
        0.0
    }
}

fn strip_row(r: &mut TopRow, total_us: f64) {
    clear_short(&r.name, &mut r.short);
    strip_num(&mut r.pct, pct_of(r.time_us, total_us));
    strip_num(&mut r.mean_us, mean_of(r.time_us, r.count));
    strip_num(&mut r.max_us, r.time_us);
}

fn fill_row(r: &mut TopRow, total_us: f64) {
    fill_short(&r.name, &mut r.short);
    fill_num(&mut r.pct, pct_of(r.time_us, total_us));
    fill_num(&mut r.mean_us, mean_of(r.time_us, r.count));
    fill_num(&mut r.max_us, r.time_us);
}

/// Clears what the page derives again ([`restore_derived`]), on the wire form.
pub fn strip_derived(r: &mut Report) {
    for t in &mut r.traces {
        let total = t.gpu.kernel_time_us;
        // Stakes first: they are derived from the rest as the sender has it.
        let stakes: Vec<f64> = t.hints.iter().map(|h| derived_stake(h.id, t).unwrap_or(f64::NAN)).collect();
        t.hints.iter_mut().zip(stakes).for_each(|(h, d)| strip_num(&mut h.stake_us, d));
        t.top_kernels.iter_mut().chain(&mut t.top_ops).for_each(|k| strip_row(k, total));
        for b in &mut t.buckets {
            strip_num(&mut b.pct, pct_of(b.time_us, total));
            if b.name == b.id.name() {
                b.name.clear();
            }
            if b.rule == b.id.definition() {
                b.rule.clear();
            }
            b.top_names.iter_mut().for_each(|n| clear_short(&n.name, &mut n.short));
        }
        t.attention.evidence.iter_mut().for_each(|e| clear_short(&e.name, &mut e.short));
        if let Some(e) = &mut t.efficiency {
            e.kernels.iter_mut().for_each(|k| clear_short(&k.name, &mut k.short));
        }
        for s in t.critical_path.iter_mut().flat_map(|p| &mut p.steps) {
            let len = s.path_us;
            s.pieces.iter_mut().for_each(|x| strip_num(&mut x.pct_of_path, path_pct(x.us, len)));
            s.buckets.iter_mut().for_each(|b| strip_num(&mut b.pct_of_path, path_pct(b.us, len)));
        }
    }
}

/// The inverse of [`strip_derived`]: empty derived text becomes what it was derived from.
pub fn restore_derived(r: &mut Report) {
    for t in &mut r.traces {
        let total = t.gpu.kernel_time_us;
        t.top_kernels.iter_mut().chain(&mut t.top_ops).for_each(|k| fill_row(k, total));
        for b in &mut t.buckets {
            fill_num(&mut b.pct, pct_of(b.time_us, total));
            if b.name.is_empty() {
                b.name = b.id.name().to_string();
            }
            if b.rule.is_empty() {
                b.rule = b.id.definition();
            }
            b.top_names.iter_mut().for_each(|n| fill_short(&n.name, &mut n.short));
        }
        t.attention.evidence.iter_mut().for_each(|e| fill_short(&e.name, &mut e.short));
        if let Some(e) = &mut t.efficiency {
            e.kernels.iter_mut().for_each(|k| fill_short(&k.name, &mut k.short));
        }
        for s in t.critical_path.iter_mut().flat_map(|p| &mut p.steps) {
            let len = s.path_us;
            s.pieces.iter_mut().for_each(|x| fill_num(&mut x.pct_of_path, path_pct(x.us, len)));
            s.buckets.iter_mut().for_each(|b| fill_num(&mut b.pct_of_path, path_pct(b.us, len)));
        }
        // Stakes last: they are derived from the rest, restored.
        let stakes: Vec<f64> = t.hints.iter().map(|h| derived_stake(h.id, t).unwrap_or(0.0)).collect();
        t.hints.iter_mut().zip(stakes).for_each(|(h, d)| fill_num(&mut h.stake_us, d));
    }
}

fn clear_short(name: &str, short: &mut String) {
    if short == name {
        short.clear();
    }
}

fn fill_short(name: &str, short: &mut String) {
    if short.is_empty() {
        *short = name.to_string();
    }
}
