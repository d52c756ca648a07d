//! The critical path in time (`report::PathSegment`): each timed edge of a step's longest path
//! where it sits, for the page to draw on the GPU timeline. Bounded whatever the trace: per
//! step its longest `StepPath::MAX_SEGMENTS`, and `StepPath::SEGMENT_BUDGET` in a report; the
//! rest is counted per step. Also how an edge of the path is named (its side and name).

use super::cpath_graph::{Edge, Graph, Inputs, Piece};
use crate::analysis::model::collect::NO_NAME;
use crate::report::{name_index, CriticalPath, PathSegment, PathSide, PathStream, StepPath};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The name slot of an event wait's gap (no interned name is this large).
pub(super) const EVENT_WAIT: u32 = NO_NAME - 1;

/// The segments of every step, their names interned once for the report.
pub(super) struct Segments {
    names: Vec<String>,
    index: FxHashMap<(PathSide, u32), u32>,
    budget: usize,
}

/// A step's longest pieces, in path order, and how many pieces its path has.
pub(super) struct Candidates {
    raw: Vec<Raw>,
    seen: usize,
}

/// A segment before its name is interned: the name's (side, id) key, and the GPU row whose
/// stream it is drawn on (decoded only for the pieces kept).
struct Raw {
    start: i64,
    end: i64,
    key: (PathSide, u32),
    row: Option<u32>,
}

/// The `keep` longest of the pieces offered, in a min-heap of their lengths; ties go to the
/// piece offered first (what sorting all of them by length, then path order, would keep).
struct Longest {
    keep: usize,
    /// (length, later-first order, slot in `slab`): the top is the piece to drop first.
    heap: BinaryHeap<Reverse<(i64, Reverse<usize>, usize)>>,
    slab: Vec<(usize, Raw)>,
    seen: usize,
}

impl Longest {
    fn new(keep: usize) -> Self {
        Longest { keep, heap: BinaryHeap::new(), slab: Vec::new(), seen: 0 }
    }

    fn offer(&mut self, piece: Option<Raw>) {
        let Some(raw) = piece else { return };
        let (order, len) = (self.seen, raw.end - raw.start);
        self.seen += 1;
        if self.heap.len() < self.keep {
            self.slab.push((order, raw));
            self.heap.push(Reverse((len, Reverse(order), self.slab.len() - 1)));
        } else if let Some(&Reverse((shortest, _, slot))) = self.heap.peek() {
            // Only a longer piece displaces one kept: on a tie the earlier one stays.
            if len > shortest {
                self.heap.pop();
                self.slab[slot] = (order, raw);
                self.heap.push(Reverse((len, Reverse(order), slot)));
            }
        }
    }

    /// The pieces kept, in path order, and how many were offered.
    fn in_path_order(mut self) -> (Vec<Raw>, usize) {
        self.slab.sort_unstable_by_key(|&(order, _)| order);
        (self.slab.into_iter().map(|(_, raw)| raw).collect(), self.seen)
    }
}

impl Segments {
    pub fn new() -> Self {
        Segments { names: Vec::new(), index: FxHashMap::default(), budget: StepPath::SEGMENT_BUDGET }
    }

    /// How many pieces a step walked now may keep: at most `StepPath::MAX_SEGMENTS`, and no
    /// more than the report's budget left before it (the steps walked with it, and so added
    /// after it, can only leave less).
    pub fn keep(&self) -> usize {
        StepPath::MAX_SEGMENTS.min(self.budget)
    }

    /// A step's `keep` longest pieces from its path (edges, first to last), which
    /// [`Segments::take`] then cuts to the report's budget. The longest of the longest are the
    /// longest of all, so a `keep` at or above what `take` keeps gives the same segments; past
    /// the budget (most steps of a long trace) the pieces are only counted.
    pub fn candidates(x: &Inputs, g: &Graph, path: &[u32], keep: usize) -> Candidates {
        // The longest pieces, found as the path streams by: a path can be millions of edges
        // long (a trace of tiny kernels), and holding every piece at once cost as much memory
        // as the graph.
        let mut kept = Longest::new(keep);
        let mut cur: Option<Raw> = None;
        for e in path.iter().map(|&k| g.edges[k as usize]) {
            let Some(key) = side_of(x, &e).filter(|_| e.w > 0) else { continue };
            let start = g.ts[e.from as usize];
            // Back-to-back stretches of one op on a thread read as one piece.
            if let Some(c) = cur.as_mut().filter(|c| key.0 == PathSide::Cpu && c.key == key && c.end == start) {
                c.end += e.w;
                continue;
            }
            let row = match e.piece {
                Piece::Gpu(r) | Piece::Gap(r) | Piece::Event(r) => Some(r),
                _ => None,
            };
            kept.offer(cur.replace(Raw { start, end: start + e.w, key, row }));
        }
        kept.offer(cur);
        let (raw, seen) = kept.in_path_order();
        Candidates { raw, seen }
    }

    /// The step's `segments` and `segments_left_out`: its candidates, the longest of them
    /// where the report's budget is short (the longest of the longest are the longest of all,
    /// ties to the earlier as before), named.
    pub fn take(&mut self, x: &Inputs, c: Candidates, p: &mut StepPath) {
        let keep = self.keep();
        let raw = if c.raw.len() > keep {
            let mut kept = Longest::new(keep);
            c.raw.into_iter().for_each(|r| kept.offer(Some(r)));
            kept.in_path_order().0
        } else {
            c.raw
        };
        p.segments_left_out = (c.seen - raw.len()) as u32;
        self.budget -= raw.len();
        p.segments = raw
            .into_iter()
            .map(|s| PathSegment {
                start_ns: s.start,
                end_ns: s.end,
                side: s.key.0,
                name: self.name(x, s.key),
                stream: s.row.map(|r| {
                    let row = x.c.gpu.get(r as usize);
                    PathStream { device: row.device as i64, stream: row.stream as i64 }
                }),
            })
            .collect();
    }

    /// The index in the report's names of a segment's or piece's name, added when new (made
    /// once per key; two keys of one text share it).
    pub(super) fn name(&mut self, x: &Inputs, key: (PathSide, u32)) -> u32 {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = name_index(&mut self.names, &piece_name(x, key.0, key.1));
        self.index.insert(key, i);
        i
    }

    pub fn finish(self, out: &mut CriticalPath) {
        out.names = self.names;
    }
}

/// The side and name an edge's time is shown under (None: no time of its own).
pub(super) fn side_of(x: &Inputs, e: &Edge) -> Option<(PathSide, u32)> {
    Some(match e.piece {
        Piece::Cpu(n) => (PathSide::Cpu, n),
        Piece::Gpu(r) => (PathSide::Gpu, x.c.gpu.name(r as usize)),
        Piece::Launch => (PathSide::Launch, NO_NAME),
        Piece::Gap(_) => (PathSide::Gap, NO_NAME),
        Piece::Event(_) => (PathSide::Gap, EVENT_WAIT),
        Piece::Sync | Piece::Dep => return None,
    })
}

pub(super) fn piece_name(x: &Inputs, side: PathSide, name: u32) -> String {
    match (side, name) {
        (PathSide::Launch, _) => "launch delay".to_string(),
        (PathSide::Gap, EVENT_WAIT) => "wait on another stream's event".to_string(),
        (PathSide::Gap, _) => "gap between queued rows".to_string(),
        (_, NO_NAME) => "CPU outside any op".to_string(),
        (_, n) => x.c.names.get(n).to_string(),
    }
}
