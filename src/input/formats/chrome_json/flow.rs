//! Flow events read for their phase and category only. Kineto writes a flow event (`ph` "s"
//! or "f", the arrow from a launch to its kernel) beside every launch: two of every five
//! events of a trace. The analysis only counts them, by phase and category ([`super::Neutral`]
//! reads nothing else of an event whose phase is a flow's), so reading their ids, pids, tids
//! and times member by member is work thrown away. Here the object is classified 64 bytes at a
//! time (`blocks.rs`, as the scanner's container skip): its strings by their quotes, its end by
//! the first `}` outside them, and the keys `ph` and `cat` by the strings that end before a
//! colon.
//!
//! What this reads is what the full scanner (`scan.rs`) reads into `ph` and `cat`, for any
//! valid JSON it takes; anything unusual (a backslash anywhere in the event, a nested object or
//! array, a second `ph`, a `cat` that is not a string) is left to the full scanner, as is
//! every event on a target where the classification is not vectorised (neither SSE2, NEON nor
//! wasm's simd128, which the page is built with). The other values are checked for their
//! structure only, as the full scanner checks the values it skips: a flow event whose `pid`
//! is a boolean, say, is counted as a flow, where the full reading counts it as malformed.

use super::blocks;
use super::event::{RawEvent, Text};
use super::runs::is_ws;
use super::scan::Miss;
use super::structural::{block_at, strings};
use std::borrow::Cow;

/// The flow event at the start of `window`, when its first member is `ph` with a flow phase
/// ("s", "f" or "t"): `ev.ph` and `ev.cat` (the last `cat`, as in the full scanner) set, the
/// rest of `ev` left as it is, and the bytes consumed returned; `Err(NeedMore)` when the window
/// ends inside it. None for any other event, and for the unusual ones above.
#[inline]
pub fn flow<'a>(window: &'a [u8], ev: &mut RawEvent<'a>) -> Option<Result<usize, Miss>> {
    if !blocks::VECTOR || window.first() != Some(&b'{') {
        return None;
    }
    let i = skip_ws(window, 1);
    if !window.get(i..)?.starts_with(b"\"ph\"") {
        return None;
    }
    let i = skip_ws(window, i + 4);
    if window.get(i) != Some(&b':') {
        return None;
    }
    let i = skip_ws(window, i + 1);
    match window.get(i..i + 3)? {
        [b'"', b's' | b'f' | b't', b'"'] => {}
        _ => return None,
    }
    let (n, cat) = match members(window, i + 3)? {
        Ok(found) => found,
        Err(more) => return Some(Err(more)),
    };
    ev.ph = Text(Cow::Borrowed(&window[i + 1..i + 2]));
    if let Some(c) = cat {
        let v = skip_ws(window, c + 1);
        let end = v + 1 + memchr::memchr(b'"', &window[v + 1..n])?;
        ev.cat = Text(Cow::Borrowed(&window[v + 1..end]));
    }
    Some(Ok(n))
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|&c| is_ws(c)) {
        i += 1;
    }
    i
}

/// The object's end, and the colon after its last `cat` key (whose value then starts with a
/// quote), the keys looked for from `from` on (after the phase): 64 bytes at a time, from the
/// object's `{` (so that quotes pair from the start). None where the full scanner must decide.
fn members(b: &[u8], from: usize) -> Option<Result<(usize, Option<usize>), Miss>> {
    let (mut pos, mut in_string, mut prev_escape, mut prev_opening, mut cat) = (0, 0u64, 0u64, 0u64, None);
    let mut tail = [b' '; 64];
    while pos < b.len() {
        let block = block_at(b, pos, &mut tail);
        let [quote, backslash, open, close, bra, ket] = blocks::bytes_in(block, [b'"', b'\\', b'{', b'}', b'[', b']']);
        let braces = blocks::Masks { quote, backslash, open, close };
        // Any backslash before the end sends the event to the full scanner (below), so the
        // quotes are all unescaped where they are read.
        let (quotes, inside) = strings(&braces, &mut prev_escape, &mut in_string);
        // The object's own `{` is its first byte; any other brace or bracket outside strings
        // is a nested value, or the end.
        let first = if pos == 0 { !1u64 } else { !0 };
        let nested = ((braces.open & first) | bra | ket) & !inside;
        let closes = braces.close & !inside;
        let end = closes & closes.wrapping_neg();
        let before_end = end.wrapping_sub(1) | end;
        if braces.backslash & before_end != 0 || nested & before_end != 0 {
            return None;
        }
        // Strings that end here: a key's when a colon follows (after any spaces). Only those of
        // two or three bytes can be `ph` or `cat`: a closing quote three or four bytes after an
        // opening one (an opening quote is inside), which may be in the block before.
        let opening = quotes & inside;
        let short = (opening << 3) | (opening << 4) | (prev_opening >> 61) | (prev_opening >> 60);
        prev_opening = opening;
        let mut ended = quotes & !inside & before_end & short;
        while ended != 0 {
            let q = pos + ended.trailing_zeros() as usize;
            ended &= ended - 1;
            let is_cat = if q >= from + 5 && &b[q - 4..q] == b"\"cat" {
                true
            } else if q >= from + 4 && &b[q - 3..q] == b"\"ph" {
                false
            } else {
                continue;
            };
            let colon = skip_ws(b, q + 1);
            if b.get(colon) != Some(&b':') {
                continue;
            }
            // A second `ph`, or a `cat` that is not a string (or not whole in the window).
            if !is_cat || b.get(skip_ws(b, colon + 1)) != Some(&b'"') {
                return None;
            }
            cat = Some(colon);
        }
        if end != 0 {
            let n = pos + end.trailing_zeros() as usize + 1;
            return (n <= b.len()).then_some(Ok((n, cat)));
        }
        pos += 64;
    }
    Some(Err(Miss::NeedMore))
}
