//! The trace's model once it is read, attributed and classified: frozen (shared references
//! only), and all that the passes read. Each pass is a function of the model that returns one
//! part of the report; `build` lists them and hands them to the fork.

use super::attribution::{Attribution, SpanTree, NO};
use super::collect::{Call, CallIds, Collector, Interner, NAME_STEP};
use super::intervals::Span;
use crate::analysis::model::classify::Why;
use crate::analysis::options::Options;
use crate::analysis::rules::taxonomy::{Bucket, KernelFacts};
use crate::report::TimeWindow;
use rustc_hash::FxHashMap;

pub struct Model<'a> {
    /// The rows, names, ops and metadata as read.
    pub c: &'a Collector,
    /// Which op and runtime call launched each row; the op tree.
    pub at: &'a Attribution,
    /// The runtime calls, sorted by (correlation, start, thread).
    pub runtime: &'a [Call],
    /// The calls the `cuda_sync` rows name, by correlation id.
    pub call_ids: &'a CallIds,
    pub steps: &'a [StepWindow],
    /// What each distinct row name says as a kernel (demangled and matched once).
    pub facts: &'a FxHashMap<u32, KernelFacts>,
    /// Per GPU row: its bucket.
    pub buckets: &'a [Bucket],
    /// Per GPU row: its step, or NO (empty when there are no steps).
    pub row_step: &'a [u32],
    /// Per step: the GPU extent of its rows.
    pub step_extent: &'a [(i64, i64)],
    /// First start and last end of any GPU row; None without rows.
    pub gpu_extent: Option<(i64, i64)>,
    /// The busy union of every stream.
    pub busy_union: &'a [Span],
    /// The rows' time by (kernel, leaf op, bucket, rule) and per op.
    pub sums: &'a RowSums,
    pub window: Option<TimeWindow>,
    pub opts: &'a Options,
}

/// The rows' time summed for the tables, in the same pass over the rows as the totals.
pub struct RowSums {
    pub rows: RowMap,
    /// Per op of the tree: the GPU time it launched as a leaf.
    pub op_gpu: Vec<i64>,
    /// All rows' time.
    pub total_ns: i64,
}

#[derive(Default, Clone, Copy)]
pub struct Agg {
    pub ns: i64,
    pub count: u64,
    pub max: i64,
}

impl Agg {
    pub fn add(&mut self, ns: i64) {
        self.ns += ns;
        self.count += 1;
        self.max = self.max.max(ns);
    }
    pub fn merge(&mut self, o: &Agg) {
        self.ns += o.ns;
        self.count += o.count;
        self.max = self.max.max(o.max);
    }
}

/// Row time keyed by (kernel name, leaf op name or NO, bucket, why).
pub type RowMap = FxHashMap<(u32, u32, Bucket, Why), Agg>;

/// A ProfilerStep window on the CPU.
pub struct StepWindow {
    pub name: String,
    pub start: i64,
    pub end: i64,
}

pub fn step_windows(tree: &SpanTree, names: &Interner) -> Vec<StepWindow> {
    let mut steps: Vec<StepWindow> = Vec::new();
    let mut index: FxHashMap<u32, usize> = FxHashMap::default();
    for o in &tree.spans {
        if !names.is(o.name, NAME_STEP) {
            continue;
        }
        let name = names.get(o.name);
        match index.get(&o.name) {
            Some(&k) => {
                steps[k].start = steps[k].start.min(o.start);
                steps[k].end = steps[k].end.max(o.end);
            }
            None => {
                index.insert(o.name, steps.len());
                steps.push(StepWindow { name: name.to_string(), start: o.start, end: o.end });
            }
        }
    }
    steps.sort_by(|a, b| (a.start, a.end, &a.name).cmp(&(b.start, b.end, &b.name)));
    steps
}

pub fn step_of(steps: &[StepWindow], t: i64) -> u32 {
    let k = steps.partition_point(|s| s.start <= t);
    // Steps do not overlap in practice; check the latest one that started, then its neighbour.
    for i in (k.saturating_sub(2)..k).rev() {
        if steps[i].start <= t && t <= steps[i].end {
            return i as u32;
        }
    }
    NO
}
