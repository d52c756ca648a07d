//! How the GPU time was launched: what the trace lets tracesight see of each row's origin, so
//! an incomplete trace is never mistaken for an idle or a fast one.

use serde::{Deserialize, Serialize};

/// GPU row time (us) by how it reached the GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchCoverage {
    /// Launched by a runtime call inside an op: attributed to that op.
    pub op_us: f64,
    /// Replayed by a CUDA/HIP graph launch: the op around the launch, not the one that captured
    /// the kernel.
    pub graph_us: f64,
    /// Replayed by a graph launch and mapped to the op that captured it (a capture trace was
    /// given): attributed to that op.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub graph_matched_us: f64,
    /// A launch call with no op around it.
    pub no_op_us: f64,
    /// No launch call in the trace, attributed through the row's own External id.
    pub external_only_us: f64,
    /// No launch call and no op: bucketed by the kernel's name alone.
    pub no_launch_us: f64,
}

impl LaunchCoverage {
    pub fn total_us(&self) -> f64 {
        self.op_us + self.graph_matched_us + self.graph_us + self.no_op_us + self.external_only_us + self.no_launch_us
    }

    /// The parts in a fixed order with their labels, for every front end.
    pub fn parts(&self) -> [(&'static str, f64); 6] {
        // With a capture matched, the replayed time is told in two parts.
        let replayed = if self.graph_matched_us > 0.0 { "replayed, unmatched" } else { "replayed by graph launches" };
        [
            ("launched by an op", self.op_us),
            ("replayed, matched to the capture", self.graph_matched_us),
            (replayed, self.graph_us),
            ("launched outside any op", self.no_op_us),
            ("linked by External id only", self.external_only_us),
            ("with no launch in the trace", self.no_launch_us),
        ]
    }

    /// The non-zero parts with their share of the GPU time (%).
    pub fn shares(&self) -> Vec<(&'static str, f64)> {
        let total = self.total_us().max(f64::MIN_POSITIVE);
        self.parts().into_iter().filter(|p| p.1 > 0.0).map(|(label, us)| (label, us / total * 100.0)).collect()
    }

    /// "launched by an op 97.1%, with no launch in the trace 2.9%": the non-zero parts.
    pub fn line(&self) -> String {
        let parts: Vec<String> = self.shares().iter().map(|(label, pct)| format!("{label} {pct:.1}%")).collect();
        parts.join(", ")
    }
}

/// GPU row time (us) by what decided its bucket, so a reader knows how much of the breakdown
/// rests on the launching op (the surest evidence), on the kernel's name alone, or on nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BucketEvidence {
    /// An enclosing op or module (op-context rules, the leaf op of an unnamed kernel,
    /// hand-written attention, MoE routing scopes).
    pub op_context_us: f64,
    /// The kernel's name alone.
    pub kernel_name_us: f64,
    /// The row's own category (`gpu_memcpy`, `gpu_memset`).
    pub row_kind_us: f64,
    /// The user's rules (`--rules`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub user_rule_us: f64,
    /// No rule matched: the `other` bucket.
    pub unmatched_us: f64,
}

impl BucketEvidence {
    pub fn is_empty(&self) -> bool {
        *self == BucketEvidence::default()
    }

    pub fn total_us(&self) -> f64 {
        self.op_context_us + self.kernel_name_us + self.row_kind_us + self.user_rule_us + self.unmatched_us
    }

    /// The parts in a fixed order with their labels, for every front end.
    pub fn parts(&self) -> [(&'static str, f64); 5] {
        [
            ("the launching op", self.op_context_us),
            ("the kernel name alone", self.kernel_name_us),
            ("the row's category", self.row_kind_us),
            ("your rules", self.user_rule_us),
            ("nothing (other)", self.unmatched_us),
        ]
    }

    /// "the launching op 61.0%, the kernel name alone 39.0%": the non-zero parts.
    pub fn line(&self) -> String {
        let total = self.total_us().max(f64::MIN_POSITIVE);
        let parts: Vec<String> = self
            .parts()
            .iter()
            .filter(|p| p.1 > 0.0)
            .map(|(label, us)| format!("{label} {:.1}%", us / total * 100.0))
            .collect();
        parts.join(", ")
    }
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
