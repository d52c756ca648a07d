//! The compact wire form of the parts of a Report the views show: one- or two-letter keys,
//! positional tuples, derivable fields left out.

use super::common::*;
use super::state::*;
use crate::analysis::diagnostics::DiagnosticId;
use crate::analysis::hints::HintId;
use crate::analysis::taxonomy::{Backend, Bucket as BucketId};
use crate::report::*;
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------------------------------
// The compact wire form of the parts of a Report the views show.

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WLink {
    /// Format version.
    pub v: u8,
    pub s: ViewState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r: Option<WReport>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WReport {
    pub v: String,
    pub t: Vec<WTrace>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub e: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub k: Vec<WRank>,
    /// Each rank's MFU, in `k`'s order (empty when no rank has one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub m: Vec<Option<f64>>,
    /// The rest of the ranks view, when there are several ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub j: Option<WJob>,
}

/// What the ranks view shows beyond `WRank`: per rank, the job verdict, waits, the straggler
/// and the collectives listed. The spread of each metric, the outliers and the straggler are
/// derived from these on opening, as the analysis derives them.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WJob {
    #[serde(default, skip_serializing_if = "is_false")]
    pub o: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub n: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w: Option<i64>,
    /// Collectives matched by sequence number.
    #[serde(default, skip_serializing_if = "is_false")]
    pub q: bool,
    #[serde(default, skip_serializing_if = "is_zero_u")]
    pub u: u64,
    /// One per `WRank`, in the same order.
    pub r: Vec<WRankJob>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub c: Vec<WCollective>,
}

/// compute, step, waited, waiting caused, collectives arrived at last, top buckets.
#[derive(Serialize, Deserialize)]
pub struct WRankJob(pub f64, pub Option<f64>, pub f64, pub f64, pub u64, pub Vec<(BucketId, f64)>);

/// name, group, seq, index, ranks, bytes, transfer, waited, skew, last row (the bandwidth is
/// derived from bytes and transfer; per-rank durations are not carried).
#[derive(Serialize, Deserialize)]
pub struct WCollective(
    pub String,
    pub Option<String>,
    pub Option<i64>,
    pub i64,
    pub usize,
    pub Option<i64>,
    pub f64,
    pub f64,
    pub f64,
    pub usize,
);

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WRank(pub String, pub Option<i64>, pub f64, pub f64, pub f64, pub f64, pub f64, pub f64, pub f64);

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WTrace {
    /// The efficiency figures' declared subset ([`Efficiency::link_subset`]), in the report's
    /// own form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ef: Option<Efficiency>,
    /// GPU time by how it was launched: op, graph, no op, External id only, no launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv: Option<[f64; 5]>,
    /// Graph time matched to a capture trace (`cv` holds the rest: links before it had none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cm: f64,
    /// The graph replays, in the report's own form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gr: Option<crate::report::GraphReplays>,
    pub f: String,
    pub n: u64,
    #[serde(default, skip_serializing_if = "is_zero_u")]
    pub j: u64,
    pub d: WDevice,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w: Option<i64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub g: bool,
    /// kernel, busy, span, idle, compute, comm, exposed, overlap, memory.
    pub u: [f64; 9],
    #[serde(default, skip_serializing_if = "is_zero_u")]
    pub c: u64,
    /// est. SM efficiency, achieved occupancy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub se: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oc: Option<f64>,
    pub b: Vec<WBucket>,
    pub a: WAttention,
    pub tk: Vec<WRow>,
    pub to: Vec<WRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub st: Vec<WStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub h: Vec<WHint>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub x: Vec<WDiag>,
    /// The analysed range (start, end ns), when the report covers a range only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rg: Option<(i64, i64, i64)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WDevice {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub m: Option<f64>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub k: usize,
}

/// A name and its display form: one string when they are equal, else both. (The display form
/// is not derived here: that would link the kernel-name parser and its demangler into the
/// page; deflate stores a short name that repeats its full name cheaply.)
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
pub enum WName {
    Same(String),
    Both(String, String),
}

impl WName {
    pub fn pack(name: &str, short: &str) -> WName {
        if short == name {
            WName::Same(name.into())
        } else {
            WName::Both(name.into(), short.into())
        }
    }
    pub fn unpack(self) -> (String, String) {
        match self {
            WName::Same(n) => (n.clone(), n),
            WName::Both(n, s) => (n, s),
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WBucket {
    pub i: BucketId,
    /// Name and definition, only when they differ from the bucket id's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r: Option<String>,
    pub t: f64,
    /// Share, only when it differs from the one derived from the times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    pub c: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub m: Vec<(String, f64, u64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub k: Vec<(WName, f64, u64)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WAttention {
    pub b: Backend,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub t: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub a: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub e: Vec<WEvidence>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub r: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub f: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WEvidence {
    pub b: Backend,
    pub k: EvidenceKind,
    pub n: WName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l: Option<String>,
    pub t: f64,
    pub c: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WRow {
    pub n: WName,
    pub t: f64,
    /// Share and mean, only when they differ from those derived from time and count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p: Option<f64>,
    pub c: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub m: Option<f64>,
    /// Max, only when it differs from the time (a single call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub o: Option<String>,
    pub b: BucketId,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WStep(pub String, pub [f64; 7], pub u64);

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WHint {
    pub i: HintId,
    pub s: Severity,
    pub m: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub e: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub f: String,
    /// Time at stake (whole microseconds), unless the summary gives it (`derived_stake`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<f64>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WDiag(pub DiagnosticId, pub u64, pub String, pub Severity);

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
