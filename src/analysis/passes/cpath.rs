//! Pass: the critical path of each step on one rank (report::CriticalPath). Where this differs
//! from HTA's model (hta/analyzers/critical_path_analysis.py):
//! - CPU nesting is one chain of stretches per thread, each stretch given to the innermost
//!   open op or runtime call (HTA's start/end edges attributed by its cases 1-4 come to the
//!   same); ops that launch nothing are not kept by attribution, so their time goes to the op
//!   around them.
//! - A launch edge carries the launch delay only when the stream was free at the launch (HTA
//!   reads the queue length for the same); otherwise the stream order edge carries the gap.
//! - A synchronising call or a stream wait waits on the row the trace's `cuda_sync` rows name
//!   (as HTA); without them, a synchronising call waits on the last GPU row, launched before
//!   it, that ended inside it (its time then is the GPU's, as HTA's blocking calls; one inside
//!   which no row ended keeps its CPU time) and a stream wait is no edge (cpath_waits.rs).
//!   `cudaEventQuery` (a poll) is not a wait.
//! - An event wait that held a row (launched before the recorded row ended) carries the gap
//!   from the recorded row's end to the row's start, and the row's launch edge none.
use super::cpath_graph::{Graph, Inputs, Piece};
use super::cpath_points::{instants, Item, Points};
use super::cpath_segments::Segments;
use super::cpath_step::{finish, walked, StepGraph, Walk, WhatIfSums};
use super::cpath_waits::{step_waits, Ids};
use super::cpath_what_if::Matcher;
use super::cpath_windows::InWindows;
use super::steps::us;
use crate::analysis::model::attribution::NO;
use crate::analysis::model::collect::NO_NAME;
use crate::analysis::model::frozen::Model;
use crate::analysis::model::sort::sort_unless_sorted;
pub use crate::analysis::options::WhatIfSpec;
use crate::limits::MAX_PATH_ITEMS;
use crate::report::{CriticalPath, StepTooLarge, WhatIf};
use rustc_hash::FxHashMap;
use std::cell::Cell;

pub fn pass(m: &Model) -> Option<CriticalPath> {
    let (c, at, runtime, call_ids, buckets, steps) = (m.c, m.at, m.runtime, m.call_ids, m.buckets, m.steps);
    let (what_if, fork) = (m.opts.what_if.as_ref(), &m.opts.fork);
    critical_path(&Inputs { c, at, runtime, call_ids, buckets, steps, what_if, fork })
}

fn critical_path<'a>(x: &'a Inputs<'a>) -> Option<CriticalPath> {
    if x.c.gpu.is_empty() && x.at.ops.spans.is_empty() {
        return None;
    }
    // Each GPU row belongs to the step its launch (else its start) falls in.
    let windows: Vec<(String, i64, i64)> = if x.steps.is_empty() {
        let lo = (0..x.c.gpu.len()).map(|i| x.key(i)).chain(x.c.cpu_extent.map(|e| e.0)).min().unwrap_or(0);
        vec![(CriticalPath::WHOLE_TRACE.to_string(), lo, i64::MAX)]
    } else {
        x.steps.iter().map(|s| (s.name.clone(), s.start, s.end)).collect()
    };
    let matcher = x.what_if.map(|w| Matcher::new(w, x.c, x.buckets));
    let ids = Ids::new(x);
    let bounds: Vec<(i64, i64)> = windows.iter().map(|w| (w.1, w.2)).collect();
    let inw = InWindows::new(x, &bounds);
    // One path a step, allocated once: a list grown by doubling leaves its old copies behind
    // in a wasm memory (2 GB of trace: 24 k steps of 184 bytes).
    let mut out = CriticalPath { steps: Vec::with_capacity(windows.len()), ..CriticalPath::default() };
    let mut segments = Segments::new();
    let mut sums = WhatIfSums::default();
    let items = |w: usize| inw.rows[w].len() + inw.spans[w].len() + inw.runtime[w].len() + inw.syncs[w].len();
    let walk = |w: usize, keep: usize| {
        let (name, s, e) = &windows[w];
        match items(w) {
            n if n > MAX_PATH_ITEMS => Walk::TooLarge(StepTooLarge { step: name.clone(), items: n as u64 }),
            _ => {
                let built = step_graph(x, &ids, &inw, w, (*s, *e));
                Walk::Done(Box::new(walked(x, &built, name.clone(), matcher.as_ref(), keep)))
            }
        }
    };
    // The steps are independent until they are added to the report: walked a batch at a time,
    // split over the caller's threads (one after the other in the page), then added in order.
    let mut next = 0;
    while next < windows.len() {
        let end = batch_end(next, windows.len(), x.fork.ways(), &items);
        let keep = segments.keep();
        for step in x.fork.map(next..end, &|w| walk(w, keep)) {
            finish(x, step, &mut out, &mut segments, &mut sums);
        }
        next = end;
    }
    segments.finish(&mut out);
    // In time order: the rows' order depends on how the file was read (whole or in parts).
    out.arrivals.sort_by(|a, b| (a.start_ns, a.dur_ns, &a.held_by).cmp(&(b.start_ns, b.dur_ns, &b.held_by)));
    if let Some(w) = x.what_if {
        let WhatIfSums { before, after, spans, naive } = sums;
        out.what_if = Some(WhatIf {
            target: w.target.clone(),
            faster_pct: w.faster_pct,
            path_before_us: before,
            path_after_us: after,
            step_before_us: spans,
            step_after_us: spans - (before - after),
            naive_saving_us: us(naive),
        });
    }
    Some(out)
}

/// The end of the batch of steps from `from`: one step where steps are walked one after the
/// other; else up to 64 steps a way (a thread started per way and batch), their graphs at most
/// `MAX_PATH_ITEMS` items in all (a step's graph is the build's largest list, and may reach
/// that alone: then it is walked alone, as without threads).
fn batch_end(from: usize, n: usize, ways: usize, items: &dyn Fn(usize) -> usize) -> usize {
    let size = |w: usize| Some(items(w)).filter(|&k| k <= MAX_PATH_ITEMS).unwrap_or(0);
    let (mut end, mut total) = (from + 1, size(from));
    while ways > 1 && end < n && end - from < 64 * ways && total + size(end) <= MAX_PATH_ITEMS {
        total += size(end);
        end += 1;
    }
    end
}

fn step_graph<'a>(x: &'a Inputs<'a>, ids: &Ids, inw: &InWindows, w: usize, (s, e): (i64, i64)) -> StepGraph {
    // Rows by index, decoded on use: a copy of each (40 bytes) cost more memory than the graph.
    let rows = &inw.rows[w];
    let waits = step_waits(x, ids, (rows, &inw.runtime[w], &inw.syncs[w]), e);
    let cpu_items = inw.spans[w].len() + inw.runtime[w].len() + waits.waits.len();
    let mut threads: FxHashMap<u32, Vec<Item>> = FxHashMap::default();
    // The first thread's list (the step's main thread, as a rule) sized for all its items at
    // once, the others grown as they come: grown from nothing, the lists were copied about six
    // times over.
    let mut room = cpu_items;
    let mut add = |t: u32, item: Item| {
        threads.entry(t).or_insert_with(|| Vec::with_capacity(std::mem::take(&mut room))).push(item);
    };
    let clip = |a: i64, b: i64| (a.max(s), b.min(e));
    for o in inw.spans[w].iter().map(|&i| &x.at.ops.spans[i as usize]) {
        let (start, end) = clip(o.start, o.end);
        add(o.thread, Item { start, end, name: o.name, rank: 0 });
    }
    for r in inw.runtime[w].iter().map(|&i| &x.runtime[i as usize]) {
        let (start, end) = clip(r.start, r.start + r.dur);
        add(r.thread, Item { start, end, name: r.name, rank: 1 });
    }
    for w in &waits.waits {
        add(w.thread, Item { start: w.start, end: w.end, name: w.name, rank: 2 });
    }
    // Sized ahead (at most two instants an item, two nodes and three edges a row): grown by
    // doubling, the lists were copied about twice over.
    let mut g =
        Graph::with_capacity(2 * cpu_items + 2 * rows.len(), 2 * cpu_items + 3 * rows.len() + waits.events.len());
    let mut points: FxHashMap<u32, Points> = FxHashMap::default();
    let mut end = s;
    for (t, items) in threads {
        let (pts, base) = thread_chain(&mut g, items);
        end = end.max(pts.last().copied().unwrap_or(s));
        points.insert(t, Points { pts, base, hint: Cell::new(0) });
    }
    let at_point = |thread: u32, t: i64| points.get(&thread).and_then(|p| p.node_at(t));
    let (nodes, longest_row, gpu_end) = gpu_rows(x, &mut g, rows, &waits.events, at_point);
    end = end.max(gpu_end);
    for w in &waits.waits {
        if let (Some((_, from)), Some(to)) = (nodes.get(w.row), at_point(w.thread, w.end)) {
            g.edge(from, to, 0, Piece::Sync);
        }
    }
    StepGraph { g, start: s, end, longest_row, waits }
}

/// Each GPU row's (start, end) nodes, in the order of the step's rows (by index).
struct RowNodes<'r> {
    rows: &'r [u32],
    nodes: Vec<(u32, u32)>,
}

impl RowNodes<'_> {
    fn get(&self, row: usize) -> Option<(u32, u32)> {
        self.rows.binary_search(&(row as u32)).ok().map(|k| self.nodes[k])
    }
}

/// The rows' edges: each row's span, the stream order, its launch and the event waits that
/// held it. Returns each row's (start, end) nodes, the longest row and the last row end.
fn gpu_rows<'r>(
    x: &Inputs,
    g: &mut Graph,
    rows: &'r [u32],
    events: &[(usize, usize)],
    at_point: impl Fn(u32, i64) -> Option<u32>,
) -> (RowNodes<'r>, i64, i64) {
    let mut waited: FxHashMap<usize, i64> = FxHashMap::default();
    for &(from, to) in events {
        let t = waited.entry(to).or_insert(i64::MIN);
        *t = (*t).max(x.c.gpu.end(from));
    }
    // Each stream's rows by their place in `rows` (4 bytes a row: a step can hold millions).
    let mut streams: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    // The first stream's list sized for every row, as the threads' lists are.
    let mut room = rows.len();
    for (k, &i) in rows.iter().enumerate() {
        let lane = x.c.gpu.lane_of(i as usize);
        streams.entry(lane).or_insert_with(|| Vec::with_capacity(std::mem::take(&mut room))).push(k as u32);
    }
    let mut nodes = RowNodes { rows, nodes: vec![(u32::MAX, u32::MAX); rows.len()] };
    let (mut longest_row, mut end) = (0, i64::MIN);
    for (_, mut list) in streams {
        // The keys are distinct (the index is one), so the unstable sort gives the one order.
        sort_unless_sorted(&mut list, |&k| (x.c.gpu.start(rows[k as usize] as usize), rows[k as usize]));
        let mut prev: Option<(i64, u32)> = None;
        for k in list {
            let (k, i) = (k as usize, rows[k as usize] as usize);
            let (start, dur) = x.c.gpu.start_dur(i);
            let (a, b) = (g.node(start), g.node(start + dur));
            g.edge(a, b, dur, Piece::Gpu(i as u32));
            longest_row = longest_row.max(dur);
            end = end.max(start + dur);
            let call = (x.at.runtime[i] != NO).then(|| x.runtime[x.at.runtime[i] as usize]);
            // Queued: launched before the stream was free, so the stream order holds it.
            let queued = prev.is_some_and(|(pe, _)| call.is_none_or(|c| c.start < pe));
            // Held by an event wait: launched before the recorded row ended.
            let held = waited.get(&i).is_some_and(|&t| call.is_none_or(|c| c.start < t));
            if let Some((pe, pn)) = prev {
                g.edge(
                    pn,
                    a,
                    if queued { start - pe } else { 0 },
                    if queued { Piece::Gap(i as u32) } else { Piece::Dep },
                );
            }
            if let Some(c) = call {
                if let Some(n) = at_point(c.thread, c.start) {
                    g.edge(n, a, if queued || held { 0 } else { start - c.start }, Piece::Launch);
                }
            }
            nodes.nodes[k] = (a, b);
            prev = Some((start + dur, b));
        }
    }
    for &(from, to) in events {
        let (Some((_, f)), Some((t, _))) = (nodes.get(from), nodes.get(to)) else { continue };
        let call = (x.at.runtime[to] != NO).then(|| x.runtime[x.at.runtime[to] as usize]);
        let from_end = x.c.gpu.end(from);
        let held = call.is_none_or(|c| c.start < from_end);
        g.edge(f, t, if held { x.c.gpu.start(to) - from_end } else { 0 }, Piece::Event(to as u32));
    }
    (nodes, longest_row, end)
}

/// A thread's chain: a node per instant where an item starts or ends, an edge per stretch
/// between them, given to the innermost open item (a call before an op, then the latest
/// start). A stretch inside a synchronising call has no time: the wait is the GPU's (HTA's
/// blocking calls), reached through the sync edge.
fn thread_chain(g: &mut Graph, mut items: Vec<Item>) -> (Vec<i64>, u32) {
    items.sort_by_key(|i| (i.start, std::cmp::Reverse(i.end)));
    let pts = instants(&items);
    let base = g.ts.len() as u32;
    g.ts.extend_from_slice(&pts);
    // The open items in the order they opened (by start, as sorted), and how many of them are
    // synchronising calls.
    let mut open: Vec<Item> = Vec::new();
    let mut blocking = 0usize;
    let mut next = 0;
    for k in 0..pts.len().saturating_sub(1) {
        let (a, b) = (pts[k], pts[k + 1]);
        open.retain(|i| {
            let keep = i.end > a;
            blocking -= (!keep && i.rank == 2) as usize;
            keep
        });
        while let Some(&i) = items.get(next).filter(|i| i.start <= a) {
            if i.end > a {
                open.push(i);
                blocking += (i.rank == 2) as usize;
            }
            next += 1;
        }
        // The innermost: the latest call to start, else the latest op (the open items are in
        // start order, so the last of a kind started last).
        let inner = open.iter().rev().find(|i| i.rank >= 1).or(open.last());
        let name = inner.map_or(NO_NAME, |i| i.name);
        let (from, to) = (base + k as u32, base + k as u32 + 1);
        g.edge(from, to, if blocking > 0 { 0 } else { b - a }, Piece::Cpu(name));
    }
    (pts, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_one_step_without_threads_and_bounded_by_steps_and_items_with_them() {
        let small = |_| 10;
        assert_eq!(batch_end(5, 1000, 1, &small), 6);
        assert_eq!(batch_end(5, 1000, 2, &small), 5 + 128);
        assert_eq!(batch_end(990, 1000, 4, &small), 1000);
        // Graphs of at most MAX_PATH_ITEMS items in all; a step too large for a graph (not
        // walked) counts nothing, and one at the limit is walked alone.
        let sizes = [MAX_PATH_ITEMS / 2, MAX_PATH_ITEMS / 2, 1, MAX_PATH_ITEMS + 1, 7, MAX_PATH_ITEMS, 3];
        let items = |w: usize| sizes[w];
        assert_eq!(batch_end(0, sizes.len(), 2, &items), 2);
        assert_eq!(batch_end(2, sizes.len(), 2, &items), 5);
        assert_eq!(batch_end(5, sizes.len(), 2, &items), 6);
        assert_eq!(batch_end(6, sizes.len(), 2, &items), 7);
    }
}
