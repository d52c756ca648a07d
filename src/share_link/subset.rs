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
    r.traces.iter_mut().for_each(trace_subset);
    if let Some(j) = &mut r.job {
        // The ranks view lists the first collectives, without their per-rank durations.
        j.collectives.truncate(crate::analysis::job::ranks::COLLECTIVES_SHOWN);
        j.collectives.iter_mut().for_each(|c| c.durations_us.clear());
        // The job's critical path: its stretches name rows of every rank (the page does not
        // draw it yet).
        j.critical_path.clear();
    }
    r
}

/// What a link leaves out of one trace: full lists and the why views need the trace (and the
/// fragment's budget); the page shows none of these for a link.
fn trace_subset(t: &mut TraceReport) {
    t.distributed_backend = None;
    t.devices.clear();
    t.steps.iter_mut().for_each(|s| (s.host_wait_us, s.kernel_wait_us, s.other_wait_us) = (0.0, 0.0, 0.0));
    t.launch = LaunchStats::default();
    t.training = false;
    t.copies = Copies::default();
    t.tensor_cores = TensorCoreUse::default();
    t.kernels.clear();
    t.ops.clear();
    t.collectives.clear();
    t.idle = Default::default();
    t.layers.clear();
    t.memory = None;
    t.timeline = None;
    // Pieces and what-if per step: a full list, not shown from a link yet.
    t.critical_path = None;
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
