//! The columns GPU rows are stored in: 4-byte offsets from a base, the rare value that does
//! not fit kept exactly in a side table.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// "No value" for an i64 field of a row (a timestamp or id that the event did not carry).
pub const NONE: i64 = i64::MIN;

/// The 4-byte code of `NONE`.
pub(super) const CODE_NONE: u32 = u32::MAX;
/// The code of a value kept in the side table.
pub(super) const CODE_WIDE: u32 = u32::MAX - 1;

/// i64 values stored as 4-byte offsets from a base: `NONE` and values whose offset does not
/// fit (a kernel longer than 4 s, an id past 2^32) go to the side table, ordered by index so
/// that it stays small and cheap when almost every value fits.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct Packed {
    pub(super) code: Vec<u32>,
    pub(super) wide: BTreeMap<u32, i64>,
}

impl Packed {
    pub(super) fn encode(&mut self, i: usize, v: i64, base: i64) -> u32 {
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

    pub(super) fn push(&mut self, v: i64, base: i64) {
        let code = self.encode(self.code.len(), v, base);
        self.code.push(code);
    }

    pub(super) fn set(&mut self, i: usize, v: i64, base: i64) {
        if self.code[i] == CODE_WIDE {
            self.wide.remove(&(i as u32));
        }
        self.code[i] = self.encode(i, v, base);
    }

    pub(super) fn get(&self, i: usize, base: i64) -> i64 {
        match self.code[i] {
            CODE_NONE => NONE,
            CODE_WIDE => self.wide[&(i as u32)],
            off => base + off as i64,
        }
    }

    pub(super) fn truncate(&mut self, n: usize) {
        self.code.truncate(n);
        self.wide.split_off(&(n as u32));
    }
}

/// Ids (correlation, External id) as 4-byte offsets from a base per block of [`BLOCK`] rows.
/// Kineto counts them up from a small base, but a long trace's ids (and `gen_trace.py`'s, whose
/// steps start far apart) pass 2^32: with one base of 0 every such row went to the side table
/// (nearly all rows of a 2 GB `gen_trace.py` trace: about 40 bytes and a tree insert each).
#[derive(Default, Serialize, Deserialize)]
pub(super) struct Ids {
    pub(super) values: Packed,
    /// Per block: its first id less 2^31 (so ids either side of it fit), or `NO_BASE` while
    /// the block has held only `NONE`. A base once set never changes: the block's codes use it.
    pub(super) bases: Vec<i64>,
}

pub(super) const NO_BASE: i64 = i64::MIN;

impl Ids {
    pub(super) fn base(&mut self, i: usize, v: i64) -> i64 {
        let b = i / BLOCK;
        if self.bases.len() <= b {
            self.bases.resize(b + 1, NO_BASE);
        }
        if self.bases[b] == NO_BASE && v != NONE {
            self.bases[b] = v.saturating_sub(1 << 31).max(NO_BASE + 1);
        }
        self.bases[b]
    }

    pub(super) fn push(&mut self, v: i64) {
        let base = self.base(self.values.code.len(), v);
        self.values.push(v, base);
    }

    pub(super) fn set(&mut self, i: usize, v: i64) {
        let base = self.base(i, v);
        self.values.set(i, v, base);
    }

    pub(super) fn get(&self, i: usize) -> i64 {
        // A block with an offset code has its base set.
        self.values.get(i, self.bases.get(i / BLOCK).copied().unwrap_or(0))
    }

    pub(super) fn is_empty(&self) -> bool {
        self.values.code.is_empty()
    }

    pub(super) fn truncate(&mut self, n: usize) {
        self.values.truncate(n);
        self.bases.truncate(n.div_ceil(BLOCK));
    }

    pub(super) fn clear(&mut self) {
        *self = Ids::default();
    }
}

/// Rows per block of start-time bases.
pub(super) const BLOCK: usize = 4096;

/// Bases a block may have before its rows' starts go to the side table.
pub(super) const MAX_BASES: usize = 64;

/// Start times: a 4-byte offset from one of its block's bases, and, in a block with several
/// bases, which one (1 byte). Rows close in the file are not always close in time: Kineto
/// writes each stream's rows in bursts and generators interleave steps, so one base per block
/// put most rows of such traces in the side table (87% on `gen_trace.py`'s, at ~40 bytes each
/// and a tree lookup per read). A block gets a new base (2^31 ns before the row, so rows up to
/// ~2.1 s either side fit) whenever a row fits none of its bases.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct Starts {
    pub(super) offset: Packed,
    /// Per block: which base each row uses, for a block with more than one.
    pub(super) base_of: Vec<Option<Box<[u8]>>>,
    /// Per block: where its bases start in `bases`.
    pub(super) first_base: Vec<u32>,
    pub(super) bases: Vec<i64>,
}

impl Starts {
    pub(super) fn block_bases(&self, block: usize) -> &[i64] {
        let from = self.first_base[block] as usize;
        let to = self.first_base.get(block + 1).map_or(self.bases.len(), |&t| t as usize);
        &self.bases[from..to]
    }

    pub(super) fn push(&mut self, v: i64) {
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

    pub(super) fn get(&self, i: usize) -> i64 {
        let base = match self.offset.code[i] {
            CODE_NONE | CODE_WIDE => 0,
            _ => {
                let which = self.base_of[i / BLOCK].as_ref().map_or(0, |w| w[i % BLOCK]);
                self.bases[self.first_base[i / BLOCK] as usize + which as usize]
            }
        };
        self.offset.get(i, base)
    }

    pub(super) fn shrink_to_fit(&mut self) {
        self.offset.code.shrink_to_fit();
        self.base_of.shrink_to_fit();
        self.first_base.shrink_to_fit();
        self.bases.shrink_to_fit();
    }
}
