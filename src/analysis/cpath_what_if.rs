//! The what-if of the critical path: which edges "TARGET x% faster" shrinks.

use super::collect::Collector;
use super::cpath_graph::Piece;
use crate::vocab::Bucket;

/// `--what-if TARGET=PCT%`: a bucket id or a name family, made PCT% faster.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfSpec {
    pub target: String,
    pub faster_pct: f64,
}

impl WhatIfSpec {
    pub fn parse(text: &str) -> Result<WhatIfSpec, String> {
        let (target, pct) = text.split_once('=').ok_or("expected TARGET=PCT%, as in gemm=30%")?;
        let pct: f64 = pct.trim().trim_end_matches('%').parse().map_err(|_| format!("not a percentage: {pct}"))?;
        if !(0.0..=100.0).contains(&pct) || target.trim().is_empty() {
            return Err(format!("expected a target and 0-100%, got {text}"));
        }
        Ok(WhatIfSpec { target: target.trim().to_string(), faster_pct: pct })
    }
}

/// Which edges the what-if shrinks: GPU rows of the bucket, or rows and CPU stretches whose
/// name contains the target.
pub(super) struct Matcher<'a> {
    bucket: Option<Bucket>,
    names: Vec<bool>,
    keep: f64,
    c: &'a Collector,
    buckets: &'a [Bucket],
}

impl<'a> Matcher<'a> {
    pub(super) fn new(w: &WhatIfSpec, c: &'a Collector, buckets: &'a [Bucket]) -> Matcher<'a> {
        let bucket = Bucket::ALL.into_iter().find(|b| b.id().eq_ignore_ascii_case(&w.target));
        let needle = w.target.to_lowercase();
        let names = match bucket {
            Some(_) => Vec::new(),
            None => c.names.names.iter().map(|n| n.to_lowercase().contains(&needle)).collect(),
        };
        Matcher { bucket, names, keep: 1.0 - w.faster_pct / 100.0, c, buckets }
    }

    pub(super) fn weight(&self, e: &super::cpath_graph::Edge) -> i64 {
        let hit = match (e.piece, self.bucket) {
            (Piece::Gpu(r), Some(b)) => self.buckets[r as usize] == b,
            (Piece::Gpu(r), None) => self.names.get(self.c.gpu.get(r as usize).name as usize).copied().unwrap_or(false),
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
