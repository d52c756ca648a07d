//! The GPU timeline: utilisation over time per stream, downsampled into a fixed number of
//! equal bins, so the summary has the same bounded size for a 1 MB or a 3 GB trace. Each bin
//! keeps exact nanoseconds: busy time by bucket, idle time by cause (the same gaps and causes
//! as [`super::idle`]), and the kernel that ran longest in it (what a hover shows).

use super::idle::{IdleCause, Stream};
use super::steps::us;
use crate::analysis::model::attribution::NO;
use crate::analysis::model::frozen::Model;
use crate::analysis::rules::taxonomy::Bucket;
use crate::report::{LaneBin, StepMark, Timeline, TimelineLane};
use rustc_hash::FxHashMap;

/// Bins across the range: about one per two pixels of a laptop-wide strip.
pub const BINS: usize = 240;
/// Streams drawn (the busiest); the rest are counted, not drawn.
pub const MAX_LANES: usize = 16;
/// Step marks kept (evenly spaced when a trace has more steps): one per bin is all a strip
/// can show, and the bound keeps the summary's size fixed.
pub const MAX_STEP_MARKS: usize = BINS;

/// The strip: each drawn stream's time per bin, by bucket and wait, from the rows per stream.
pub fn timeline(m: &Model, streams: &[Stream]) -> Option<Timeline> {
    let (first, last) = m.gpu_extent?;
    let (from, to) = match m.window {
        // An open end (`--range 100..`) stops at the last row.
        Some(w) => (w.start_ns, if w.end_ns >= i64::MAX / 4 { last.max(w.start_ns + 1) } else { w.end_ns }),
        None => (first, last),
    };
    let range = (to - from).max(1);
    let bin_ns = (range + BINS as i64 - 1) / BINS as i64;
    let nbins = ((range + bin_ns - 1) / bin_ns) as usize;
    let bins = Bins { start: from, bin_ns, n: nbins };
    let (shown, hidden) = busiest_streams(m, streams);
    let mut tops = TopNames::default();
    let lanes = shown.iter().map(|&(k, busy_ns)| lane(m, &bins, &streams[k], busy_ns, &mut tops)).collect();
    let (steps, step_marks) = step_marks(m, from, to);
    let steps_len = steps.len();
    Some(Timeline {
        start_ns: from,
        end_ns: to,
        bin_ns,
        lanes,
        hidden_lanes: hidden.len() as u32,
        hidden_busy_us: us(hidden.iter().map(|x| x.1).sum()),
        steps,
        hidden_steps: (step_marks - steps_len) as u32,
        names: tops.names,
    })
}

/// (stream index, busy ns) per stream.
type StreamBusy = Vec<(usize, i64)>;

/// Each stream's busy time; the busiest `MAX_LANES` (in stream order) to draw, and the rest.
fn busiest_streams(m: &Model, streams: &[Stream]) -> (StreamBusy, StreamBusy) {
    let mut busy: Vec<(usize, i64)> = streams
        .iter()
        .enumerate()
        .map(|(k, (_, rows))| {
            let mut end = i64::MIN;
            let mut total = 0;
            for &i in rows {
                let (start, dur) = m.c.gpu.start_dur(i as usize);
                let (a, b) = (start.max(end), start + dur);
                if b > a {
                    total += b - a;
                }
                end = end.max(b);
            }
            (k, total)
        })
        .collect();
    busy.sort_by_key(|&(k, ns)| (std::cmp::Reverse(ns), k));
    let hidden = busy.split_off(busy.len().min(MAX_LANES));
    busy.sort_unstable();
    (busy, hidden)
}

/// The names of the bins' longest-running kernels, each once, in the order first needed.
#[derive(Default)]
struct TopNames {
    names: Vec<String>,
    index: FxHashMap<u32, u32>,
}

impl TopNames {
    fn id(&mut self, m: &Model, name: u32) -> u32 {
        let names = &mut self.names;
        *self.index.entry(name).or_insert_with(|| {
            names.push(
                m.facts.get(&name).map(|f| f.name.short.clone()).unwrap_or_else(|| m.c.names.get(name).to_string()),
            );
            names.len() as u32 - 1
        })
    }
}

/// One stream's bins: busy time by bucket, idle time by cause, and the longest-running kernel.
fn lane(m: &Model, bins: &Bins, stream: &Stream, busy_ns: i64, tops: &mut TopNames) -> TimelineLane {
    let ((device, stream), rows) = stream;
    let nbins = bins.n;
    let mut out: Vec<LaneBin> = vec![LaneBin::default(); nbins];
    // Per bin: time per kernel name, to find the longest-running one.
    let mut per_name: Vec<Vec<(u32, i64)>> = vec![Vec::new(); nbins];
    // Per bin: time per bucket, in a flat table (a map per bin would be one lookup per
    // row piece); the bins' maps are filled from it at the end.
    let mut per_bucket = vec![[0i64; Bucket::ALL.len()]; nbins];
    let mut end = i64::MIN;
    for &i in rows {
        let g = m.c.gpu.get(i as usize);
        let row_end = g.start + g.dur;
        if end != i64::MIN && g.start > end {
            let launch = match m.at.runtime[i as usize] {
                NO => None,
                r => Some(m.runtime[r as usize].start),
            };
            let cause = IdleCause::of_gap(end, g.start - end, launch);
            bins.spread(end, g.start, |b, ns| *out[b].wait_mut(cause) += ns);
        }
        let bucket = m.buckets[i as usize];
        bins.spread(g.start.max(end), row_end, |b, ns| {
            per_bucket[b][bucket.index()] += ns;
            add(&mut per_name[b], g.name, ns);
        });
        end = end.max(row_end);
    }
    for ((bin, counts), ns) in out.iter_mut().zip(per_name).zip(per_bucket) {
        // Pieces are never empty, so a bucket that ran in the bin has time in it.
        bin.busy = Bucket::ALL.into_iter().zip(ns).filter(|&(_, ns)| ns != 0).collect();
        if let Some(&(name, _)) = counts.iter().max_by_key(|&&(n, ns)| (ns, std::cmp::Reverse(n))) {
            bin.top = Some(tops.id(m, name));
        }
    }
    TimelineLane { device: *device as i64, stream: *stream as i64, busy_us: us(busy_ns), bins: out }
}

/// Per ProfilerStep in the range: its name and the GPU extent of the rows it launched, at most
/// `MAX_STEP_MARKS` of them; and how many there were.
fn step_marks(m: &Model, from: i64, to: i64) -> (Vec<StepMark>, usize) {
    let marks = m.steps.iter().zip(m.step_extent).filter(|(_, e)| e.0 <= e.1);
    let marks = marks.map(|(w, e)| StepMark { name: w.name.clone(), start_ns: e.0, end_ns: e.1 });
    let steps: Vec<StepMark> = marks.filter(|s| s.end_ns > from && s.start_ns < to).collect();
    let step_marks = steps.len();
    let steps = if step_marks <= MAX_STEP_MARKS {
        steps
    } else {
        // Every k-th step, the first and the last kept.
        let k = step_marks.div_ceil(MAX_STEP_MARKS);
        steps.into_iter().enumerate().filter(|(i, _)| i % k == 0 || *i == step_marks - 1).map(|(_, s)| s).collect()
    };
    (steps, step_marks)
}

fn add<K: PartialEq>(v: &mut Vec<(K, i64)>, key: K, ns: i64) {
    match v.iter_mut().find(|(k, _)| *k == key) {
        Some(e) => e.1 += ns,
        None => v.push((key, ns)),
    }
}

struct Bins {
    start: i64,
    bin_ns: i64,
    n: usize,
}

impl Bins {
    /// Splits `[a, b)` at bin edges (clipped to the range) and hands each piece to `f`.
    fn spread(&self, a: i64, b: i64, mut f: impl FnMut(usize, i64)) {
        let range_end = self.start + self.bin_ns * self.n as i64;
        let (mut t, b) = (a.max(self.start), b.min(range_end));
        while t < b {
            let k = ((t - self.start) / self.bin_ns) as usize;
            let edge = (self.start + (k as i64 + 1) * self.bin_ns).min(b);
            f(k, edge - t);
            t = edge;
        }
    }
}
