//! Finding the end of a JSON object or array 64 bytes at a time, as simdjson's stage 1 does:
//! bit masks of quotes, backslashes and brackets per block (`blocks`), the escaped bytes from
//! the runs of backslashes, the in-string mask by prefix XOR of the unescaped quotes (carried
//! from block to block), then only the brackets outside strings are counted. A backslash
//! outside any string (never in JSON) hands the container to the scalar reference, so both
//! give the same answer on any bytes.
//!
//! Kineto's `args` are mostly skipped containers (shapes, strides, concrete inputs), so this is
//! the scanner's hottest loop. [`container_end_scalar`] (memchr and a string skip) is the
//! reference, and is used where [`BLOCKS`] is false.

use super::blocks;

/// The bytes escaped by a backslash, given the backslashes of a block and whether the
/// previous block ended in an unfinished escape (`prev`, 0 or 1, updated). simdjson's
/// `find_escaped`: a run of backslashes escapes every second byte after its start.
#[inline(always)]
fn escaped(backslash: u64, prev: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslash = backslash & !*prev;
    let follows = (backslash << 1) | *prev;
    let odd_starts = backslash & !EVEN & !follows;
    let (even_starts, overflow) = odd_starts.overflowing_add(backslash);
    *prev = overflow as u64;
    (EVEN ^ (even_starts << 1)) & follows
}

/// Bit i set when an odd number of bits at or below i are set in `x`.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// A block's unescaped quotes and the bytes inside strings (an opening quote counts as
/// inside, a closing one not), given its masks and the escape and in-string state the block
/// before left (both updated for the next block).
#[inline(always)]
pub(super) fn strings(m: &blocks::Masks, prev_escape: &mut u64, in_string: &mut u64) -> (u64, u64) {
    let quotes = m.quote & !escaped(m.backslash, prev_escape);
    let inside = prefix_xor(quotes) ^ *in_string;
    *in_string = ((inside as i64) >> 63) as u64;
    (quotes, inside)
}

/// The 64 bytes of `b` from `pos` (< `b.len()`); the last ones copied into `tail` and padded
/// with spaces, which change nothing that is classified.
#[inline(always)]
pub(super) fn block_at<'b>(b: &'b [u8], pos: usize, tail: &'b mut [u8; 64]) -> &'b [u8; 64] {
    match b.get(pos..pos + 64).and_then(|s| <&[u8; 64]>::try_from(s).ok()) {
        Some(block) => block,
        None => {
            *tail = [b' '; 64];
            tail[..b.len() - pos].copy_from_slice(&b[pos..]);
            tail
        }
    }
}

/// Whether [`container_end`] classifies blocks: where that is vectorised, but not in wasm,
/// where its simd128 version read a 500 MB trace no faster than the reference, whose memchr
/// searches with simd128 there (docs/performance.md).
const BLOCKS: bool = blocks::VECTOR && !cfg!(target_arch = "wasm32");

/// The position just after the `close` that ends the container opening at `b[0]` (== `open`),
/// counting only brackets of its own kind outside strings (in valid JSON the other kind nests
/// inside); None when `b` ends first.
#[inline]
pub fn container_end(b: &[u8], open: u8, close: u8) -> Option<usize> {
    if !BLOCKS {
        return container_end_scalar(b, open, close);
    }
    debug_assert_eq!(b.first(), Some(&open));
    let (mut in_string, mut prev_escape, mut depth) = (0u64, 0u64, 0usize);
    let mut pos = 0;
    let mut tail = [b' '; 64];
    while pos < b.len() {
        let block = block_at(b, pos, &mut tail);
        let m = blocks::classify(block, open, close);
        let (_, inside) = strings(&m, &mut prev_escape, &mut in_string);
        let (opens, closes) = (m.open & !inside, m.close & !inside);
        // A backslash outside a string (not JSON) escapes nothing for the scalar scan but
        // would here: up to the first such byte both agree, after it the reference decides.
        let stray = m.backslash & !inside;
        let first_stray = stray & stray.wrapping_neg();
        let mut brackets = (opens | closes) & first_stray.wrapping_sub(1);
        while brackets != 0 {
            let bit = brackets & brackets.wrapping_neg();
            if opens & bit != 0 {
                depth += 1;
            } else {
                depth -= 1;
                if depth == 0 {
                    let end = pos + bit.trailing_zeros() as usize + 1;
                    return (end <= b.len()).then_some(end);
                }
            }
            brackets ^= bit;
        }
        if stray != 0 {
            return container_end_scalar(b, open, close);
        }
        pos += 64;
    }
    None
}

/// The structural scan alone over a whole JSON text fed in pieces, with nothing read out of
/// it: each 64-byte block classified, its escaped quotes taken out, the in-string mask by
/// prefix XOR (carried from block to block) and the braces outside strings counted. This is
/// the least a reader that must know which bytes are inside strings does per byte (simdjson's
/// stage 1 does this and more: every structural character, and an index of their positions),
/// so its speed is a limit on any such reader's: `examples/probe.rs structural` times it
/// beside the CLI (`scripts/bench.sh`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Structure {
    in_string: u64,
    prev_escape: u64,
    /// Unescaped quotes (each opens or closes a string).
    pub quotes: u64,
    /// `{` and `}` outside strings.
    pub opens: u64,
    pub closes: u64,
}

impl Structure {
    /// Scans the whole 64-byte blocks at the start of `b`; returns the bytes scanned (a
    /// multiple of 64). The rest is to be handed again at the start of the next piece.
    pub fn blocks(&mut self, b: &[u8]) -> usize {
        let mut chunks = b.chunks_exact(64);
        for block in &mut chunks {
            let block: &[u8; 64] = block.try_into().expect("chunks_exact gives 64 bytes");
            let m = blocks::classify(block, b'{', b'}');
            let (quotes, inside) = strings(&m, &mut self.prev_escape, &mut self.in_string);
            self.quotes += u64::from(quotes.count_ones());
            self.opens += u64::from((m.open & !inside).count_ones());
            self.closes += u64::from((m.close & !inside).count_ones());
        }
        b.len() - chunks.remainder().len()
    }

    /// Scans the text's last bytes (under 64), padded with spaces, which change nothing.
    pub fn end(&mut self, rest: &[u8]) {
        debug_assert!(rest.len() < 64, "the rest `blocks` left");
        let mut block = [b' '; 64];
        let n = rest.len().min(64);
        block[..n].copy_from_slice(&rest[..n]);
        self.blocks(&block);
    }
}

/// The reference for [`container_end`]: memchr to the next quote or bracket, strings skipped
/// by their escapes.
pub fn container_end_scalar(b: &[u8], open: u8, close: u8) -> Option<usize> {
    let (mut i, mut depth) = (0, 0usize);
    loop {
        i += memchr::memchr3(b'"', open, close, &b[i..])?;
        let c = b[i];
        i += 1;
        if c == b'"' {
            loop {
                i += memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
                if b[i] == b'"' {
                    i += 1;
                    break;
                }
                i += 2; // the backslash and the escaped byte
            }
        } else if c == open {
            depth += 1;
        } else {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::blocks::{bytes_in, bytes_in_scalar, classify, classify_scalar};
    use super::*;

    /// A small deterministic generator (xorshift64*), so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn pick<'a>(&mut self, from: &'a [&'a [u8]]) -> &'a [u8] {
            from[(self.next() % from.len() as u64) as usize]
        }
    }

    fn both(b: &[u8], open: u8, close: u8) {
        assert_eq!(
            container_end(b, open, close),
            container_end_scalar(b, open, close),
            "{:?}",
            String::from_utf8_lossy(b)
        );
    }

    /// The string scan's first quote or backslash, at every length and offset, against a
    /// byte loop; and its 16-byte step (vector and word-at-a-time) against the reference.
    #[test]
    fn quote_or_backslash_equals_a_byte_loop() {
        use super::super::runs::quote_or_backslash;
        let mut rng = Rng(7);
        let alphabet: &[&[u8]] = &[b"\"", b"\\", b"a", b" ", b"[", "é".as_bytes(), &[0xff], &[0]];
        for round in 0..20_000 {
            let len = (rng.next() % 100) as usize;
            // Mostly plain bytes, so that the hit falls anywhere in the first 100, or nowhere.
            let b: Vec<u8> = (0..len)
                .map(|_| if rng.next().is_multiple_of(2 + round % 60) { rng.pick(alphabet)[0] } else { b'x' })
                .collect();
            let want = b.iter().position(|&c| c == b'"' || c == b'\\');
            assert_eq!(quote_or_backslash(&b), want, "{:?}", String::from_utf8_lossy(&b));
            if let Some(block) = b.get(..16).and_then(|s| <&[u8; 16]>::try_from(s).ok()) {
                let want = blocks::first_quote_or_backslash_scalar(block);
                assert_eq!(blocks::first_quote_or_backslash(block), want);
                // The word-at-a-time version wasm and other targets use, tested here too.
                assert_eq!(blocks::swar::first_quote_or_backslash(block), want);
            }
        }
    }

    #[test]
    fn classify_equals_the_scalar_reference() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let alphabet: &[&[u8]] = &[b"\"", b"\\", b"[", b"]", b"{", b"}", b"a", b" ", "é".as_bytes(), &[0xff], &[0]];
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            for b in block.iter_mut() {
                *b = rng.pick(alphabet)[0];
            }
            for (o, c) in [(b'[', b']'), (b'{', b'}')] {
                assert_eq!(classify(&block, o, c), classify_scalar(&block, o, c));
            }
            // The flow reader's six masks in one pass, against the byte loop.
            let six = [b'"', b'\\', b'{', b'}', b'[', b']'];
            assert_eq!(bytes_in(&block, six), bytes_in_scalar(&block, six));
            assert_eq!(bytes_in_scalar(&block, six)[..4], {
                let m = classify_scalar(&block, b'{', b'}');
                [m.quote, m.backslash, m.open, m.close]
            });
        }
    }

    #[test]
    fn random_containers_end_where_the_scalar_scan_ends() {
        let mut rng = Rng(42);
        // Pieces that put escapes, quotes and brackets everywhere, also across 64-byte edges.
        let pieces: &[&[u8]] = &[
            b"\"",
            b"\\",
            b"\\\\",
            b"\\\"",
            b"[",
            b"]",
            b"{",
            b"}",
            b"ab",
            b" ",
            b",",
            b"1.5",
            "é€😀".as_bytes(),
            b"\"x\"",
            b"\"a\\\\\"",
            b"\"\\\\\\\"\"",
        ];
        for round in 0..20_000 {
            let (open, close) = if round % 2 == 0 { (b'[', b']') } else { (b'{', b'}') };
            let mut b = vec![open];
            let len = (rng.next() % 300) as usize;
            while b.len() < len {
                b.extend_from_slice(rng.pick(pieces));
            }
            both(&b, open, close);
            // Every prefix too: a container cut by the window's end needs more.
            let cut = (rng.next() as usize) % b.len() + 1;
            both(&b[..cut], open, close);
        }
    }

    #[test]
    fn escapes_and_quotes_at_block_edges() {
        for lead in 0..130 {
            for body in [&b"\\\\\"]"[..], b"\\\"]\"]", b"\\\\\\\"]\"]", b"\"]", b"]"] {
                // `[` + padding + `"` + backslashes and quotes straddling offsets 63/64/127/128.
                let mut b = vec![b'['];
                b.extend(std::iter::repeat_n(b'x', lead));
                b.insert(1, b'"');
                b.extend_from_slice(body);
                b.extend_from_slice(b"\"]");
                both(&b, b'[', b']');
                let mut nested = b"[[".to_vec();
                nested.extend(std::iter::repeat_n(b' ', lead));
                nested.extend_from_slice(b"\"\\\\\",{\"k\":\"]\"}]]");
                both(&nested, b'[', b']');
                assert_eq!(container_end(&nested, b'[', b']'), Some(nested.len()));
            }
        }
    }

    /// The scan alone, fed in random pieces, against a byte loop with the same rule (a
    /// backslash escapes the next byte, in a string or not, unless it is escaped itself).
    #[test]
    fn structure_counts_what_a_byte_loop_counts() {
        let mut rng = Rng(99);
        let pieces: &[&[u8]] = &[b"\"", b"\\", b"\\\\", b"{", b"}", b"[", b"ab", b" ", b",", "é😀".as_bytes()];
        for _ in 0..300 {
            let len = (rng.next() % 2000) as usize;
            let mut b = Vec::new();
            while b.len() < len {
                b.extend_from_slice(rng.pick(pieces));
            }
            let (mut want, mut in_string, mut escaped) = ((0u64, 0u64, 0u64), false, false);
            for &c in &b {
                match c {
                    b'"' if !escaped => (in_string, want.0) = (!in_string, want.0 + 1),
                    b'{' if !in_string => want.1 += 1,
                    b'}' if !in_string => want.2 += 1,
                    _ => {}
                }
                escaped = c == b'\\' && !escaped;
            }
            // Fed in pieces of random length, each one's unscanned rest handed again.
            let (mut s, mut at, mut rest) = (Structure::default(), 0, Vec::new());
            while at < b.len() {
                let to = (at + 1 + (rng.next() % 200) as usize).min(b.len());
                rest.extend_from_slice(&b[at..to]);
                let read = s.blocks(&rest);
                rest.drain(..read);
                at = to;
            }
            s.end(&rest);
            assert_eq!((s.quotes, s.opens, s.closes), want, "{:?}", String::from_utf8_lossy(&b));
        }
    }

    #[test]
    fn a_long_backslash_run_across_blocks() {
        for run in 60..140 {
            let mut b = b"[\"".to_vec();
            b.extend(std::iter::repeat_n(b'\\', run));
            b.extend_from_slice(b"\"]\"]");
            both(&b, b'[', b']');
            // An even run leaves the quote after it unescaped: the string ends there.
            let want = if run % 2 == 0 { run + 4 } else { run + 6 };
            assert_eq!(container_end(&b, b'[', b']'), Some(want), "run {run}");
        }
    }
}
