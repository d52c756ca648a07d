//! GPU utilisation over time, per stream, downsampled to a fixed number of bins.

use crate::vocab::{Bucket as BucketId, IdleCause};
use serde::{Deserialize, Serialize};

/// GPU utilisation over time: the range cut into at most `timeline::BINS` equal bins, per
/// stream (at most `timeline::MAX_LANES` streams, the busiest), each bin with its busy time by
/// bucket and its idle time by cause. Times are exact nanoseconds inside the bin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub start_ns: i64,
    pub end_ns: i64,
    pub bin_ns: i64,
    pub lanes: Vec<TimelineLane>,
    /// Streams not drawn (beyond the busiest `MAX_LANES`), and their busy time.
    #[serde(default)]
    pub hidden_lanes: u32,
    #[serde(default)]
    pub hidden_busy_us: f64,
    /// Each ProfilerStep's GPU extent (first to last row it launched); evenly spaced ones when
    /// there are more than `timeline::MAX_STEP_MARKS`.
    #[serde(default)]
    pub steps: Vec<StepMark>,
    /// Steps left out of `steps`.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub hidden_steps: u32,
    /// Names the bins' `top` index into (the kernel that ran longest in the bin).
    #[serde(default)]
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineLane {
    pub device: i64,
    pub stream: i64,
    pub busy_us: f64,
    pub bins: Vec<LaneBin>,
}

/// One bin of one stream, in nanoseconds. Busy time is the union of the stream's rows (an
/// overlapped part counts once, for the row that started first), by bucket; idle time is the
/// gaps between rows, by cause (as in [`IdleCauses`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaneBin {
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub busy: std::collections::BTreeMap<BucketId, i64>,
    #[serde(default, skip_serializing_if = "is_zero_ns")]
    pub host_wait: i64,
    #[serde(default, skip_serializing_if = "is_zero_ns")]
    pub kernel_wait: i64,
    #[serde(default, skip_serializing_if = "is_zero_ns")]
    pub other_wait: i64,
    /// The kernel that ran longest in the bin (index into `Timeline::names`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<u32>,
}

impl LaneBin {
    pub fn busy_ns(&self) -> i64 {
        self.busy.values().sum()
    }

    pub fn idle_ns(&self) -> i64 {
        self.host_wait + self.kernel_wait + self.other_wait
    }

    pub fn wait_mut(&mut self, cause: IdleCause) -> &mut i64 {
        match cause {
            IdleCause::Host => &mut self.host_wait,
            IdleCause::Kernel => &mut self.kernel_wait,
            IdleCause::Other => &mut self.other_wait,
        }
    }

    pub fn wait(&self, cause: IdleCause) -> i64 {
        match cause {
            IdleCause::Host => self.host_wait,
            IdleCause::Kernel => self.kernel_wait,
            IdleCause::Other => self.other_wait,
        }
    }
}

impl Timeline {
    /// Busy fraction of `lane` in `cols` equal columns (bins merged, the last column may hold
    /// fewer bins), for a text sparkline.
    pub fn busy_columns(&self, lane: &TimelineLane, cols: usize) -> Vec<f64> {
        let n = lane.bins.len();
        if n == 0 || cols == 0 {
            return Vec::new();
        }
        let per = n.div_ceil(cols);
        lane.bins
            .chunks(per)
            .map(|c| c.iter().map(LaneBin::busy_ns).sum::<i64>() as f64 / (c.len() as i64 * self.bin_ns).max(1) as f64)
            .collect()
    }
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn is_zero_ns(v: &i64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepMark {
    pub name: String,
    pub start_ns: i64,
    pub end_ns: i64,
}
