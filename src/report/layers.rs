//! The GPU-time-by-layer tree: each layer's time and, where the work is known, its FLOPs.

use crate::vocab::Bucket as BucketId;
use serde::{Deserialize, Serialize};

/// One layer in the GPU-time-by-layer tree (pre-order; `depth` 0 is a root).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerNode {
    pub name: String,
    pub depth: u32,
    /// GPU time launched in the forward pass (inclusive of children).
    pub forward_us: f64,
    /// GPU time launched by the backward ops of this layer's forward ops.
    pub backward_us: f64,
    /// The largest buckets of this layer's time.
    pub buckets: Vec<(BucketId, f64)>,
    /// The work of its kernels whose work is known (shapes, the profiler's or Inductor's
    /// counts; see `efficiency`), forward and backward together.
    #[serde(default, skip_serializing_if = "no_work")]
    pub flops: f64,
    #[serde(default, skip_serializing_if = "no_work")]
    pub bytes: f64,
    /// The GPU time of those kernels: the time the work was done in.
    #[serde(default, skip_serializing_if = "no_work")]
    pub work_us: f64,
}

fn no_work(v: &f64) -> bool {
    *v == 0.0
}

impl LayerNode {
    /// Achieved TFLOP/s over the kernels whose work is known (None without any).
    pub fn tflops_per_s(&self) -> Option<f64> {
        (self.work_us > 0.0 && self.flops > 0.0).then(|| self.flops / (self.work_us * 1e-6) / 1e12)
    }

    /// The share (%) of the layer's GPU time whose work is known.
    pub fn work_known_pct(&self) -> f64 {
        let total = self.forward_us + self.backward_us;
        if total > 0.0 {
            self.work_us / total * 100.0
        } else {
            0.0
        }
    }
}
