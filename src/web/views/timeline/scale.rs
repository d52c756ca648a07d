//! Where things are on the timeline's drawing: the trace's clock across, lanes down.

use crate::report::{TimeWindow, Timeline};
use crate::web::format;

pub const W: f64 = 1000.0;
pub const LANE_H: f64 = 26.0;
pub const LANE_GAP: f64 = 8.0;

/// Where things are on the drawing: the trace's clock across, lanes down.
#[derive(Clone, Copy)]
pub struct Scale {
    pub start_ns: i64,
    pub span_ns: f64,
    /// Times are labelled from here: the whole trace's first GPU row.
    pub origin_ns: i64,
    pub lanes: usize,
    pub nbins: usize,
    pub height: f64,
}

impl Scale {
    pub fn new(tl: &Timeline, window: Option<TimeWindow>) -> Scale {
        let lanes = tl.lanes.len();
        Scale {
            start_ns: tl.start_ns,
            span_ns: (tl.end_ns - tl.start_ns).max(1) as f64,
            origin_ns: window.map(|w| w.origin_ns).unwrap_or(tl.start_ns),
            lanes,
            nbins: tl.lanes.first().map(|l| l.bins.len()).unwrap_or(0).max(1),
            height: lanes as f64 * (LANE_H + LANE_GAP),
        }
    }

    /// The clock time at `frac` of the width.
    pub fn at_ns(self, frac: f64) -> i64 {
        self.start_ns + (frac * self.span_ns).round() as i64
    }

    /// Time in ms from the whole trace's first GPU row, as the CLI's --range takes it.
    pub fn label(self, ns: i64) -> String {
        format::us((ns - self.origin_ns) as f64 / 1000.0)
    }
}
