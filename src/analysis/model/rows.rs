//! GPU rows stored column by column in 23-24 bytes each (a plain struct took 48): most values fit
//! 4 bytes, and the rare one that does not is kept exactly in a side table, so nothing is
//! rounded or cut. Millions of tiny kernels are what fills memory, so this is where it pays.

/// "No value" for an i64 field of a row (a timestamp or id that the event did not carry).
pub const NONE: i64 = i64::MIN;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The 4-byte code of `NONE`.
const CODE_NONE: u32 = u32::MAX;
/// The code of a value kept in the side table.
const CODE_WIDE: u32 = u32::MAX - 1;

/// i64 values stored as 4-byte offsets from a base: `NONE` and values whose offset does not
/// fit (a kernel longer than 4 s, an id past 2^32) go to the side table, ordered by index so
/// that it stays small and cheap when almost every value fits.
#[derive(Default, Serialize, Deserialize)]
struct Packed {
    code: Vec<u32>,
    wide: BTreeMap<u32, i64>,
}

impl Packed {
    fn encode(&mut self, i: usize, v: i64, base: i64) -> u32 {
        if v == NONE {
            return CODE_NONE;
        }
        match v.checked_sub(base) {
            Some(off) if (0..CODE_WIDE as i64).contains(&off) => off as u32,
            _ => {
                self.wide.insert(i as u32, v);
                CODE_WIDE
            }
        }
    }

    fn push(&mut self, v: i64, base: i64) {
        let code = self.encode(self.code.len(), v, base);
        self.code.push(code);
    }

    fn set(&mut self, i: usize, v: i64, base: i64) {
        if self.code[i] == CODE_WIDE {
            self.wide.remove(&(i as u32));
        }
        self.code[i] = self.encode(i, v, base);
    }

    fn get(&self, i: usize, base: i64) -> i64 {
        match self.code[i] {
            CODE_NONE => NONE,
            CODE_WIDE => self.wide[&(i as u32)],
            off => base + off as i64,
        }
    }

    fn truncate(&mut self, n: usize) {
        self.code.truncate(n);
        self.wide.split_off(&(n as u32));
    }
}

/// Ids (correlation, External id) as 4-byte offsets from a base per block of [`BLOCK`] rows.
/// Kineto counts them up from a small base, but a long trace's ids (and `gen_trace.py`'s, whose
/// steps start far apart) pass 2^32: with one base of 0 every such row went to the side table
/// (nearly all rows of a 2 GB `gen_trace.py` trace: about 40 bytes and a tree insert each).
#[derive(Default, Serialize, Deserialize)]
struct Ids {
    values: Packed,
    /// Per block: its first id less 2^31 (so ids either side of it fit), or `NO_BASE` while
    /// the block has held only `NONE`. A base once set never changes: the block's codes use it.
    bases: Vec<i64>,
}

const NO_BASE: i64 = i64::MIN;

impl Ids {
    fn base(&mut self, i: usize, v: i64) -> i64 {
        let b = i / BLOCK;
        if self.bases.len() <= b {
            self.bases.resize(b + 1, NO_BASE);
        }
        if self.bases[b] == NO_BASE && v != NONE {
            self.bases[b] = v.saturating_sub(1 << 31).max(NO_BASE + 1);
        }
        self.bases[b]
    }

    fn push(&mut self, v: i64) {
        let base = self.base(self.values.code.len(), v);
        self.values.push(v, base);
    }

    fn set(&mut self, i: usize, v: i64) {
        let base = self.base(i, v);
        self.values.set(i, v, base);
    }

    fn get(&self, i: usize) -> i64 {
        // A block with an offset code has its base set.
        self.values.get(i, self.bases.get(i / BLOCK).copied().unwrap_or(0))
    }

    fn is_empty(&self) -> bool {
        self.values.code.is_empty()
    }

    fn truncate(&mut self, n: usize) {
        self.values.truncate(n);
        self.bases.truncate(n.div_ceil(BLOCK));
    }

    fn clear(&mut self) {
        *self = Ids::default();
    }
}

/// Rows per block of start-time bases.
const BLOCK: usize = 4096;

/// Bases a block may have before its rows' starts go to the side table.
const MAX_BASES: usize = 64;

/// Start times: a 4-byte offset from one of its block's bases, and, in a block with several
/// bases, which one (1 byte). Rows close in the file are not always close in time: Kineto
/// writes each stream's rows in bursts and generators interleave steps, so one base per block
/// put most rows of such traces in the side table (87% on `gen_trace.py`'s, at ~40 bytes each
/// and a tree lookup per read). A block gets a new base (2^31 ns before the row, so rows up to
/// ~2.1 s either side fit) whenever a row fits none of its bases.
#[derive(Default, Serialize, Deserialize)]
struct Starts {
    offset: Packed,
    /// Per block: which base each row uses, for a block with more than one.
    base_of: Vec<Option<Box<[u8]>>>,
    /// Per block: where its bases start in `bases`.
    first_base: Vec<u32>,
    bases: Vec<i64>,
}

impl Starts {
    fn block_bases(&self, block: usize) -> &[i64] {
        let from = self.first_base[block] as usize;
        let to = self.first_base.get(block + 1).map_or(self.bases.len(), |&t| t as usize);
        &self.bases[from..to]
    }

    fn push(&mut self, v: i64) {
        let i = self.offset.code.len();
        if i.is_multiple_of(BLOCK) {
            self.first_base.push(self.bases.len() as u32);
            self.base_of.push(None);
        }
        let fits = |b: i64| v.checked_sub(b).is_some_and(|off| (0..CODE_WIDE as i64).contains(&off));
        let bases = self.block_bases(i / BLOCK);
        // The latest base first: rows come in runs.
        let found = (v != NONE).then(|| bases.iter().rposition(|&b| fits(b))).flatten();
        let count = bases.len();
        let (k, base) = match found {
            Some(k) => (k, bases[k]),
            None if v != NONE && count < MAX_BASES => {
                let base = v.saturating_sub(1 << 31);
                self.bases.push(base);
                (count, base)
            }
            // The side table takes it (NONE, or a block with too many bases).
            None => (0, 0),
        };
        self.offset.push(v, base);
        let which = &mut self.base_of[i / BLOCK];
        if k > 0 && which.is_none() {
            *which = Some(vec![0; BLOCK].into_boxed_slice());
        }
        if let Some(which) = which {
            which[i % BLOCK] = k as u8;
        }
    }

    fn get(&self, i: usize) -> i64 {
        let base = match self.offset.code[i] {
            CODE_NONE | CODE_WIDE => 0,
            _ => {
                let which = self.base_of[i / BLOCK].as_ref().map_or(0, |w| w[i % BLOCK]);
                self.bases[self.first_base[i / BLOCK] as usize + which as usize]
            }
        };
        self.offset.get(i, base)
    }

    fn shrink_to_fit(&mut self) {
        self.offset.code.shrink_to_fit();
        self.base_of.shrink_to_fit();
        self.first_base.shrink_to_fit();
        self.bases.shrink_to_fit();
    }
}

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
        GpuRow {
            start: self.start.get(i),
            dur: self.dur.get(i, 0),
            name: self.name[i],
            device,
            stream,
            kind: self.kind[i],
        }
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
        (0..self.len()).map(|i| RowBrief { dur: self.dur(i), name: self.name[i], kind: self.kind[i] })
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

    /// Row `i`'s end, without decoding the rest of the row.
    pub fn end(&self, i: usize) -> i64 {
        self.start.get(i) + self.dur.get(i, 0)
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
