//! The dependency graph of one step and its longest path, after HTA's lightweight critical
//! path model (hta/analyzers/critical_path_analysis.py, `CPGraph`): nodes are instants (an
//! op's or a GPU row's start and end), edges carry the time between them (op and row spans,
//! launch delays, gaps between rows on a stream) or none (dependencies, synchronisation).

use crate::analysis::fork::Fork;
use crate::analysis::model::attribution::{Attribution, NO};
use crate::analysis::model::collect::{Call, CallIds, Collector};
use crate::analysis::model::frozen::StepWindow;
use crate::analysis::options::WhatIfSpec;
use crate::vocab::Bucket;

/// What a step's graph is built from.
pub(super) struct Inputs<'a> {
    pub c: &'a Collector,
    pub at: &'a Attribution,
    pub runtime: &'a [Call],
    pub call_ids: &'a CallIds,
    pub buckets: &'a [Bucket],
    pub steps: &'a [StepWindow],
    pub what_if: Option<&'a WhatIfSpec>,
    /// How the steps may be walked at once.
    pub fork: &'a Fork,
}

impl Inputs<'_> {
    /// The time that places GPU row `i` in a step and orders a stream's launches: its launch
    /// call's start, else its own start. Read on use: a step can hold millions of rows.
    pub fn key(&self, i: usize) -> i64 {
        match self.at.runtime[i] {
            NO => self.c.gpu.start(i),
            r => self.runtime[r as usize].start,
        }
    }
}

/// What an edge's time is spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece {
    /// Order only: no time.
    Dep,
    /// A stretch of CPU time inside the innermost op or runtime call (a name id; `NO_NAME`
    /// where no op is open on the thread).
    Cpu(u32),
    /// A GPU row (its index).
    Gpu(u32),
    /// A row's start after its launch, the stream being free (the launch came late).
    Launch,
    /// A gap between rows queued one after the other on a stream (the later row's index).
    Gap(u32),
    /// A GPU row -> the synchronising call that waited for it (no time).
    Sync,
    /// A recorded GPU row -> the first row of a stream that waited on its event: the gap
    /// from the one's end to the other's start when the wait held that row (the waiting
    /// row's index).
    Event(u32),
}

#[derive(Debug, Clone, Copy)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub w: i64,
    pub piece: Piece,
}

#[derive(Default)]
pub struct Graph {
    pub ts: Vec<i64>,
    pub edges: Vec<Edge>,
}

impl Graph {
    pub fn with_capacity(nodes: usize, edges: usize) -> Graph {
        Graph { ts: Vec::with_capacity(nodes), edges: Vec::with_capacity(edges) }
    }

    pub fn node(&mut self, ts: i64) -> u32 {
        self.ts.push(ts);
        (self.ts.len() - 1) as u32
    }

    pub fn edge(&mut self, from: u32, to: u32, w: i64, piece: Piece) {
        if from != to {
            self.edges.push(Edge { from, to, w: w.max(0), piece });
        }
    }

    /// The longest path with each edge weighed by `weight` (the what-if shrinks some): its
    /// length and its edges, first to last. Kahn's order, so a cycle (clock skew can make
    /// one) leaves its nodes out instead of looping; the count of nodes left out comes back.
    pub fn longest(&self, weight: impl Fn(&Edge) -> i64) -> (i64, Vec<u32>, usize) {
        let (dist, pred, left) = self.distances(weight);
        let (len, path) = self.path_of(&dist, &pred);
        (len, path, left)
    }

    /// The longest path that [`Graph::distances`] found: its length and its edges, first to
    /// last (for callers that also need the distances themselves).
    pub fn path_of(&self, dist: &[i64], pred: &[u32]) -> (i64, Vec<u32>) {
        let Some(end) = (0..dist.len()).max_by_key(|&v| (dist[v], std::cmp::Reverse(v))) else {
            return (0, Vec::new());
        };
        let mut path = Vec::new();
        let mut v = end;
        while pred[v] != u32::MAX && path.len() <= self.edges.len() {
            path.push(pred[v]);
            v = self.edges[pred[v] as usize].from as usize;
        }
        path.reverse();
        (dist[end], path)
    }

    /// Per node: the longest path's length to it and its last edge (u32::MAX at a start).
    pub fn distances(&self, weight: impl Fn(&Edge) -> i64) -> (Vec<i64>, Vec<u32>, usize) {
        let n = self.ts.len();
        let mut first = vec![0u32; n + 1];
        for e in &self.edges {
            first[e.from as usize + 1] += 1;
        }
        for i in 0..n {
            first[i + 1] += first[i];
        }
        let mut out = vec![0u32; self.edges.len()];
        let mut fill = first.clone();
        let mut indeg = vec![0u32; n];
        for (k, e) in self.edges.iter().enumerate() {
            out[fill[e.from as usize] as usize] = k as u32;
            fill[e.from as usize] += 1;
            indeg[e.to as usize] += 1;
        }
        let mut dist = vec![0i64; n];
        let mut pred = vec![u32::MAX; n];
        let mut queue: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
        let mut done = 0;
        while let Some(v) = queue.pop() {
            done += 1;
            for &k in &out[first[v as usize] as usize..first[v as usize + 1] as usize] {
                let e = &self.edges[k as usize];
                let d = dist[v as usize] + weight(e);
                let to = e.to as usize;
                // Ties go to the edge seen first, and a timed edge beats an untimed one.
                if d > dist[to] || (pred[to] == u32::MAX && d == dist[to]) {
                    dist[to] = d;
                    pred[to] = k;
                }
                indeg[to] -= 1;
                if indeg[to] == 0 {
                    queue.push(e.to);
                }
            }
        }
        (dist, pred, n - done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_path_takes_the_longer_branch_and_skips_untimed_waits() {
        let mut g = Graph::default();
        let (a, b, c, d) = (g.node(0), g.node(10), g.node(30), g.node(40));
        g.edge(a, b, 10, Piece::Cpu(0));
        g.edge(b, d, 0, Piece::Dep); // a blocking wait: no time of its own
        g.edge(a, c, 30, Piece::Gpu(0));
        g.edge(c, d, 0, Piece::Sync);
        let (len, path, left) = g.longest(|e| e.w);
        assert_eq!((len, left), (30, 0));
        assert_eq!(g.edges[path[0] as usize].piece, Piece::Gpu(0));
        // The GPU row 50% faster: the CPU branch (10) is now as long as the row (15) is not.
        let (len, _, _) = g.longest(|e| if e.piece == Piece::Gpu(0) { e.w / 2 } else { e.w });
        assert_eq!(len, 15);
    }

    #[test]
    fn a_cycle_is_left_out_not_looped() {
        let mut g = Graph::default();
        let (a, b) = (g.node(0), g.node(5));
        g.edge(a, b, 5, Piece::Cpu(0));
        g.edge(b, a, 0, Piece::Dep);
        let (len, _, left) = g.longest(|e| e.w);
        assert_eq!((len, left), (0, 2));
    }
}
