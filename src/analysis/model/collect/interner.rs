//! Interned strings: each distinct name stored once.

use crate::analysis::rules::name_flags::name_flags;
use crate::limits;
use rustc_hash::{FxHashMap, FxHasher};
use serde::{Deserialize, Serialize};
use std::hash::Hasher;

/// Interned strings: every distinct name is stored once; records hold a `u32`.
///
/// Looked up by a 64-bit hash of the bytes, then the bytes compared eight at a time: a map
/// keyed by the bytes compares them with `==`, which in wasm is a memcmp of one byte a step
/// (most names looked up are kernel names of 100-300 bytes). Names whose hash an earlier
/// name already has (a real collision) go to `collided`, keyed by their bytes.
#[derive(Default, Serialize, Deserialize)]
pub struct Interner {
    ids: FxHashMap<u64, u32>,
    collided: FxHashMap<Box<[u8]>, u32>,
    /// Per id: the bytes as read (before `names`' lossy UTF-8 conversion).
    raw: Vec<Box<[u8]>>,
    pub names: Vec<Box<str>>,
    /// Per name: the `NAME_*` facts, worked out once when the name is first seen.
    pub flags: Vec<u8>,
    /// Names cut to [`limits::MAX_NAME_BYTES`] (per occurrence).
    pub long_names: u64,
    /// Occurrences of new names past [`limits::MAX_NAMES`], merged into one placeholder.
    pub over_limit: u64,
    other: Option<u32>,
    /// The latest name seen per slot of a fingerprint (its length and first and last eight
    /// bytes), as (fingerprint, id): a name met again is then compared once, not hashed
    /// through first (a kernel's name, 100-300 bytes, comes again with every launch).
    #[serde(skip)]
    recent: Vec<(u64, u32)>,
}

/// Slots of [`Interner::recent`] (a power of two).
const RECENT: usize = 256;

impl Interner {
    pub fn intern(&mut self, s: &[u8]) -> u32 {
        let s = if s.len() > limits::MAX_NAME_BYTES {
            self.long_names += 1;
            cut_name(s)
        } else {
            s
        };
        self.intern_cut(s, || (String::from_utf8_lossy(s).into(), name_flags(s)))
    }

    /// [`Interner::intern`] of `s` (already cut); a new name is stored as `new` says (its text
    /// and flags).
    fn intern_cut(&mut self, s: &[u8], new: impl FnOnce() -> (Box<str>, u8)) -> u32 {
        let print = fingerprint(s);
        let slot = print.map(|f| (f >> 56) as usize % RECENT);
        if let (Some(f), Some(&(g, id))) = (print, slot.and_then(|k| self.recent.get(k))) {
            if f == g && same_bytes(&self.raw[id as usize], s) {
                return id;
            }
        }
        let mut h = FxHasher::default();
        h.write(s);
        let id = self.intern_hashed(s, h.finish(), new);
        // (The placeholder past the name limit may be kept too: its bytes are empty, so no name
        // of eight bytes or more is found as it, and each occurrence is still counted.)
        if let (Some(f), Some(k)) = (print, slot) {
            if self.recent.is_empty() {
                self.recent = vec![(0, u32::MAX); RECENT];
            }
            self.recent[k] = (f, id);
        }
        id
    }

    /// [`Interner::intern_cut`] of `s` whose hash is `hash`.
    fn intern_hashed(&mut self, s: &[u8], hash: u64, new: impl FnOnce() -> (Box<str>, u8)) -> u32 {
        let seen = self.ids.get(&hash).copied();
        match seen {
            Some(id) if same_bytes(&self.raw[id as usize], s) => return id,
            Some(_) => {
                if let Some(&id) = self.collided.get(s) {
                    return id;
                }
            }
            None => {}
        }
        if self.names.len() >= limits::MAX_NAMES {
            self.over_limit += 1;
            if let Some(id) = self.other {
                return id;
            }
            let id = self.names.len() as u32;
            self.names.push(limits::OTHER_NAME.into());
            self.raw.push(Box::default());
            self.flags.push(0);
            self.other = Some(id);
            return id;
        }
        let id = self.names.len() as u32;
        let (name, flags) = new();
        self.names.push(name);
        self.raw.push(s.into());
        self.flags.push(flags);
        if seen.is_some() {
            self.collided.insert(s.into(), id);
        } else {
            self.ids.insert(hash, id);
        }
        id
    }
    pub fn get(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
    /// Whether the name has the `NAME_*` fact `flag`.
    pub fn is(&self, id: u32, flag: u8) -> bool {
        self.flags[id as usize] & flag != 0
    }
}

/// Interns `part`'s names into `into` in the order `part` first saw them (its id order), which
/// is the order one reading of both parts would have seen them in; returns part id -> id.
pub(super) fn remap_names(into: &mut Interner, part: &Interner) -> Vec<u32> {
    // The part's names are cut already, and their text and flags worked out: copied, not
    // worked out again on the thread that joins (a trace names each ProfilerStep#N once).
    part.raw.iter().enumerate().map(|(k, b)| into.intern_cut(b, || (part.names[k].clone(), part.flags[k]))).collect()
}

/// A name's length and its first and last eight bytes, mixed; None under eight bytes (hashed
/// as fast as they would be looked up here).
#[inline]
fn fingerprint(s: &[u8]) -> Option<u64> {
    let n = s.len();
    let first = u64::from_le_bytes(s.get(..8)?.try_into().ok()?);
    let last = u64::from_le_bytes(s.get(n - 8..)?.try_into().ok()?);
    Some((first ^ last.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// `a == b`: in wasm eight bytes a step (see [`Interner`]), natively the C library's vectorised
/// memcmp, as `==` calls it.
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if cfg!(target_arch = "wasm32") {
        same_words(a, b)
    } else {
        a == b
    }
}

/// `a == b`, eight bytes a step.
fn same_words(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (x, y) = (a.chunks_exact(8), b.chunks_exact(8));
    let word = |c: &[u8]| u64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    x.remainder() == y.remainder() && x.zip(y).all(|(p, q)| word(p) == word(q))
}

/// The first [`limits::MAX_NAME_BYTES`] bytes of `s`, cut back to a UTF-8 character boundary
/// (when `s` is UTF-8 there).
pub(super) fn cut_name(s: &[u8]) -> &[u8] {
    let mut end = limits::MAX_NAME_BYTES.min(s.len());
    // Back over at most three continuation bytes to the start of the cut character.
    let mut back = 0;
    while end > 0 && back < 3 && s[end] & 0xC0 == 0x80 {
        end -= 1;
        back += 1;
    }
    &s[..end]
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(super) fn cut_str(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_compare_as_slices_do() {
        let base: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for len in 0..base.len() {
            let a = &base[..len];
            for same in [same_words, same_bytes] {
                assert!(same(a, a));
                for at in 0..len {
                    let mut b = a.to_vec();
                    b[at] ^= 0x20;
                    assert!(!same(a, &b), "{len} {at}");
                }
                assert!(!same(a, &base[..len + 1]));
            }
        }
    }

    /// Names alike in their length and first and last eight bytes (one fingerprint, one slot
    /// of the recent names) and names in other slots, met in a shuffled order with repeats: each
    /// gets the id of its first meeting, as a map by the bytes gives.
    #[test]
    fn recent_names_are_told_apart_by_their_bytes() {
        let names: Vec<Vec<u8>> = (0..600u32)
            .map(|k| match k % 3 {
                0 => format!("void kernel_{:04}<float>(Params)", k / 3).into_bytes(),
                1 => format!("aten::op_{k}").into_bytes(),
                _ => format!("short{}", k % 7).into_bytes(),
            })
            .collect();
        let mut n = Interner::default();
        let mut want: std::collections::HashMap<Vec<u8>, u32> = Default::default();
        let mut seed = 5u64;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let name = &names[(seed >> 33) as usize % names.len()];
            let next = want.len() as u32;
            let id = *want.entry(name.clone()).or_insert(next);
            assert_eq!(n.intern(name), id, "{}", String::from_utf8_lossy(name));
        }
        assert_eq!(n.names.len(), want.len());
        let (a, b) = (b"void kernel_0001<float>(Params)", b"void kernel_0002<float>(Params)");
        assert_eq!(fingerprint(a), fingerprint(b));
    }

    #[test]
    fn names_found_again_whatever_their_hashes() {
        let mut n = Interner::default();
        let long = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)";
        let (a, b) = (n.intern(long.as_bytes()), n.intern(b"aten::mm"));
        assert_ne!(a, b);
        assert_eq!((n.intern(long.as_bytes()), n.intern(b"aten::mm")), (a, b));
        // Names that share a hash (forced here): the later ones are kept apart and found again.
        let plain = |s: &'static [u8]| move || (String::from_utf8_lossy(s).into(), name_flags(s));
        let c = n.intern_hashed(b"aten::add", 7, plain(b"aten::add"));
        let d = n.intern_hashed(b"aten::sub", 7, plain(b"aten::sub"));
        let e = n.intern_hashed(b"aten::mul", 7, plain(b"aten::mul"));
        assert_eq!(vec![c, d, e], vec![2, 3, 4]);
        assert_eq!(
            (
                n.intern_hashed(b"aten::sub", 7, plain(b"aten::sub")),
                n.intern_hashed(b"aten::add", 7, plain(b"aten::add"))
            ),
            (d, c)
        );
        assert_eq!(n.intern_hashed(b"aten::mul", 7, plain(b"aten::mul")), e);
        assert_eq!(n.get(d), "aten::sub");
        // Invalid UTF-8 is shown lossily but told apart by its bytes.
        let (x, y) = (n.intern(b"k\xff"), n.intern(b"k\xfe"));
        assert_ne!(x, y);
        assert_eq!(n.get(x), n.get(y));
        // A part's names joined into another interner keep their first-seen order, and their
        // text and flags (copied from the part) are what interning them there gives.
        let step = n.intern(b"ProfilerStep#3");
        assert_ne!(n.flags[step as usize], 0);
        let mut into = Interner::default();
        into.intern(b"aten::sub");
        let map = remap_names(&mut into, &n);
        let mut alone = Interner::default();
        for (k, &to) in map.iter().enumerate() {
            let again = alone.intern(&n.raw[k]);
            assert_eq!((into.get(to), into.flags[to as usize]), (alone.get(again), alone.flags[again as usize]));
        }
        assert_eq!(map.len(), n.names.len());
        assert_eq!(into.get(map[d as usize]), "aten::sub");
        assert_eq!(map[d as usize], 0);
        assert_eq!(into.get(map[a as usize]), long);
    }
}
