//! Pass 5, time: interval metrics (busy, idle, compute, communication, overlap) over any set
//! of GPU rows, and the ProfilerStep windows they are split by. Exact integer nanoseconds.

use crate::analysis::model::attribution::NO;
use crate::analysis::model::collect::GpuKind;
use crate::analysis::model::frozen::Model;
use crate::analysis::model::intervals::{self, Span};
use crate::analysis::rules::taxonomy::Bucket;
use crate::report::GpuTime;

pub use crate::vocab::units::{pct, us};

/// Interval metrics over a set of GPU rows. Spans are kept per kind only (the busy union is
/// the union of the three), and each list is merged into its union whenever it has doubled
/// since the last merge: exact (a union of unions is the union), and bounded by the number of
/// disjoint busy intervals rather than the number of rows.
#[derive(Default)]
pub struct Lanes {
    compute: Merging,
    comm: Merging,
    memory: Merging,
    /// First start and last end of any row (zero-length ones included).
    extent: Option<(i64, i64)>,
    pub kernel_ns: i64,
    count: u64,
}

/// Spans, merged into their union whenever they have doubled since the last merge.
#[derive(Default)]
struct Merging {
    spans: Vec<Span>,
    merged_len: usize,
}

impl Merging {
    fn push(&mut self, span: Span) {
        self.spans.push(span);
        if self.spans.len() >= 4096 && self.spans.len() >= 2 * self.merged_len {
            self.spans = intervals::union(std::mem::take(&mut self.spans));
            self.merged_len = self.spans.len();
        }
    }
}

impl Lanes {
    /// A row by its start, length and kind (not the whole row: its start is the costly column
    /// to decode, and the rest is not needed).
    pub fn add(&mut self, (start, dur): (i64, i64), kind: GpuKind, bucket: Bucket) {
        let span = (start, start + dur);
        self.extent = Some(match self.extent {
            Some((a, b)) => (a.min(span.0), b.max(span.1)),
            None => span,
        });
        self.kernel_ns += dur;
        self.count += 1;
        if kind != GpuKind::Kernel {
            self.memory.push(span);
        } else if bucket == Bucket::Communication {
            self.comm.push(span);
        } else {
            self.compute.push(span);
        }
    }

    /// First start and last end of any row added (zero-length ones included).
    pub fn extent(&self) -> Option<(i64, i64)> {
        self.extent
    }

    pub fn time(self) -> GpuTime {
        self.time_and_gaps().0
    }

    /// The metrics, plus the gaps between busy intervals longer than 50 us (host-side waits:
    /// count, total and the largest), read off the same union.
    pub fn time_and_gaps(self) -> (GpuTime, (u64, i64, i64)) {
        let (t, g, _) = self.time_and_union();
        (t, g)
    }

    /// The metrics, the long gaps, and the busy union itself (the idle-cause pass reads it).
    pub fn time_and_union(self) -> (GpuTime, (u64, i64, i64), Vec<Span>) {
        let (first, last) = self.extent.unwrap_or((0, 0));
        let compute = intervals::union(self.compute.spans);
        let comm = intervals::union(self.comm.spans);
        let memory = intervals::union(self.memory.spans);
        let all = intervals::union_of(&[&compute, &comm, &memory]);
        let busy = intervals::total(&all);
        let mut gaps = (0u64, 0i64, 0i64);
        for w in all.windows(2) {
            let gap = w[1].0 - w[0].1;
            if gap > 50_000 {
                gaps.0 += 1;
                gaps.1 += gap;
                gaps.2 = gaps.2.max(gap);
            }
        }
        let span = last - first;
        let comm_ns = intervals::total(&comm);
        let overlap = intervals::intersection(&comm, &compute);
        let time = GpuTime {
            kernel_time_us: us(self.kernel_ns),
            busy_us: us(busy),
            span_us: us(span),
            idle_us: us(span - busy),
            compute_us: us(intervals::total(&compute)),
            comm_us: us(comm_ns),
            exposed_comm_us: us(comm_ns - overlap),
            overlap_pct: pct(overlap, comm_ns),
            memory_us: us(intervals::total(&memory)),
            kernel_count: self.count,
            est_sm_efficiency_pct: None,
            achieved_occupancy_pct: None,
            occupancy_unknown_us: 0.0,
        };
        (time, gaps, all)
    }
}

/// Per step, the interval metrics of its rows (`row_step`: each row's step, or NO).
pub fn step_times(m: &Model) -> Vec<GpuTime> {
    let (c, row_step, buckets, steps) = (m.c, m.row_step, m.buckets, m.steps.len());
    // The rows grouped by step (a counting sort, in row order within a step).
    let mut begin = vec![0usize; steps + 1];
    for &s in row_step.iter().filter(|&&s| s != NO) {
        begin[s as usize + 1] += 1;
    }
    for k in 0..steps {
        begin[k + 1] += begin[k];
    }
    let mut next = begin.clone();
    let mut grouped = vec![0u32; begin[steps]];
    for (i, &s) in row_step.iter().enumerate().filter(|(_, &s)| s != NO) {
        grouped[next[s as usize]] = i as u32;
        next[s as usize] += 1;
    }
    let mut times: Vec<GpuTime> = (0..steps)
        .map(|k| {
            let mut lanes = Lanes::default();
            for &i in &grouped[begin[k]..begin[k + 1]] {
                let i = i as usize;
                lanes.add(c.gpu.start_dur(i), c.gpu.kind(i), buckets[i]);
            }
            lanes.time()
        })
        .collect();
    for (t, idle) in times.iter_mut().zip(device_idle(m.step_extent, m.busy_union)) {
        t.idle_us = us(idle);
    }
    times
}

/// Per step, the device's idle inside its GPU extent (no row of any step running), each moment
/// given to the first step by start whose extent holds it: steps whose rows overlap (a
/// collective of one still running while the next computes) do not count the same gap twice,
/// and the steps' idle sums to at most the trace's. With steps one after another this is the
/// extent less the step's own busy time.
fn device_idle(extents: &[(i64, i64)], busy: &[Span]) -> Vec<i64> {
    let gaps: Vec<Span> = busy.windows(2).map(|w| (w[0].1, w[1].0)).filter(|g| g.1 > g.0).collect();
    let mut order: Vec<usize> = (0..extents.len()).filter(|&k| extents[k].0 < extents[k].1).collect();
    order.sort_by_key(|&k| extents[k]);
    let mut out = vec![0i64; extents.len()];
    let mut claimed = i64::MIN;
    for k in order {
        let (from, to) = (extents[k].0.max(claimed), extents[k].1);
        claimed = claimed.max(to);
        if from >= to {
            continue;
        }
        let first = gaps.partition_point(|g| g.1 <= from);
        out[k] = gaps[first..].iter().take_while(|g| g.0 < to).map(|g| g.1.min(to) - g.0.max(from)).sum();
    }
    out
}
