//! Ops' work from their shapes, remembered per op name and argument text: a training run
//! repeats each op with the same shapes in every layer and step, and reading the shapes (a
//! parse and a few allocations an op) was most of a shaped op's cost.

use super::interner::same_bytes;
use crate::analysis::rules::op_work::Work;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

/// Entries kept at most, and the longest argument text kept (at most 4 MiB together, for a
/// hostile trace of distinct shapes); past them the work is worked out each time, as without
/// the memo.
const MAX_ENTRIES: usize = 4096;
const MAX_KEY_BYTES: usize = 1024;

/// An op's name id and its `Input Dims`, `Input type` and `Concrete Inputs` text.
#[derive(Clone, Copy)]
pub(super) struct Key<'a> {
    pub name: u32,
    pub dims: &'a [u8],
    pub types: Option<&'a [u8]>,
    pub concrete: Option<&'a [u8]>,
}

impl Key<'_> {
    fn hash(&self) -> u64 {
        let mut h = FxHasher::default();
        h.write_u32(self.name);
        for part in [Some(self.dims), self.types, self.concrete] {
            match part {
                Some(b) => {
                    h.write_usize(b.len());
                    h.write(b);
                }
                None => h.write_u8(0xff),
            }
        }
        h.finish()
    }

    fn len(&self) -> usize {
        self.dims.len() + self.types.map_or(0, <[u8]>::len) + self.concrete.map_or(0, <[u8]>::len)
    }
}

struct Entry {
    name: u32,
    dims: Box<[u8]>,
    types: Option<Box<[u8]>>,
    concrete: Option<Box<[u8]>>,
    work: Option<Work>,
}

impl Entry {
    fn is(&self, k: &Key) -> bool {
        let same = |a: &Option<Box<[u8]>>, b: Option<&[u8]>| match (a, b) {
            (Some(a), Some(b)) => same_bytes(a, b),
            (None, None) => true,
            _ => false,
        };
        self.name == k.name
            && same_bytes(&self.dims, k.dims)
            && same(&self.types, k.types)
            && same(&self.concrete, k.concrete)
    }
}

#[derive(Default)]
pub(super) struct WorkMemo {
    by_hash: FxHashMap<u64, u32>,
    entries: Vec<Entry>,
}

impl WorkMemo {
    /// `work()` for `k`, remembered: computed once per distinct key.
    pub fn get_or(&mut self, k: Key, work: impl FnOnce() -> Option<Work>) -> Option<Work> {
        // A key too long to keep is neither hashed nor looked up.
        if k.len() > MAX_KEY_BYTES {
            return work();
        }
        self.get_or_hashed(k, k.hash(), work)
    }

    fn get_or_hashed(&mut self, k: Key, hash: u64, work: impl FnOnce() -> Option<Work>) -> Option<Work> {
        match self.by_hash.get(&hash) {
            Some(&i) if self.entries[i as usize].is(&k) => return self.entries[i as usize].work,
            // Another key with this hash: worked out each time (a real 64-bit collision).
            Some(_) => return work(),
            None => {}
        }
        let w = work();
        if self.entries.len() < MAX_ENTRIES {
            self.by_hash.insert(hash, self.entries.len() as u32);
            self.entries.push(Entry {
                name: k.name,
                dims: k.dims.into(),
                types: k.types.map(Box::from),
                concrete: k.concrete.map(Box::from),
                work: w,
            });
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(flops: f64) -> Option<Work> {
        Some(Work { flops, bytes: 0.0, precision: None, causal: false })
    }

    #[test]
    fn each_key_is_worked_out_once_and_told_apart_from_the_others() {
        let mut m = WorkMemo::default();
        let mut calls = 0;
        let key = |name, dims, types| Key { name, dims, types, concrete: None };
        let a = key(1, b"[[2, 3], [3, 4]]".as_slice(), Some(b"[\"float\", \"float\"]".as_slice()));
        assert_eq!(
            m.get_or(a, || {
                calls += 1;
                w(48.0)
            }),
            w(48.0)
        );
        assert_eq!(
            m.get_or(a, || {
                calls += 1;
                w(0.0)
            }),
            w(48.0)
        );
        assert_eq!(calls, 1);
        // Another name, other dims, other types, types missing, concrete inputs present: each
        // its own entry.
        let others = [
            key(2, a.dims, a.types),
            key(1, b"[[2, 3], [3, 5]]".as_slice(), a.types),
            key(1, a.dims, Some(b"[\"float\", \"double\"]".as_slice())),
            key(1, a.dims, None),
            Key { concrete: Some(b"[\"\", \"\"]".as_slice()), ..a },
        ];
        for (i, k) in others.into_iter().enumerate() {
            assert_eq!(m.get_or(k, || w(i as f64)), w(i as f64));
            assert_eq!(m.get_or(k, || w(-1.0)), w(i as f64));
        }
        // `None` (not modelled) is remembered too.
        let none = key(3, b"[]".as_slice(), None);
        assert_eq!(m.get_or(none, || None), None);
        assert_eq!(m.get_or(none, || w(1.0)), None);
        // A key whose hash another key has (forced) is worked out each time, never mixed up.
        let b = key(1, b"[[8]]".as_slice(), None);
        let hash = a.hash();
        assert_eq!(m.get_or_hashed(b, hash, || w(8.0)), w(8.0));
        assert_eq!(m.get_or_hashed(b, hash, || w(9.0)), w(9.0));
        assert_eq!(m.get_or(a, || w(0.0)), w(48.0));
    }

    #[test]
    fn past_its_bounds_it_works_out_each_time() {
        let mut m = WorkMemo::default();
        let long = vec![b'1'; MAX_KEY_BYTES + 1];
        let k = Key { name: 0, dims: &long, types: None, concrete: None };
        assert_eq!(m.get_or(k, || w(1.0)), w(1.0));
        assert_eq!(m.get_or(k, || w(2.0)), w(2.0));
        let dims: Vec<Vec<u8>> = (0..=MAX_ENTRIES).map(|i| i.to_string().into_bytes()).collect();
        for d in &dims {
            m.get_or(Key { name: 0, dims: d, types: None, concrete: None }, || w(1.0));
        }
        assert_eq!(m.entries.len(), MAX_ENTRIES);
        let last = Key { name: 0, dims: &dims[MAX_ENTRIES], types: None, concrete: None };
        assert_eq!(m.get_or(last, || w(3.0)), w(3.0));
    }
}
