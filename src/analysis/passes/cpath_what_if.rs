//! The what-if of the critical path: which edges "TARGET x% faster" shrinks.

use super::cpath_graph::Piece;
use crate::analysis::model::collect::Collector;
use crate::analysis::options::WhatIfSpec;
use crate::vocab::Bucket;

/// Which edges the what-if shrinks: GPU rows of the bucket, or rows and CPU stretches whose
/// name contains the target.
pub(crate) struct Matcher<'a> {
    bucket: Option<Bucket>,
    names: Vec<bool>,
    keep: f64,
    c: &'a Collector,
    buckets: &'a [Bucket],
}

impl<'a> Matcher<'a> {
    pub(crate) fn new(w: &WhatIfSpec, c: &'a Collector, buckets: &'a [Bucket]) -> Matcher<'a> {
        let bucket = Bucket::ALL.into_iter().find(|b| b.id().eq_ignore_ascii_case(&w.target));
        let needle = w.target.to_lowercase();
        let names = match bucket {
            Some(_) => Vec::new(),
            None => c.names.names.iter().map(|n| n.to_lowercase().contains(&needle)).collect(),
        };
        Matcher { bucket, names, keep: 1.0 - w.faster_pct / 100.0, c, buckets }
    }

    pub(crate) fn weight(&self, e: &super::cpath_graph::Edge) -> i64 {
        let hit = match (e.piece, self.bucket) {
            (Piece::Gpu(r), Some(b)) => self.buckets[r as usize] == b,
            (Piece::Gpu(r), None) => self.names.get(self.c.gpu.name(r as usize) as usize).copied().unwrap_or(false),
            (Piece::Cpu(n), None) => self.names.get(n as usize).copied().unwrap_or(false),
            _ => false,
        };
        if hit {
            (e.w as f64 * self.keep).round() as i64
        } else {
            e.w
        }
    }
}
