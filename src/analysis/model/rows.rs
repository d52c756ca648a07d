//! GPU rows stored column by column in 23-24 bytes each (a plain struct took 48): most values fit
//! 4 bytes, and the rare one that does not is kept exactly in a side table, so nothing is
//! rounded or cut. Millions of tiny kernels are what fills memory, so this is where it pays.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod columns;
pub use columns::NONE;
use columns::{Ids, Packed, Starts};

/// (device, stream) pairs, interned: a row keeps a 2-byte lane id.
const LANE_WIDE: u16 = u16::MAX;

/// The GPU rows (kernels, memcpys, memsets) of a trace. The correlation and External ids are
/// read once, to attribute rows to their launches, and can then be dropped.
#[derive(Default, Serialize, Deserialize)]
pub struct GpuRows {
    start: Starts,
    dur: Packed,
    correlation: Ids,
    external: Ids,
    name: Vec<u32>,
    lane: Vec<u16>,
    /// Lane ids past `LANE_WIDE` (only hostile input has that many streams).
    lane_wide: BTreeMap<u32, u32>,
    lanes: Vec<(i32, i32)>,
    lane_ids: FxHashMap<(i32, i32), u32>,
    kind: Vec<GpuKind>,
}

impl GpuRows {
    pub fn len(&self) -> usize {
        self.name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    pub fn push(&mut self, row: GpuRow, correlation: i64, external: i64) {
        let i = self.len();
        self.start.push(row.start);
        self.dur.push(row.dur, 0);
        self.correlation.push(correlation);
        self.external.push(external);
        self.name.push(row.name);
        let key = (row.device, row.stream);
        let next = self.lanes.len() as u32;
        let lane = *self.lane_ids.entry(key).or_insert(next);
        if lane == next {
            self.lanes.push(key);
        }
        if lane >= LANE_WIDE as u32 {
            self.lane_wide.insert(i as u32, lane);
            self.lane.push(LANE_WIDE);
        } else {
            self.lane.push(lane as u16);
        }
        self.kind.push(row.kind);
    }

    /// Gives back the room the columns grew into but did not fill.
    pub fn shrink_to_fit(&mut self) {
        self.start.shrink_to_fit();
        for p in [&mut self.dur, &mut self.correlation.values, &mut self.external.values] {
            p.code.shrink_to_fit();
        }
        self.name.shrink_to_fit();
        self.lane.shrink_to_fit();
        self.kind.shrink_to_fit();
    }

    /// Row `i`.
    pub fn get(&self, i: usize) -> GpuRow {
        let (device, stream) = self.lanes[self.lane_of(i) as usize];
        GpuRow { start: self.start.get(i), dur: self.dur(i), name: self.name[i], device, stream, kind: self.kind[i] }
    }

    /// Row `i`'s duration, without decoding its start (the costly column).
    pub fn dur(&self, i: usize) -> i64 {
        self.dur.get(i, 0)
    }

    /// Row `i`'s name id.
    pub fn name(&self, i: usize) -> u32 {
        self.name[i]
    }

    /// Row `i`'s kind.
    pub fn kind(&self, i: usize) -> GpuKind {
        self.kind[i]
    }

    /// Every row without its start and lane, for the passes that read neither: the start is
    /// the costly column to decode (a base per block, looked up).
    pub fn briefs(&self) -> impl Iterator<Item = RowBrief> + '_ {
        (0..self.len()).map(|i| RowBrief { dur: self.dur(i), name: self.name(i), kind: self.kind(i) })
    }

    /// Row `i`'s (device, stream) as an index into [`GpuRows::lanes`].
    pub fn lane_of(&self, i: usize) -> u32 {
        match self.lane[i] {
            LANE_WIDE => self.lane_wide[&(i as u32)],
            l => l as u32,
        }
    }

    /// Every (device, stream), by lane id.
    pub fn lanes(&self) -> &[(i32, i32)] {
        &self.lanes
    }

    pub fn start(&self, i: usize) -> i64 {
        self.start.get(i)
    }

    /// Row `i`'s start and duration, without the rest of the row (its lane, name and kind), for
    /// the passes that read only these.
    pub fn start_dur(&self, i: usize) -> (i64, i64) {
        (self.start.get(i), self.dur(i))
    }

    /// Row `i`'s end, without decoding the rest of the row.
    pub fn end(&self, i: usize) -> i64 {
        self.start.get(i) + self.dur(i)
    }

    pub fn iter(&self) -> impl Iterator<Item = GpuRow> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The row's args.correlation, or NONE. Only before [`GpuRows::drop_links`].
    pub fn correlation(&self, i: usize) -> i64 {
        self.correlation.get(i)
    }

    /// The External id the row itself carries, or NONE. Only before [`GpuRows::drop_links`].
    pub fn external(&self, i: usize) -> i64 {
        self.external.get(i)
    }

    /// Frees the correlation ids (read once, by attribution).
    pub fn drop_correlation(&mut self) {
        self.correlation.clear();
    }

    /// Frees the rows' own External ids (read once, by attribution).
    pub fn drop_external(&mut self) {
        self.external.clear();
    }

    /// Keeps the rows for which `f` gives a new (start, dur), in order, and returns the old ->
    /// new index map (u32::MAX for a row dropped). Runs in place, but for the start column,
    /// which is built anew (its bases follow the rows kept).
    pub fn retain_clipped(&mut self, mut f: impl FnMut(GpuRow) -> Option<(i64, i64)>) -> Vec<u32> {
        let mut index = vec![u32::MAX; self.len()];
        let mut kept = 0;
        let mut starts = Starts::default();
        let links = !self.correlation.is_empty();
        for (i, slot) in index.iter_mut().enumerate() {
            let Some((start, dur)) = f(self.get(i)) else { continue };
            let (lane, kind, name) = (self.lane_of(i), self.kind[i], self.name[i]);
            let (c, e) = if links { (self.correlation(i), self.external(i)) } else { (NONE, NONE) };
            starts.push(start);
            self.dur.set(kept, dur, 0);
            if links {
                self.correlation.set(kept, c);
                self.external.set(kept, e);
            }
            self.name[kept] = name;
            self.kind[kept] = kind;
            if self.lane[kept] == LANE_WIDE {
                self.lane_wide.remove(&(kept as u32));
            }
            if lane >= LANE_WIDE as u32 {
                self.lane_wide.insert(kept as u32, lane);
                self.lane[kept] = LANE_WIDE;
            } else {
                self.lane[kept] = lane as u16;
            }
            *slot = kept as u32;
            kept += 1;
        }
        self.start = starts;
        self.dur.truncate(kept);
        if links {
            self.correlation.truncate(kept);
            self.external.truncate(kept);
        }
        self.name.truncate(kept);
        self.kind.truncate(kept);
        self.lane.truncate(kept);
        self.lane_wide.split_off(&(kept as u32));
        index
    }
}

#[cfg(test)]
mod tests;

pub use crate::trace::GpuKind;

/// A GPU row's duration, name and kind ([`GpuRows::briefs`]).
#[derive(Debug, Clone, Copy)]
pub struct RowBrief {
    pub dur: i64,
    pub name: u32,
    pub kind: GpuKind,
}

/// A kernel, memcpy or memset row, as [`GpuRows`] hands it out (its correlation and
/// External ids are read separately, by attribution only).
#[derive(Debug, Clone, Copy)]
pub struct GpuRow {
    pub start: i64,
    pub dur: i64,
    pub name: u32,
    pub device: i32,
    /// args.stream, else the tid (old traces write "stream 7").
    pub stream: i32,
    pub kind: GpuKind,
}
