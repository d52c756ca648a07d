//! Pass: the critical path of each step on one rank (report::CriticalPath). Where this differs
//! from HTA's model (hta/analyzers/critical_path_analysis.py):
//! - CPU nesting is one chain of stretches per thread, each stretch given to the innermost
//!   open op or runtime call (HTA's start/end edges attributed by its cases 1-4 come to the
//!   same); ops that launch nothing are not kept by attribution, so their time goes to the op
//!   around them.
//! - A launch edge carries the launch delay only when the stream was free at the launch (HTA
//!   reads the queue length for the same); otherwise the stream order edge carries the gap.
//! - A synchronising call waits on the last GPU row, launched before it, that ended inside
//!   it (its time then is the GPU's, as HTA's blocking calls; one inside which no row ended
//!   keeps its CPU time): the calls' streams and `cudaStreamWaitEvent`'s event are not kept,
//!   so GPU -> GPU event waits are not edges here (HTA needs
//!   `wait_on_cuda_event_record_corr_id`), nor is `cudaEventQuery` (a poll) a wait.

use super::cpath_graph::{Graph, Piece};
use super::cpath_what_if::Matcher;
use super::steps::us;
use crate::analysis::model::attribution::{Attribution, NO};
use crate::analysis::model::collect::{Collector, RuntimeCall, NO_NAME};
use crate::analysis::model::frozen::{Model, StepWindow};
pub use crate::analysis::options::WhatIfSpec;
use crate::report::{Arrival, CriticalPath, PathBucket, PathPiece, PathSide, StepPath, WhatIf};
use crate::vocab::Bucket;
use rustc_hash::FxHashMap;

/// The pieces shown per step.
const PIECES: usize = 10;

struct Inputs<'a> {
    pub c: &'a Collector,
    pub at: &'a Attribution,
    pub runtime: &'a [RuntimeCall],
    pub buckets: &'a [Bucket],
    pub steps: &'a [StepWindow],
    pub what_if: Option<&'a WhatIfSpec>,
}

pub fn pass(m: &Model) -> Option<CriticalPath> {
    let (c, at, runtime, buckets, steps) = (m.c, m.at, m.runtime, m.buckets, m.steps);
    critical_path(&Inputs { c, at, runtime, buckets, steps, what_if: m.opts.what_if.as_ref() })
}

fn critical_path<'a>(x: &'a Inputs<'a>) -> Option<CriticalPath> {
    if x.c.gpu.is_empty() && x.at.ops.spans.is_empty() {
        return None;
    }
    // Each GPU row belongs to the step its launch (else its start) falls in.
    let key: Vec<i64> = (0..x.c.gpu.len())
        .map(|i| match x.at.runtime[i] {
            NO => x.c.gpu.start(i),
            r => x.runtime[r as usize].start,
        })
        .collect();
    let windows: Vec<(String, i64, i64)> = if x.steps.is_empty() {
        let lo = key.iter().copied().chain(x.c.cpu_extent.map(|e| e.0)).min().unwrap_or(0);
        vec![("whole trace".to_string(), lo, i64::MAX)]
    } else {
        x.steps.iter().map(|s| (s.name.clone(), s.start, s.end)).collect()
    };
    let matcher = x.what_if.map(|w| Matcher::new(w, x.c, x.buckets));
    let mut out = CriticalPath::default();
    let (mut before, mut after, mut spans, mut naive) = (0.0, 0.0, 0.0, 0i64);
    for (name, s, e) in windows {
        let built = step_graph(x, &key, s, e);
        out.unmatched_syncs += built.unmatched_syncs;
        arrivals(x, &built, &mut out.arrivals);
        let mut p = summarise(x, &built, name);
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
    unmatched_syncs: u64,
}

/// A CPU interval on a thread: an op (rank 0), a runtime call (1) or a synchronising call (2).
#[derive(Clone, Copy)]
struct Item {
    start: i64,
    end: i64,
    name: u32,
    rank: u8,
}

fn step_graph(x: &Inputs, key: &[i64], s: i64, e: i64) -> StepGraph {
    let inside = |t: i64| s <= t && t < e;
    let rows: Vec<usize> = (0..x.c.gpu.len()).filter(|&i| inside(key[i])).collect();
    let (waits, unmatched_syncs) = waits(x, key, &rows, s, e);
    let mut threads: FxHashMap<u32, Vec<Item>> = FxHashMap::default();
    let clip = |a: i64, b: i64| (a.max(s), b.min(e));
    for o in x.at.ops.spans.iter().filter(|o| o.start < e && o.end > s) {
        let (start, end) = clip(o.start, o.end);
        threads.entry(o.thread).or_default().push(Item { start, end, name: o.name, rank: 0 });
    }
    for r in x.runtime.iter().filter(|r| inside(r.start)) {
        let (start, end) = clip(r.start, r.start + r.dur);
        threads.entry(r.thread).or_default().push(Item { start, end, name: r.name, rank: 1 });
    }
    for w in &waits {
        threads.entry(w.thread).or_default().push(Item { start: w.start, end: w.end, name: w.name, rank: 2 });
    }
    let mut g = Graph::default();
    let mut points: FxHashMap<u32, (Vec<i64>, u32)> = FxHashMap::default();
    let mut end = s;
    for (t, items) in threads {
        let (pts, base) = thread_chain(&mut g, items);
        end = end.max(pts.last().copied().unwrap_or(s));
        points.insert(t, (pts, base));
    }
    let at_point = |thread: u32, t: i64| {
        points.get(&thread).and_then(|(pts, base)| pts.binary_search(&t).ok().map(|k| base + k as u32))
    };
    let mut streams: FxHashMap<(i32, i32), Vec<usize>> = FxHashMap::default();
    for &i in &rows {
        let r = x.c.gpu.get(i);
        streams.entry((r.device, r.stream)).or_default().push(i);
    }
    let mut end_node: FxHashMap<usize, u32> = FxHashMap::default();
    let mut longest_row = 0;
    for (_, mut list) in streams {
        list.sort_by_key(|&i| (x.c.gpu.start(i), i));
        let mut prev: Option<(i64, u32)> = None;
        for i in list {
            let r = x.c.gpu.get(i);
            let (a, b) = (g.node(r.start), g.node(r.start + r.dur));
            g.edge(a, b, r.dur, Piece::Gpu(i as u32));
            longest_row = longest_row.max(r.dur);
            end = end.max(r.start + r.dur);
            let call = (x.at.runtime[i] != NO).then(|| x.runtime[x.at.runtime[i] as usize]);
            // Queued: launched before the stream was free, so the stream order holds it.
            let queued = prev.is_some_and(|(pe, _)| call.is_none_or(|c| c.start < pe));
            if let Some((pe, pn)) = prev {
                g.edge(pn, a, if queued { r.start - pe } else { 0 }, if queued { Piece::Gap } else { Piece::Dep });
            }
            if let Some(c) = call {
                if let Some(n) = at_point(c.thread, c.start) {
                    g.edge(n, a, if queued { 0 } else { r.start - c.start }, Piece::Launch);
                }
            }
            end_node.insert(i, b);
            prev = Some((r.start + r.dur, b));
        }
    }
    for w in &waits {
        if let (Some(&from), Some(to)) = (end_node.get(&w.row), at_point(w.thread, w.end)) {
            g.edge(from, to, 0, Piece::Sync);
        }
    }
    StepGraph { g, start: s, end, longest_row, unmatched_syncs }
}

/// A blocking call that waited for a GPU row (clipped to the step).
struct Wait {
    start: i64,
    end: i64,
    thread: u32,
    name: u32,
    row: usize,
}

/// The step's blocking calls and the row each waited for: a synchronising call waits for the
/// last row launched before it that ended inside it; a `*MemcpyAsync` (which HTA also counts
/// as blocking) only for its own copy, when the copy ended inside the call. The count of
/// synchronising calls inside which no row ended comes back too: their time stays on the CPU.
fn waits(x: &Inputs, key: &[i64], rows: &[usize], s: i64, e: i64) -> (Vec<Wait>, u64) {
    let row_end = |i: usize| x.c.gpu.start(i) + x.c.gpu.get(i).dur;
    let mut ends: Vec<(i64, usize)> = rows.iter().map(|&i| (row_end(i), i)).collect();
    ends.sort_unstable();
    let mut out = Vec::new();
    let mut unmatched = 0;
    for y in x.c.syncs.iter().filter(|y| s <= y.start && y.start < e) {
        let k = ends.partition_point(|&(t, _)| t <= y.end);
        let row = ends[..k].iter().rev().take_while(|&&(t, _)| t >= y.start).find(|&&(_, i)| key[i] <= y.start);
        match row {
            Some(&(_, row)) => {
                out.push(Wait { start: y.start, end: y.end.min(e), thread: y.thread, name: y.name, row })
            }
            None => unmatched += 1,
        }
    }
    for &i in rows {
        let Some(c) = (x.at.runtime[i] != NO).then(|| x.runtime[x.at.runtime[i] as usize]) else { continue };
        let (t, end) = (row_end(i), (c.start + c.dur).min(e));
        if x.c.names.get(c.name).ends_with("MemcpyAsync") && c.start <= t && t <= end {
            out.push(Wait { start: c.start, end, thread: c.thread, name: c.name, row: i });
        }
    }
    (out, unmatched)
}

/// A thread's chain: a node per instant where an item starts or ends, an edge per stretch
/// between them, given to the innermost open item (a call before an op, then the latest
/// start). A stretch inside a synchronising call has no time: the wait is the GPU's (HTA's
/// blocking calls), reached through the sync edge.
fn thread_chain(g: &mut Graph, mut items: Vec<Item>) -> (Vec<i64>, u32) {
    let mut pts: Vec<i64> = items.iter().flat_map(|i| [i.start, i.end]).collect();
    pts.sort_unstable();
    pts.dedup();
    items.sort_by_key(|i| (i.start, std::cmp::Reverse(i.end)));
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

fn summarise(x: &Inputs, b: &StepGraph, step: String) -> StepPath {
    let (len, path, _) = b.g.longest(|e| e.w);
    let mut p = StepPath {
        step,
        span_us: us(b.end - b.start),
        path_us: us(len),
        longest_row_us: us(b.longest_row),
        ..StepPath::default()
    };
    let mut by_bucket: FxHashMap<Bucket, i64> = FxHashMap::default();
    let mut by_name: FxHashMap<(PathSide, u32), (i64, u32)> = FxHashMap::default();
    for &k in &path {
        let e = b.g.edges[k as usize];
        let (side, name) = match e.piece {
            Piece::Cpu(n) => (PathSide::Cpu, n),
            Piece::Gpu(r) => {
                *by_bucket.entry(x.buckets[r as usize]).or_default() += e.w;
                (PathSide::Gpu, x.c.gpu.get(r as usize).name)
            }
            Piece::Launch => (PathSide::Launch, NO_NAME),
            Piece::Gap => (PathSide::Gap, NO_NAME),
            Piece::Sync => {
                p.syncs += 1;
                continue;
            }
            Piece::Dep => continue,
        };
        let t = us(e.w);
        match side {
            PathSide::Cpu => p.cpu_us += t,
            PathSide::Gpu => p.gpu_us += t,
            PathSide::Launch => p.launch_us += t,
            PathSide::Gap => p.gap_us += t,
        }
        let slot = by_name.entry((side, name)).or_default();
        slot.0 += e.w;
        slot.1 += 1;
    }
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
            name: piece_name(x, side, name),
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
fn arrivals(x: &Inputs, b: &StepGraph, out: &mut Vec<Arrival>) {
    let is_comm = |e: &super::cpath_graph::Edge| matches!(e.piece, Piece::Gpu(r) if x.buckets[r as usize] == Bucket::Communication);
    if !b.g.edges.iter().any(is_comm) {
        return;
    }
    let (dist, pred, _) = b.g.distances(|e| e.w);
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

/// The side and name an edge's time is shown under (None: no time of its own).
fn side_of(x: &Inputs, e: &super::cpath_graph::Edge) -> Option<(PathSide, u32)> {
    Some(match e.piece {
        Piece::Cpu(n) => (PathSide::Cpu, n),
        Piece::Gpu(r) => (PathSide::Gpu, x.c.gpu.get(r as usize).name),
        Piece::Launch => (PathSide::Launch, NO_NAME),
        Piece::Gap => (PathSide::Gap, NO_NAME),
        Piece::Sync | Piece::Dep => return None,
    })
}

fn piece_name(x: &Inputs, side: PathSide, name: u32) -> String {
    match (side, name) {
        (PathSide::Launch, _) => "launch delay".to_string(),
        (PathSide::Gap, _) => "gap between queued rows".to_string(),
        (_, NO_NAME) => "CPU outside any op".to_string(),
        (_, n) => x.c.names.get(n).to_string(),
    }
}
