//! The op and module trees: spans nested by time on each thread.

use crate::analysis::model::collect::OpRow;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;

/// No index: no span, no op, no call.
pub const NO: u32 = u32::MAX;

/// An op or module span as the tree keeps it: an [`OpRow`] without its External id, which
/// attribution reads from its own column (32 bytes instead of 40: 13 MB of a 2 GB trace).
#[derive(Debug, Clone, Copy)]
pub struct OpSpan {
    pub start: i64,
    pub end: i64,
    /// Autograd sequence number (links a backward op to its forward op), or NONE.
    pub seq: i64,
    pub name: u32,
    pub thread: u32,
}

impl From<OpRow> for OpSpan {
    fn from(o: OpRow) -> OpSpan {
        OpSpan { start: o.start, end: o.end, seq: o.seq, name: o.name, thread: o.thread }
    }
}

/// Spans nested by time on each thread (ops, or `nn.Module` spans).
pub struct SpanTree {
    pub spans: Vec<OpSpan>,
    pub parent: Vec<u32>,
    /// Per thread, its range in `spans` (sorted by thread, start).
    threads: FxHashMap<u32, (usize, usize)>,
}

impl SpanTree {
    /// The tree of `rows` (their External ids are not kept: the module tree's are not read).
    pub fn new(rows: Vec<OpRow>) -> SpanTree {
        Self::of_sorted(sorted(rows))
    }

    /// The tree, and its spans' External ids in the spans' order.
    pub(super) fn with_externals(rows: Vec<OpRow>) -> (SpanTree, Vec<i64>) {
        let rows = sorted(rows);
        let externals = rows.iter().map(|o| o.external).collect();
        (Self::of_sorted(rows), externals)
    }

    /// The tree of `rows` in [`sorted`] order.
    fn of_sorted(rows: Vec<OpRow>) -> SpanTree {
        // The standard library collects into the rows' own block (the items shrink), then the
        // block is shrunk to 32 bytes a span: no second list of spans is held beside the rows.
        let mut spans: Vec<OpSpan> = rows.into_iter().map(OpSpan::from).collect();
        spans.shrink_to_fit();
        let n = spans.len();
        let mut parent = vec![NO; n];
        let mut threads: FxHashMap<u32, (usize, usize)> = FxHashMap::default();
        let mut stack: Vec<u32> = Vec::new();
        let mut range_start = 0;
        for i in 0..n {
            let op = spans[i];
            if i > 0 && spans[i - 1].thread != op.thread {
                threads.insert(spans[i - 1].thread, (range_start, i));
                range_start = i;
                stack.clear();
            }
            while let Some(&top) = stack.last() {
                let t = spans[top as usize];
                if t.end >= op.end && t.start <= op.start && t.end > op.start {
                    break;
                }
                stack.pop();
            }
            parent[i] = stack.last().copied().unwrap_or(NO);
            stack.push(i as u32);
        }
        if n > 0 {
            threads.insert(spans[n - 1].thread, (range_start, n));
        }
        SpanTree { spans, parent, threads }
    }

    /// Whether span `i` encloses time `t` on `thread` (half-open: start <= t < end).
    pub fn encloses(&self, i: u32, thread: u32, t: i64) -> bool {
        let o = &self.spans[i as usize];
        o.thread == thread && o.start <= t && t < o.end
    }

    /// The innermost span enclosing `t` on `thread`.
    pub fn innermost(&self, thread: u32, t: i64) -> u32 {
        let Some(&(lo, hi)) = self.threads.get(&thread) else { return NO };
        let k = self.spans[lo..hi].partition_point(|o| o.start <= t);
        if k == 0 {
            return NO;
        }
        let mut i = (lo + k - 1) as u32;
        while i != NO {
            if self.encloses(i, thread, t) {
                return i;
            }
            i = self.parent[i as usize];
        }
        NO
    }

    /// `i` and its ancestors, innermost first.
    pub fn chain(&self, mut i: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::from_fn(move || {
            if i == NO {
                return None;
            }
            let cur = i;
            i = self.parent[i as usize];
            Some(cur)
        })
    }

    /// Keeps only the spans marked (and their External ids), with parents remapped; returns
    /// the old -> new index map. In place: a span's parent comes before it, so it is already
    /// moved and remapped.
    pub(super) fn retain(self, keep: &[bool], externals: &mut Vec<i64>) -> (SpanTree, Vec<u32>) {
        let SpanTree { mut spans, mut parent, .. } = self;
        let n = spans.len();
        let mut remap = vec![NO; n];
        let mut kept = 0;
        for i in 0..n {
            if keep[i] {
                remap[i] = kept as u32;
                spans[kept] = spans[i];
                externals[kept] = externals[i];
                // Ancestors of kept spans are kept, so a kept span's parent has a new index.
                parent[kept] = if parent[i] == NO { NO } else { remap[parent[i] as usize] };
                kept += 1;
            }
        }
        spans.truncate(kept);
        spans.shrink_to_fit();
        parent.truncate(kept);
        parent.shrink_to_fit();
        externals.truncate(kept);
        let mut threads: FxHashMap<u32, (usize, usize)> = FxHashMap::default();
        let mut start = 0;
        for i in 0..spans.len() {
            if i + 1 == spans.len() || spans[i + 1].thread != spans[i].thread {
                threads.insert(spans[i].thread, (start, i + 1));
                start = i + 1;
            }
        }
        (SpanTree { spans, parent, threads }, remap)
    }
}

/// Rows in the trees' order: by thread, start, outermost first (the rest only makes it total).
fn sorted(mut rows: Vec<OpRow>) -> Vec<OpRow> {
    crate::analysis::model::sort::sort_nearly_sorted(&mut rows, |o| {
        (o.thread, o.start, Reverse(o.end), o.name, o.external, o.seq)
    });
    rows
}
