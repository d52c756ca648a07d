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
use super::cpath_segments::{piece_name, side_of, Segments, EVENT_WAIT};
use super::cpath_waits::{step_waits, Ids};
use super::cpath_what_if::Matcher;
use super::cpath_windows::InWindows;
use super::steps::us;
use crate::analysis::model::attribution::NO;
use crate::analysis::model::collect::NO_NAME;
use crate::analysis::model::frozen::Model;
pub use crate::analysis::options::WhatIfSpec;
use crate::limits::MAX_PATH_ITEMS;
use crate::report::{Arrival, CriticalPath, PathBucket, PathPiece, PathSide, StepPath, StepTooLarge, WhatIf};
use crate::vocab::Bucket;
use rustc_hash::FxHashMap;
use std::cell::Cell;

/// The pieces shown per step.
const PIECES: usize = 10;

pub fn pass(m: &Model) -> Option<CriticalPath> {
    let (c, at, runtime, call_ids, buckets, steps) = (m.c, m.at, m.runtime, m.call_ids, m.buckets, m.steps);
    critical_path(&Inputs { c, at, runtime, call_ids, buckets, steps, what_if: m.opts.what_if.as_ref() })
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
    let (mut before, mut after, mut spans, mut naive) = (0.0, 0.0, 0.0, 0i64);
    for (w, (name, s, e)) in windows.into_iter().enumerate() {
        let items = inw.rows[w].len() + inw.spans[w].len() + inw.runtime[w].len() + inw.syncs[w].len();
        if items > MAX_PATH_ITEMS {
            out.steps_too_large.push(StepTooLarge { step: name, items: items as u64 });
            continue;
        }
        let built = step_graph(x, &ids, &inw, w, (s, e));
        out.unmatched_syncs += built.waits.unmatched;
        out.syncs_by_id += built.waits.by_id;
        out.event_waits += built.waits.events.len() as u64;
        out.stream_waits_unseen += built.waits.unseen;
        // The plain weights' distances, once for the path and for the arrivals.
        let (dist, pred, _) = built.g.distances(|e| e.w);
        arrivals(x, &built, (&dist, &pred), &mut out.arrivals);
        let mut p = summarise(x, &built, built.g.path_of(&dist, &pred), name, &mut segments);
        if let Some(m) = &matcher {
            let (len, _, _) = built.g.longest(|e| m.weight(e));
            p.what_if_path_us = Some(us(len));
            before += p.path_us;
            after += us(len);
            spans += p.span_us;
            naive += built.g.edges.iter().map(|e| e.w - m.weight(e)).sum::<i64>();
        }
        out.steps.push(p);
    }
    segments.finish(&mut out);
    // In time order: the rows' order depends on how the file was read (whole or in parts).
    out.arrivals.sort_by(|a, b| (a.start_ns, a.dur_ns, &a.held_by).cmp(&(b.start_ns, b.dur_ns, &b.held_by)));
    if let Some(w) = x.what_if {
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

/// One step's graph, with the step's extent and its longest GPU row.
struct StepGraph {
    g: Graph,
    start: i64,
    end: i64,
    longest_row: i64,
    waits: super::cpath_waits::StepWaits,
}

fn step_graph<'a>(x: &'a Inputs<'a>, ids: &Ids, inw: &InWindows, w: usize, (s, e): (i64, i64)) -> StepGraph {
    // Rows by index, decoded on use: a copy of each (40 bytes) cost more memory than the graph.
    let rows = &inw.rows[w];
    let waits = step_waits(x, ids, (rows, &inw.runtime[w], &inw.syncs[w]), e);
    let mut threads: FxHashMap<u32, Vec<Item>> = FxHashMap::default();
    let clip = |a: i64, b: i64| (a.max(s), b.min(e));
    for o in inw.spans[w].iter().map(|&i| &x.at.ops.spans[i as usize]) {
        let (start, end) = clip(o.start, o.end);
        threads.entry(o.thread).or_default().push(Item { start, end, name: o.name, rank: 0 });
    }
    for r in inw.runtime[w].iter().map(|&i| &x.runtime[i as usize]) {
        let (start, end) = clip(r.start, r.start + r.dur);
        threads.entry(r.thread).or_default().push(Item { start, end, name: r.name, rank: 1 });
    }
    for w in &waits.waits {
        threads.entry(w.thread).or_default().push(Item { start: w.start, end: w.end, name: w.name, rank: 2 });
    }
    let mut g = Graph::default();
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
    for (k, &i) in rows.iter().enumerate() {
        streams.entry(x.c.gpu.lane_of(i as usize)).or_default().push(k as u32);
    }
    let mut nodes = RowNodes { rows, nodes: vec![(u32::MAX, u32::MAX); rows.len()] };
    let (mut longest_row, mut end) = (0, i64::MIN);
    for (_, mut list) in streams {
        // The keys are distinct (the index is one), so the unstable sort gives the one order.
        list.sort_unstable_by_key(|&k| (x.c.gpu.start(rows[k as usize] as usize), rows[k as usize]));
        let mut prev: Option<(i64, u32)> = None;
        for k in list {
            let (k, i) = (k as usize, rows[k as usize] as usize);
            let r = x.c.gpu.get(i);
            let (a, b) = (g.node(r.start), g.node(r.start + r.dur));
            g.edge(a, b, r.dur, Piece::Gpu(i as u32));
            longest_row = longest_row.max(r.dur);
            end = end.max(r.start + r.dur);
            let call = (x.at.runtime[i] != NO).then(|| x.runtime[x.at.runtime[i] as usize]);
            // Queued: launched before the stream was free, so the stream order holds it.
            let queued = prev.is_some_and(|(pe, _)| call.is_none_or(|c| c.start < pe));
            // Held by an event wait: launched before the recorded row ended.
            let held = waited.get(&i).is_some_and(|&t| call.is_none_or(|c| c.start < t));
            if let Some((pe, pn)) = prev {
                g.edge(
                    pn,
                    a,
                    if queued { r.start - pe } else { 0 },
                    if queued { Piece::Gap(i as u32) } else { Piece::Dep },
                );
            }
            if let Some(c) = call {
                if let Some(n) = at_point(c.thread, c.start) {
                    g.edge(n, a, if queued || held { 0 } else { r.start - c.start }, Piece::Launch);
                }
            }
            nodes.nodes[k] = (a, b);
            prev = Some((r.start + r.dur, b));
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
    for &t in &pts {
        g.node(t);
    }
    let mut open: Vec<Item> = Vec::new();
    let mut next = 0;
    for k in 0..pts.len().saturating_sub(1) {
        let (a, b) = (pts[k], pts[k + 1]);
        open.retain(|i| i.end > a);
        while next < items.len() && items[next].start <= a {
            if items[next].end > a {
                open.push(items[next]);
            }
            next += 1;
        }
        let inner = open.iter().max_by_key(|i| (i.rank.min(1), i.start));
        let blocked = open.iter().any(|i| i.rank == 2);
        let name = inner.map_or(NO_NAME, |i| i.name);
        let (from, to) = (base + k as u32, base + k as u32 + 1);
        g.edge(from, to, if blocked { 0 } else { b - a }, Piece::Cpu(name));
    }
    (pts, base)
}

/// `(len, path)`: the step's longest path with the plain weights.
fn summarise(
    x: &Inputs,
    b: &StepGraph,
    (len, path): (i64, Vec<u32>),
    step: String,
    segments: &mut Segments,
) -> StepPath {
    let mut p = StepPath {
        step,
        span_us: us(b.end - b.start),
        path_us: us(len),
        longest_row_us: us(b.longest_row),
        ..StepPath::default()
    };
    segments.step(x, &b.g, &path, &mut p);
    let mut by_bucket: FxHashMap<Bucket, i64> = FxHashMap::default();
    let mut by_name: FxHashMap<(PathSide, u32), (i64, u32)> = FxHashMap::default();
    let mut sides = [0i64; 4];
    for &k in &path {
        let e = b.g.edges[k as usize];
        let (side, name) = match e.piece {
            Piece::Cpu(n) => (PathSide::Cpu, n),
            Piece::Gpu(r) => {
                *by_bucket.entry(x.buckets[r as usize]).or_default() += e.w;
                (PathSide::Gpu, x.c.gpu.name(r as usize))
            }
            Piece::Launch => (PathSide::Launch, NO_NAME),
            Piece::Gap(_) => (PathSide::Gap, NO_NAME),
            Piece::Event(_) => {
                p.event_waits += 1;
                (PathSide::Gap, EVENT_WAIT)
            }
            Piece::Sync => {
                p.syncs += 1;
                continue;
            }
            Piece::Dep => continue,
        };
        sides[side as usize] += e.w;
        let slot = by_name.entry((side, name)).or_default();
        slot.0 += e.w;
        slot.1 += 1;
    }
    // Summed in ns and converted once: a sum of microseconds prints float noise (11510.404999999997).
    [p.cpu_us, p.gpu_us, p.launch_us, p.gap_us] =
        [PathSide::Cpu, PathSide::Gpu, PathSide::Launch, PathSide::Gap].map(|side| us(sides[side as usize]));
    let pct = |ns: i64| if len > 0 { ns as f64 / len as f64 * 100.0 } else { 0.0 };
    let mut buckets: Vec<_> = by_bucket.into_iter().filter(|b| b.1 > 0).collect();
    buckets.sort_by_key(|&(id, ns)| (std::cmp::Reverse(ns), id));
    p.buckets =
        buckets.into_iter().map(|(bucket, ns)| PathBucket { bucket, us: us(ns), pct_of_path: pct(ns) }).collect();
    let mut pieces: Vec<_> = by_name.into_iter().filter(|p| p.1 .0 > 0).collect();
    pieces.sort_by_key(|&((side, name), (ns, _))| (std::cmp::Reverse(ns), side as u8, name));
    p.pieces = pieces
        .into_iter()
        .take(PIECES)
        .map(|((side, name), (ns, count))| PathPiece {
            name: segments.piece_name(x, (side, name)),
            side,
            us: us(ns),
            pct_of_path: pct(ns),
            count,
        })
        .collect();
    p
}

/// Arrivals kept per rank (one per collective row).
const MAX_ARRIVALS: usize = 100_000;

/// Per collective row of the step: the longest path to its start, back to the previous
/// collective row on that path, and the largest piece of that stretch.
/// `(dist, pred)`: [`Graph::distances`] with the plain weights.
fn arrivals(x: &Inputs, b: &StepGraph, (dist, pred): (&[i64], &[u32]), out: &mut Vec<Arrival>) {
    let is_comm = |e: &super::cpath_graph::Edge| matches!(e.piece, Piece::Gpu(r) if x.buckets[r as usize] == Bucket::Communication);
    if !b.g.edges.iter().any(is_comm) {
        return;
    }
    for e in b.g.edges.iter().filter(|e| is_comm(e)) {
        let Piece::Gpu(row) = e.piece else { continue };
        let mut by: FxHashMap<(PathSide, u32), i64> = FxHashMap::default();
        let mut v = e.from as usize;
        while pred[v] != u32::MAX && !is_comm(&b.g.edges[pred[v] as usize]) {
            let pe = b.g.edges[pred[v] as usize];
            if let Some(key) = side_of(x, &pe) {
                *by.entry(key).or_default() += pe.w;
            }
            v = pe.from as usize;
        }
        let Some((&(side, name), &ns)) =
            by.iter().max_by_key(|&(&(side, name), &ns)| (ns, std::cmp::Reverse((side as u8, name))))
        else {
            continue;
        };
        if out.len() < MAX_ARRIVALS {
            let r = x.c.gpu.get(row as usize);
            out.push(Arrival {
                start_ns: r.start,
                dur_ns: r.dur,
                held_by: piece_name(x, side, name),
                side,
                held_us: us(ns),
                stretch_us: us(dist[e.from as usize] - dist[v]),
            });
        }
    }
}
