//! Where runs of bytes end, for the event scanner (`scan.rs`): a string's (its first quote or
//! backslash) and an indentation's (its first byte that is not a space); and the bytes that
//! end a scalar or are whitespace.

#[inline]
pub(super) fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

/// A byte that may end a scalar.
#[inline]
pub(super) fn is_delim(c: u8) -> bool {
    matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
}

/// The first `"` or `\` in `b`. Most strings of a trace are short (keys, phases,
/// categories): their first 32 bytes are looked at 16 at a time in registers (a byte loop
/// there was 12% of a native read: memchr's call and setup cost more than such strings); longer
/// ones (kernel names) go on with memchr natively, and fewer than 16 bytes (a window's end)
/// byte by byte. In wasm the blocks go on to the end: memchr's simd128 search there cost an
/// older Firefox ESR 7% of its worker's time on a 500 MB trace (4.94 against 4.60 CPU s).
#[inline(always)]
pub(super) fn quote_or_backslash(b: &[u8]) -> Option<usize> {
    const BLOCKS_UP_TO: usize = if cfg!(target_arch = "wasm32") { usize::MAX } else { 32 };
    let mut at = 0;
    while at < BLOCKS_UP_TO {
        let Some(block) = b.get(at..at + 16).and_then(|s| <&[u8; 16]>::try_from(s).ok()) else {
            return b[at..].iter().position(|&c| c == b'"' || c == b'\\').map(|n| n + at);
        };
        if let Some(n) = super::blocks::first_quote_or_backslash(block) {
            return Some(at + n);
        }
        at += 16;
    }
    memchr::memchr2(b'"', b'\\', &b[BLOCKS_UP_TO..]).map(|n| n + BLOCKS_UP_TO)
}

/// How many spaces `b` starts with, counted eight bytes at a time while eight are left (the
/// bytes after fewer are left to the caller's loop).
#[inline]
pub(super) fn spaces(b: &[u8]) -> usize {
    let mut n = 0;
    while let Some(w) = b.get(n..n + 8).and_then(|w| <[u8; 8]>::try_from(w).ok()) {
        // A space becomes a zero byte; the first other byte's lowest set bit ends the run.
        let x = u64::from_le_bytes(w) ^ u64::from_le_bytes([b' '; 8]);
        if x != 0 {
            return n + (x.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n
}
