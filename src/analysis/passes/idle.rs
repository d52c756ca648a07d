//! Why the GPU waits. The GPU's idle (the gaps of the busy union of every stream) is split by
//! cause, each gap by the row that ends it: host wait when that row's launch call began after
//! the GPU went idle (the CPU was late), kernel wait when the gap is shorter than the threshold
//! (launch overhead between back-to-back kernels), other for the rest (waiting on another
//! stream or an event, or a row with no launch call). Per stream, every gap between consecutive
//! rows is classified the same way, as HolisticTraceAnalysis does. Also: what the CPU was doing
//! during host waits, and which synchronising calls overlapped the GPU's idle time.

use super::steps::us;
use crate::analysis::model::attribution::NO;
use crate::analysis::model::collect::{Call, Collector, GpuKind, NAME_GRAPH_LAUNCH};
use crate::analysis::model::frozen::{step_of, Model};
use crate::analysis::model::intervals::Span;
use crate::analysis::model::sort::{partition_point_from, sort_unless_sorted};
use crate::report::{IdleCauses, NameTime, StreamIdle};
pub use crate::vocab::IdleCause;
use rustc_hash::FxHashMap;

/// Gaps shorter than this are kernel waits. (HolisticTraceAnalysis' `consecutive_kernel_delay`
/// defaults to 30 us; with 50 its breakdown equals ours on every shared trace it reads:
/// scripts/compare_hta_idle.py.)
pub const KERNEL_WAIT_NS: i64 = 50_000;

impl IdleCause {
    /// The cause of a gap of `gap` ns after the stream's rows ended at `end`, before a row whose
    /// launch call (if known) began at `launch`.
    pub fn of_gap(end: i64, gap: i64, launch: Option<i64>) -> IdleCause {
        match launch {
            Some(start) if start > end => IdleCause::Host,
            _ if gap < KERNEL_WAIT_NS => IdleCause::Kernel,
            _ => IdleCause::Other,
        }
    }

    /// This cause's time in `i`.
    pub fn of(self, i: &IdleCauses) -> f64 {
        match self {
            IdleCause::Host => i.host_wait_us,
            IdleCause::Kernel => i.kernel_wait_us,
            IdleCause::Other => i.other_us,
        }
    }
}

/// A (device, stream) and its GPU rows in time order.
pub type Stream = ((i32, i32), Vec<u32>);

/// The GPU rows of each (device, stream), in time order; streams sorted.
pub fn streams(c: &Collector) -> Vec<Stream> {
    // Counted first, so that each list is allocated at its size.
    let mut count = vec![0usize; c.gpu.lanes().len()];
    for i in 0..c.gpu.len() {
        count[c.gpu.lane_of(i) as usize] += 1;
    }
    let mut by_lane: Vec<Vec<u32>> = count.into_iter().map(Vec::with_capacity).collect();
    for i in 0..c.gpu.len() {
        by_lane[c.gpu.lane_of(i) as usize].push(i as u32);
    }
    let mut out: Vec<Stream> =
        c.gpu.lanes().iter().copied().zip(by_lane).filter(|(_, rows)| !rows.is_empty()).collect();
    out.sort_unstable_by_key(|x| x.0);
    for (_, rows) in &mut out {
        sort_unless_sorted(rows, |&i| (c.gpu.start(i as usize), i));
    }
    out
}

/// Per step: (host, kernel, other) wait, and the idle ending at a kernel an op launched one by
/// one (the step's launch-bound stake), in ns.
pub type StepWaits = Vec<(i64, i64, i64, i64)>;

/// The idle split by cause, each step's waits, and the idle that ends at a kernel an op launched
/// one by one (ns; the launch-bound hint's time at stake), from the rows per stream (`streams`).
pub fn idle_causes(m: &Model, streams: &[Stream]) -> (IdleCauses, StepWaits, i64) {
    let (c, at, runtime, steps, busy) = (m.c, m.at, m.runtime, m.steps, m.busy_union);
    let names = &c.names;
    let mut out = IdleCauses { kernel_wait_threshold_us: us(KERNEL_WAIT_NS), ..Default::default() };
    let mut gaps = DeviceGaps {
        device: [0; 3],
        step_waits: vec![(0, 0, 0, 0); steps.len()],
        host_ops: FxHashMap::default(),
        eager_ns: 0,
    };
    // The device's idle: the gaps of the busy union of every stream. Each gap gets one cause,
    // that of the row that ends it (the first such row in stream order), so the causes sum to
    // the idle exactly; a stream's own gaps, which overlap other streams' work and each
    // other, are only the per-stream figures.
    let idle = Gaps(busy);
    let mut taken = vec![false; idle.len()];
    for &(key, ref rows) in streams {
        let mut totals = [0i64; 3];
        let (mut end, mut hint) = (i64::MIN, 0);
        for &i in rows.iter() {
            // The row's start and length; its kind only where a gap ends at it (the start is
            // the costly column, the rest of the row not needed).
            let (start, dur) = c.gpu.start_dur(i as usize);
            let call = match at.runtime[i as usize] {
                NO => None,
                r => Some(&runtime[r as usize]),
            };
            if end != i64::MIN && start > end {
                let gap = start - end;
                out.gaps += 1;
                totals[IdleCause::of_gap(end, gap, call.map(|x| x.start)) as usize] += gap;
            }
            if let Some(k) = idle.ending_at(start, &mut hint) {
                if !taken[k] {
                    let gap = idle.get(k);
                    taken[k] = true;
                    // A kernel an op launched one by one ends this gap: idle between such kernels.
                    let eager = call.is_some_and(|x| !c.names.is(x.name, NAME_GRAPH_LAUNCH))
                        && c.gpu.kind(i as usize) == GpuKind::Kernel
                        && at.leaf[i as usize] != NO;
                    gaps.add(m, gap, call, start, eager);
                    if eager {
                        gaps.eager_ns += gap.1 - gap.0;
                    }
                }
            }
            end = end.max(start + dur);
        }
        out.streams.push(StreamIdle {
            device: key.0 as i64,
            stream: key.1 as i64,
            host_wait_us: us(totals[0]),
            kernel_wait_us: us(totals[1]),
            other_us: us(totals[2]),
        });
    }
    let DeviceGaps { mut device, step_waits, host_ops, eager_ns } = gaps;
    // A gap no row ends (not expected: every busy span starts with a row) is still idle.
    device[IdleCause::Other as usize] +=
        idle.iter().zip(&taken).filter(|(_, t)| !**t).map(|(g, _)| g.1 - g.0).sum::<i64>();
    out.host_wait_us = us(device[0]);
    out.kernel_wait_us = us(device[1]);
    out.other_us = us(device[2]);
    out.host_ops = top(host_ops, |n| {
        if n == NO {
            "(no op recorded on the launching thread)".to_string()
        } else {
            names.get(n).to_string()
        }
    });
    out.syncs = sync_overlap(c, busy, idle);
    (out, step_waits, eager_ns)
}

/// The device's idle by cause, each step's waits, and what the launching threads were doing
/// while the GPU waited for them (time and count per op name).
struct DeviceGaps {
    device: [i64; 3],
    step_waits: StepWaits,
    host_ops: FxHashMap<u32, (i64, u64)>,
    /// Idle ending at a kernel an op launched one by one (ns).
    eager_ns: i64,
}

impl DeviceGaps {
    /// A gap of the busy union, given the cause of the row `start` that ends it (`call`: its
    /// launch call; `eager`: an op launched that row one by one).
    fn add(&mut self, m: &Model, (from, to): (i64, i64), call: Option<&Call>, start: i64, eager: bool) {
        let cause = IdleCause::of_gap(from, to - from, call.map(|x| x.start));
        self.device[cause as usize] += to - from;
        if !m.steps.is_empty() {
            let s = step_of(m.steps, call.map(|x| x.start).unwrap_or(start));
            if s != NO {
                let w = &mut self.step_waits[s as usize];
                match cause {
                    IdleCause::Host => w.0 += to - from,
                    IdleCause::Kernel => w.1 += to - from,
                    IdleCause::Other => w.2 += to - from,
                }
                if eager {
                    w.3 += to - from;
                }
            }
        }
        if let (IdleCause::Host, Some(call)) = (cause, call) {
            // What the launching thread was doing while the GPU waited for it.
            let late = call.start.min(to) - from;
            let op = m.at.ops.innermost(call.thread, from + late / 2);
            let name = if op == NO { NO } else { m.at.ops.spans[op as usize].name };
            let e = self.host_ops.entry(name).or_default();
            e.0 += late;
            e.1 += 1;
        }
    }
}

fn top(m: FxHashMap<u32, (i64, u64)>, name: impl Fn(u32) -> String) -> Vec<NameTime> {
    let mut v: Vec<NameTime> = m
        .into_iter()
        .map(|(n, (ns, count))| NameTime { short: String::new(), name: name(n), time_us: us(ns), count })
        .collect();
    v.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then_with(|| a.name.cmp(&b.name)));
    v.truncate(10);
    for x in &mut v {
        x.short = x.name.clone();
    }
    v
}

/// The device's idle time: the gaps between the spans of a busy union (sorted, disjoint,
/// touching spans merged, so every gap is longer than zero), read where the union lies. A copy
/// (16 bytes a gap) was the page worker's peak at 500 MB of trace (4 MiB of 74).
#[derive(Clone, Copy)]
struct Gaps<'a>(&'a [Span]);

impl<'a> Gaps<'a> {
    fn len(self) -> usize {
        self.0.len().saturating_sub(1)
    }

    fn get(self, k: usize) -> Span {
        (self.0[k].1, self.0[k + 1].0)
    }

    /// The gap that ends at `t`, if one does, searched from `hint` (see `partition_point_from`):
    /// a stream's rows come in time order (a binary search per row was 9 of this pass's 22 ms on
    /// a 500 MB trace).
    fn ending_at(self, t: i64, hint: &mut usize) -> Option<usize> {
        let after = self.0.get(1..)?;
        let k = partition_point_from(after, hint, |s| s.0 < t);
        after.get(k).is_some_and(|s| s.0 == t).then_some(k)
    }

    /// The first gap that ends after `t`.
    fn first_ending_after(self, t: i64) -> usize {
        self.0.get(1..).map_or(0, |after| after.partition_point(|s| s.0 <= t))
    }

    fn iter(self) -> impl Iterator<Item = Span> + 'a {
        self.0.windows(2).map(|w| (w[0].1, w[1].0))
    }
}

/// Time each synchronising call overlapped the GPU's idle time (`idle`: the gaps of `busy`).
fn sync_overlap(c: &Collector, busy: &[Span], idle: Gaps) -> Vec<NameTime> {
    let (Some(first), Some(last)) = (busy.first(), busy.last()) else { return Vec::new() };
    let mut m: FxHashMap<u32, (i64, u64)> = FxHashMap::default();
    for s in &c.syncs {
        let (a, b) = (s.start.max(first.0), s.end.min(last.1));
        if b <= a {
            continue;
        }
        let k = idle.first_ending_after(a);
        let mut overlap = 0;
        for g in idle.iter().skip(k) {
            if g.0 >= b {
                break;
            }
            overlap += g.1.min(b) - g.0.max(a);
        }
        if overlap > 0 {
            let e = m.entry(s.name).or_default();
            e.0 += overlap;
            e.1 += 1;
        }
    }
    top(m, |n| c.names.get(n).to_string())
}

#[cfg(test)]
mod tests {
    use super::Gaps;
    use crate::analysis::model::intervals::union;

    /// The gaps read from the union answer as a copied list of them would.
    #[test]
    fn gaps_are_read_from_the_union() {
        let busy = union(vec![(10, 20), (20, 25), (30, 40), (41, 50), (45, 60), (100, 110)]);
        let copied: Vec<(i64, i64)> = busy.windows(2).map(|w| (w[0].1, w[1].0)).filter(|g| g.1 > g.0).collect();
        let gaps = Gaps(&busy);
        assert_eq!(gaps.iter().collect::<Vec<_>>(), copied);
        assert_eq!(copied, vec![(25, 30), (40, 41), (60, 100)]);
        assert_eq!(gaps.len(), copied.len());
        // In time order, as a stream's rows ask, and each from a hint past the end.
        let mut hint = 0;
        for t in 0..120 {
            let want = copied.binary_search_by_key(&t, |g| g.1).ok();
            assert_eq!(gaps.ending_at(t, &mut hint), want, "ending at {t}");
            assert_eq!(gaps.ending_at(t, &mut 10), want, "ending at {t}, searched back");
            assert_eq!(gaps.first_ending_after(t), copied.partition_point(|g| g.1 <= t), "after {t}");
        }
        for (k, gap) in copied.iter().enumerate() {
            assert_eq!(gaps.get(k), *gap);
        }
        assert_eq!(Gaps(&[]).len(), 0);
        assert_eq!(Gaps(&[(1, 2)]).ending_at(1, &mut 0), None);
        assert_eq!(Gaps(&[(1, 2)]).first_ending_after(0), 0);
    }
}
