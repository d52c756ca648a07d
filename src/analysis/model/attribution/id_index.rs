//! Finding the first item with a given integer id (a correlation or External id) in a list.

use super::tree::NO;
use crate::analysis::model::collect::NONE;
use crate::analysis::model::sort::{partition_point_from, sort_nearly_sorted};

/// The first index of each integer id (correlation, External) in a list. Kineto counts these
/// ids up from a small base, so a table indexed by `id - min` is usually no larger than the
/// list itself and a lookup is one load. Ids counted up from several bases (`gen_trace.py`
/// starts each step's at a new one, 200 M apart) fill a few runs of 1024-id blocks: a table
/// per block that holds an id, found by a binary search in the blocks (a few thousand), then
/// one load, where a search in the ids themselves decoded an id at each of ~20 steps. Ids
/// spread wider than either (merged or hand-made traces, hostile input) are found by binary
/// search in the indices sorted by id: 4 bytes an item, counted before they are collected, as
/// a list grown by doubling leaves holes a wasm memory cannot give back (16-byte (id, index)
/// pairs grown so grew the emulated page worker's memory, `examples/wasm_heap.rs`, by 14 MiB
/// at this step on a 500 MB trace).
pub(super) enum IdIndex {
    Dense {
        min: i64,
        slot: Vec<u32>,
    },
    /// `blocks`: the block numbers (`id >> BLOCK_BITS`) that hold an id, ascending; `slot`:
    /// their tables, one after the other.
    Blocks {
        blocks: Vec<i64>,
        slot: Vec<u32>,
    },
    /// Indices sorted by id, equal ids in index order.
    Sorted(Vec<u32>),
}

/// Ids per block of [`IdIndex::Blocks`].
const BLOCK_BITS: u32 = 10;

impl IdIndex {
    /// Over the ids `id(0..n)`; ids equal to NONE are skipped.
    pub(super) fn new(n: usize, id: impl Fn(usize) -> i64) -> IdIndex {
        let ids = || (0..n).filter(|&i| id(i) != NONE);
        let (mut count, mut min, mut max) = (0usize, i64::MAX, i64::MIN);
        for i in ids() {
            count += 1;
            min = min.min(id(i));
            max = max.max(id(i));
        }
        // A table may take up to this many slots (twice the ids, and a little).
        let room = 2 * count + 1024;
        let range = max.checked_sub(min).and_then(|r| usize::try_from(r).ok()).and_then(|r| r.checked_add(1));
        match range {
            Some(range) if count > 0 && range <= room => {
                let mut slot = vec![NO; range];
                for i in ids() {
                    let s = &mut slot[(id(i) - min) as usize];
                    if *s == NO {
                        *s = i as u32;
                    }
                }
                IdIndex::Dense { min, slot }
            }
            _ => match Self::blocks(ids(), &id, room >> BLOCK_BITS) {
                Some(index) => index,
                None => {
                    let mut sorted: Vec<u32> = Vec::with_capacity(count);
                    sorted.extend(ids().map(|i| i as u32));
                    // In index order the ids mostly ascend (a step's ops count up, the steps'
                    // bases too): only the few out of order are sorted.
                    sort_nearly_sorted(&mut sorted, |&i| (id(i as usize), i));
                    IdIndex::Sorted(sorted)
                }
            },
        }
    }

    /// The ids' blocks and tables, unless they hold more than `most` blocks.
    fn blocks(ids: impl Iterator<Item = usize> + Clone, id: impl Fn(usize) -> i64, most: usize) -> Option<IdIndex> {
        let mut seen = rustc_hash::FxHashSet::default();
        let mut last = None;
        for i in ids.clone() {
            let b = id(i) >> BLOCK_BITS;
            // Ids come in runs: the set is asked only when the block changes.
            if last != Some(b) {
                last = Some(b);
                seen.insert(b);
                if seen.len() > most {
                    return None;
                }
            }
        }
        let mut blocks: Vec<i64> = seen.into_iter().collect();
        blocks.sort_unstable();
        let mut slot = vec![NO; blocks.len() << BLOCK_BITS];
        let mut at = (i64::MIN, 0);
        for i in ids {
            let v = id(i);
            if v >> BLOCK_BITS != at.0 {
                // Every id's block is in the list.
                at = (v >> BLOCK_BITS, blocks.binary_search(&(v >> BLOCK_BITS)).ok()? << BLOCK_BITS);
            }
            let s = &mut slot[at.1 + (v & ((1 << BLOCK_BITS) - 1)) as usize];
            if *s == NO {
                *s = i as u32;
            }
        }
        Some(IdIndex::Blocks { blocks, slot })
    }

    /// The first index whose id is `want` (the same `id` as given to [`IdIndex::new`]), or NO.
    pub(super) fn get(&self, want: i64, id: impl Fn(usize) -> i64) -> u32 {
        match self {
            IdIndex::Dense { min, slot } => want
                .checked_sub(*min)
                .and_then(|k| usize::try_from(k).ok())
                .and_then(|k| slot.get(k).copied())
                .unwrap_or(NO),
            IdIndex::Blocks { blocks, .. } => match blocks.binary_search(&(want >> BLOCK_BITS)) {
                Ok(k) => self.in_block(k, want),
                _ => NO,
            },
            IdIndex::Sorted(v) => {
                let k = v.partition_point(|&i| id(i as usize) < want);
                v.get(k).copied().filter(|&i| id(i as usize) == want).unwrap_or(NO)
            }
        }
    }

    /// The slot of `want` in the `k`th block of [`IdIndex::Blocks`].
    fn in_block(&self, k: usize, want: i64) -> u32 {
        match self {
            // NONE's slot, where its block holds one, is NO: NONE is never put in.
            IdIndex::Blocks { slot, .. } => slot[(k << BLOCK_BITS) + (want & ((1 << BLOCK_BITS) - 1)) as usize],
            _ => NO,
        }
    }

    /// A finder for lookups one after the other (see [`Finder`]).
    pub(super) fn finder(&self) -> Finder<'_> {
        Finder { index: self, hint: 0 }
    }
}

/// [`IdIndex::get`] for ids looked up in turn, starting where the last lookup ended: looked up
/// in row order, ids come in runs, nearly ascending (a step's launches), so a lookup takes a
/// few steps instead of a binary search over thousands of blocks or hundreds of thousands of
/// ids (`gen_trace.py`'s 500 MB trace starts each of its 6,003 steps' ids at a new base: its
/// 390 k correlation and External ids are searched in [`IdIndex::Sorted`], each lookup about 19
/// steps that decode an id).
pub(super) struct Finder<'i> {
    index: &'i IdIndex,
    /// Where the last lookup ended: a block, or a place in the sorted indices.
    hint: usize,
}

impl Finder<'_> {
    pub(super) fn get(&mut self, want: i64, id: impl Fn(usize) -> i64) -> u32 {
        match self.index {
            IdIndex::Dense { .. } => self.index.get(want, id),
            IdIndex::Blocks { blocks, .. } => {
                let b = want >> BLOCK_BITS;
                if blocks.get(self.hint) != Some(&b) {
                    match blocks.binary_search(&b) {
                        Ok(k) => self.hint = k,
                        _ => return NO,
                    }
                }
                self.index.in_block(self.hint, want)
            }
            IdIndex::Sorted(v) => {
                let k = partition_point_from(v, &mut self.hint, |&i| id(i as usize) < want);
                v.get(k).copied().filter(|&i| id(i as usize) == want).unwrap_or(NO)
            }
        }
    }
}
