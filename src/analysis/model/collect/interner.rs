//! Interned strings: each distinct name stored once.

use crate::analysis::rules::name_flags::name_flags;
use crate::limits;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// Interned strings: every distinct name is stored once; records hold a `u32`.
#[derive(Default, Serialize, Deserialize)]
pub struct Interner {
    ids: FxHashMap<Box<[u8]>, u32>,
    pub names: Vec<Box<str>>,
    /// Per name: the `NAME_*` facts, worked out once when the name is first seen.
    pub flags: Vec<u8>,
    /// Names cut to [`limits::MAX_NAME_BYTES`] (per occurrence).
    pub long_names: u64,
    /// Occurrences of new names past [`limits::MAX_NAMES`], merged into one placeholder.
    pub over_limit: u64,
    other: Option<u32>,
}

impl Interner {
    pub fn intern(&mut self, s: &[u8]) -> u32 {
        let s = if s.len() > limits::MAX_NAME_BYTES {
            self.long_names += 1;
            cut_name(s)
        } else {
            s
        };
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        if self.names.len() >= limits::MAX_NAMES {
            self.over_limit += 1;
            if let Some(id) = self.other {
                return id;
            }
            let id = self.names.len() as u32;
            self.names.push(limits::OTHER_NAME.into());
            self.flags.push(0);
            self.other = Some(id);
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(String::from_utf8_lossy(s).into());
        self.flags.push(name_flags(s));
        self.ids.insert(s.into(), id);
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
    let mut raw: Vec<&[u8]> = vec![&[]; part.names.len()];
    for (bytes, &id) in &part.ids {
        raw[id as usize] = bytes;
    }
    raw.into_iter().map(|b| into.intern(b)).collect()
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
