//! One step of the critical path, in two halves: what its graph gives ([`walked`]: any
//! thread, several steps at once where the caller allows, see `Fork::map`), and what is added
//! to the report in step order ([`finish`]: the names made once and shared, the report's
//! segment budget, the arrivals' cap and the what-if sums, each of which depends on the steps
//! before).

use super::cpath_graph::{Edge, Graph, Inputs, Piece};
use super::cpath_segments::{piece_name, side_of, Candidates, Segments, EVENT_WAIT};
use super::cpath_waits::StepWaits;
use super::cpath_what_if::Matcher;
use super::steps::us;
use crate::analysis::model::collect::NO_NAME;
use crate::report::{Arrival, CriticalPath, PathBucket, PathPiece, PathSide, StepPath, StepTooLarge};
use crate::vocab::Bucket;
use rustc_hash::FxHashMap;

/// The pieces shown per step.
const PIECES: usize = 10;

/// Arrivals kept per rank (one per collective row).
const MAX_ARRIVALS: usize = 100_000;

/// One step's graph, with the step's extent and its longest GPU row.
pub(super) struct StepGraph {
    pub g: Graph,
    pub start: i64,
    pub end: i64,
    pub longest_row: i64,
    pub waits: StepWaits,
}

/// A step as its walk left it.
pub(super) enum Walk {
    /// Too many items for a graph: not walked.
    TooLarge(StepTooLarge),
    Done(Box<Walked>),
}

/// What a step's graph gave, before [`finish`] adds it to the report.
pub(super) struct Walked {
    /// All but the pieces' names and the segments.
    path: StepPath,
    /// The path's length (ns).
    len: i64,
    /// The longest pieces by (side, name): their time (ns) and count.
    pieces: Vec<((PathSide, u32), i64, u32)>,
    segments: Candidates,
    arrivals: Vec<Arrival>,
    /// The waits' counts: unmatched syncs, syncs by id, event waits, stream waits unseen.
    waits: [u64; 4],
    /// With a what-if: the path's length with its weights, and the time it takes off the
    /// step's edges (ns).
    what_if: Option<(i64, i64)>,
}

/// The what-if's sums over the steps, in step order (floats: the order is the result).
#[derive(Default)]
pub(super) struct WhatIfSums {
    pub before: f64,
    pub after: f64,
    pub spans: f64,
    pub naive: i64,
}

/// Walks a step's graph: its longest path, what the path is made of, its arrivals.
/// `keep`: the most segments the step may have ([`Segments::keep`]).
pub(super) fn walked(x: &Inputs, b: &StepGraph, step: String, matcher: Option<&Matcher>, keep: usize) -> Walked {
    // The plain weights' distances, once for the path and for the arrivals.
    let (dist, pred, _) = b.g.distances(|e| e.w);
    let mut arrivals = Vec::new();
    arrivals_of(x, b, (&dist, &pred), &mut arrivals);
    let (len, path) = b.g.path_of(&dist, &pred);
    let (p, pieces) = summarise(x, b, len, &path, step);
    let segments = Segments::candidates(x, &b.g, &path, keep);
    let what_if = matcher.map(|m| {
        let (len, _, _) = b.g.longest(|e| m.weight(e));
        (len, b.g.edges.iter().map(|e| e.w - m.weight(e)).sum::<i64>())
    });
    let waits = [b.waits.unmatched, b.waits.by_id, b.waits.events.len() as u64, b.waits.unseen];
    Walked { path: p, len, pieces, segments, arrivals, waits, what_if }
}

/// Adds a walked step to the report (steps in order).
pub(super) fn finish(x: &Inputs, step: Walk, out: &mut CriticalPath, segments: &mut Segments, sums: &mut WhatIfSums) {
    let w = match step {
        Walk::TooLarge(t) => return out.steps_too_large.push(t),
        Walk::Done(w) => *w,
    };
    let [unmatched, by_id, events, unseen] = w.waits;
    out.unmatched_syncs += unmatched;
    out.syncs_by_id += by_id;
    out.event_waits += events;
    out.stream_waits_unseen += unseen;
    let room = MAX_ARRIVALS.saturating_sub(out.arrivals.len());
    out.arrivals.extend(w.arrivals.into_iter().take(room));
    let mut p = w.path;
    // The segments' names first: the report's name list is in the order they are first met.
    segments.take(x, w.segments, &mut p);
    p.pieces = w
        .pieces
        .into_iter()
        .map(|(key, ns, count)| PathPiece {
            name: segments.name(x, key),
            side: key.0,
            us: us(ns),
            pct_of_path: pct(ns, w.len),
            count,
        })
        .collect();
    if let Some((len, naive)) = w.what_if {
        p.what_if_path_us = Some(us(len));
        sums.before += p.path_us;
        sums.after += us(len);
        sums.spans += p.span_us;
        sums.naive += naive;
    }
    out.steps.push(p);
}

fn pct(ns: i64, len: i64) -> f64 {
    if len > 0 {
        ns as f64 / len as f64 * 100.0
    } else {
        0.0
    }
}

/// The step's figures from its longest path (`len`, its edges first to last), and its
/// [`PIECES`] longest pieces by (side, name).
#[allow(clippy::type_complexity)]
fn summarise(
    x: &Inputs,
    b: &StepGraph,
    len: i64,
    path: &[u32],
    step: String,
) -> (StepPath, Vec<((PathSide, u32), i64, u32)>) {
    let mut p = StepPath {
        step,
        span_us: us(b.end - b.start),
        path_us: us(len),
        longest_row_us: us(b.longest_row),
        ..StepPath::default()
    };
    let mut by_bucket: FxHashMap<Bucket, i64> = FxHashMap::default();
    let mut by_name: FxHashMap<(PathSide, u32), (i64, u32)> = FxHashMap::default();
    let mut sides = [0i64; 4];
    for &k in path {
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
    let mut buckets: Vec<_> = by_bucket.into_iter().filter(|b| b.1 > 0).collect();
    buckets.sort_by_key(|&(id, ns)| (std::cmp::Reverse(ns), id));
    p.buckets =
        buckets.into_iter().map(|(bucket, ns)| PathBucket { bucket, us: us(ns), pct_of_path: pct(ns, len) }).collect();
    let mut pieces: Vec<_> = by_name.into_iter().filter(|p| p.1 .0 > 0).collect();
    pieces.sort_by_key(|&((side, name), (ns, _))| (std::cmp::Reverse(ns), side as u8, name));
    let pieces = pieces.into_iter().take(PIECES).map(|(key, (ns, count))| (key, ns, count)).collect();
    (p, pieces)
}

/// Per collective row of the step: the longest path to its start, back to the previous
/// collective row on that path, and the largest piece of that stretch (at most
/// [`MAX_ARRIVALS`] a step; [`finish`] keeps as many in all).
/// `(dist, pred)`: [`Graph::distances`] with the plain weights.
fn arrivals_of(x: &Inputs, b: &StepGraph, (dist, pred): (&[i64], &[u32]), out: &mut Vec<Arrival>) {
    let is_comm = |e: &Edge| matches!(e.piece, Piece::Gpu(r) if x.buckets[r as usize] == Bucket::Communication);
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
