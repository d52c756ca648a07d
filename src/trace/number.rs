//! The number path: a JSON number literal classified as serde_json classifies it ([`Num`]),
//! and trace timestamps (microseconds with a fraction) read exactly as nanoseconds.

/// A JSON number as serde_json classifies it, before any conversion: what it hands a visitor
/// (`visit_u64` / `visit_i64` / `visit_f64`), and what [`Num::parse`] makes of a literal's
/// bytes. Every number either parser reads becomes a [`Loose`] or an [`Id`] from here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A non-negative integer literal below 2^64.
    U64(u64),
    /// A negative integer literal down to -2^63.
    I64(i64),
    /// Anything else: a fraction or exponent, `-0`, or an integer beyond the two above,
    /// rounded to the nearest `f64` (infinite when it overflows, where serde_json errs).
    F64(f64),
}

impl Num {
    /// Reads a whole JSON number literal exactly as serde_json (with `float_roundtrip`)
    /// does. `None` when the bytes are not a JSON number: leading zeros, `+`, `.5`, `1.`,
    /// `inf`, hex, surrounding spaces.
    pub fn parse(b: &[u8]) -> Option<Num> {
        match Num::parse_prefix(b) {
            Some((n, len)) if len == b.len() => Some(n),
            _ => None,
        }
    }

    /// Reads the JSON number at the start of `b` (the longest that the grammar
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` matches) and returns it with its length.
    /// `None` when `b` does not start with one, or starts with a leading zero followed by a
    /// digit. The caller checks what follows.
    #[inline]
    pub(crate) fn parse_prefix(b: &[u8]) -> Option<(Num, usize)> {
        let neg = b.first() == Some(&b'-');
        let start = neg as usize;
        // The integer part, accumulated while it is scanned (wrapping; checked below when
        // it is too long to be sure).
        let mut m: u64 = 0;
        let mut i = start;
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            m = m.wrapping_mul(10).wrapping_add(d as u64);
            i += 1;
        }
        let n = i - start;
        if n == 0 || (n > 1 && b[start] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = b.get(i) {
            let end = fraction_end(b, i)?;
            let f = match (b[i], n <= 19) {
                (b'.', true) => short_fraction(m, &b[i + 1..end]),
                _ => None,
            };
            return Some((Num::F64(f.map_or_else(|| parse_f64(&b[..end]), |f| if neg { -f } else { f })), end));
        }
        if n > 19 {
            // 10^19 - 1 is the longest that cannot overflow u64.
            let exact = b[start..i].iter().try_fold(0u64, |v, &c| v.checked_mul(10)?.checked_add((c - b'0') as u64));
            match exact {
                Some(v) => m = v,
                None => return Some((Num::F64(parse_f64(&b[..i])), i)),
            }
        }
        let num = if !neg {
            Num::U64(m)
        } else if m == 0 {
            Num::F64(-0.0)
        } else if m <= 1 << 63 {
            Num::I64((m as i64).wrapping_neg())
        } else {
            // serde_json: `-(significand as f64)`, the same correctly rounded value.
            Num::F64(-(m as f64))
        };
        Some((num, i))
    }
}

/// The length of the JSON number at the start of `b`, checking only the grammar (as
/// serde_json does for a `RawValue`): `1e400` passes. `None` when `b` does not start with one.
#[inline]
pub(crate) fn number_len(b: &[u8]) -> Option<usize> {
    let start = (b.first() == Some(&b'-')) as usize;
    let i = start + digits(b, start);
    if i == start || (i - start > 1 && b[start] == b'0') {
        return None;
    }
    match b.get(i) {
        Some(b'.' | b'e' | b'E') => fraction_end(b, i),
        _ => Some(i),
    }
}

/// The end of a number's fraction and exponent, `(\.[0-9]+)?([eE][+-]?[0-9]+)?`, starting
/// at `i` (just after the integer part).
#[inline]
fn fraction_end(b: &[u8], mut i: usize) -> Option<usize> {
    if b.get(i) == Some(&b'.') {
        let n = digits(b, i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let n = digits(b, i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(i)
}

/// The number of ASCII digits in `b` from `i` on.
#[inline(always)]
fn digits(b: &[u8], i: usize) -> usize {
    b.get(i..).map_or(0, |t| t.iter().take_while(|c| c.is_ascii_digit()).count())
}

/// `int.frac` as the nearest f64, where that is one exact division (Clinger's fast path): the
/// digits, without the point, below 2^53 and at most 22 after it, so that both the digits and
/// the power of ten are exact f64s and the one correctly rounded division is the nearest value,
/// as the full parse gives. `frac` is the digits after the point, up to the number's end: None
/// when it holds an exponent, or the number is beyond the fast path. Kineto's fractions
/// (`"blocks per SM": 1.2`) are this short; the full parse (a UTF-8 check, then the standard
/// library's) costs several times as much.
#[inline]
fn short_fraction(int: u64, frac: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    const EXACT: u64 = 1 << 53;
    if int >= EXACT || frac.len() >= POW10.len() {
        return None;
    }
    let mut m = int;
    for &c in frac {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None; // an exponent
        }
        m = m.checked_mul(10)?.checked_add(d as u64)?;
        if m >= EXACT {
            return None;
        }
    }
    Some(m as f64 / POW10[frac.len()])
}

/// The nearest f64 of a literal that matched the number grammar (Rust's parser rounds
/// correctly, as serde_json's `float_roundtrip` does).
#[cold]
fn parse_f64(b: &[u8]) -> f64 {
    // Both fail only on bytes outside the grammar, which the callers have ruled out.
    std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN)
}

/// 10^n for the digit runs below.
const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// The eight bytes of `b` from `at`, the first in the lowest byte; past the end of `b`, its
/// last bytes followed by spaces (not digits).
#[inline(always)]
fn padded_word(b: &[u8], at: usize) -> u64 {
    match b.get(at..at.saturating_add(8)) {
        Some(w) => u64::from_le_bytes(w.try_into().unwrap_or_default()),
        None => short_word(b.get(at..).unwrap_or(&[])),
    }
}

/// [`padded_word`] of the fewer than eight bytes `rest`: two loads that overlap in the middle
/// (four bytes each, or two), not a loop over the bytes (a copy into a buffer of spaces became
/// a memcpy call). Most times end in such a short word (`9.0`, the last digits of
/// `1000052.611`): the byte loop was 7% of the time's reading.
#[inline(always)]
fn short_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let data = match n {
        4.. => {
            let lo = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as u64;
            let hi = u32::from_le_bytes([rest[n - 4], rest[n - 3], rest[n - 2], rest[n - 1]]) as u64;
            lo | (hi << (8 * (n - 4)))
        }
        2.. => {
            let lo = u16::from_le_bytes([rest[0], rest[1]]) as u64;
            let hi = u16::from_le_bytes([rest[n - 2], rest[n - 1]]) as u64;
            lo | (hi << (8 * (n - 2)))
        }
        1 => rest[0] as u64,
        _ => 0,
    };
    // The bytes read kept, spaces above them (n < 8).
    let kept = (1u64 << (8 * n.min(7))) - 1;
    (data & kept) | ((ONES * b' ' as u64) & !kept)
}

const ONES: u64 = 0x0101_0101_0101_0101;

/// How many of the word's bytes, from its first, are ASCII digits (0-8). A byte's value
/// after `^ '0'` is its digit when it is one; adding 0x76 sets the top bit of any value above
/// 9 (without a carry out of a byte below 0x80; a carry out of a larger byte runs only into
/// bytes after the first bad one, which the count ignores).
#[inline(always)]
fn digit_run(w: u64) -> usize {
    let t = w ^ (ONES * b'0' as u64);
    let bad = (t.wrapping_add(ONES * 0x76) | t) & (ONES * 0x80);
    (bad.trailing_zeros() / 8) as usize
}

/// The value of the word's first `n` bytes (0-8), which [`digit_run`] found to be digits, by
/// simdjson's eight-digit reduction: the digits are moved to the word's top, the bytes below
/// them made zeros (leading zero digits), and pairs, fours and the eight are combined by three
/// multiplies instead of eight.
#[inline(always)]
fn leading_digits(w: u64, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    let t = (w ^ (ONES * b'0' as u64)) << (64 - 8 * n as u32);
    let t = t.wrapping_mul(10).wrapping_add(t >> 8);
    let lo = (t & 0x0000_00FF_0000_00FF).wrapping_mul(100 + (1_000_000 << 32));
    let hi = ((t >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32));
    lo.wrapping_add(hi) >> 32
}

/// Kineto's form of a time, `ddd` or `ddd.ddd` (up to 16 digits, at most three after the
/// point, nothing around them), read eight digits at a time; None for any other form, which
/// [`parse_micros`] then reads (the same value wherever both read one).
#[inline]
fn plain_micros(b: &[u8]) -> Option<i64> {
    let w = padded_word(b, 0);
    let n = digit_run(w);
    if n == 0 {
        return None;
    }
    let mut int = leading_digits(w, n);
    let mut i = n;
    if n == 8 {
        let w2 = padded_word(b, 8);
        let n2 = digit_run(w2);
        if n2 == 8 && b.get(16).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        int = int * POW10[n2] + leading_digits(w2, n2);
        i += n2;
    }
    let frac = match &b[i..] {
        [] => 0,
        [b'.', d @ ..] if !d.is_empty() && d.len() <= 3 && d.iter().all(u8::is_ascii_digit) => {
            d.iter().zip([100, 10, 1]).map(|(&c, s)| (c - b'0') as i64 * s).sum::<i64>()
        }
        _ => return None,
    };
    // 16 digits may not fit once in nanoseconds; the checked reader decides those.
    let int = i64::try_from(int).ok().filter(|&v| v <= (i64::MAX - 1000) / 1000)?;
    Some(int * 1000 + frac)
}

/// Parses a JSON number (or numeric string) of microseconds into integer nanoseconds,
/// exactly: `1606910596297023.123` must not lose its fraction the way an f64 would.
pub fn micros_to_nanos(raw: &[u8]) -> Option<i64> {
    if let Some(ns) = plain_micros(raw) {
        return Some(ns);
    }
    let text = raw.trim_ascii();
    let text = text.strip_prefix(b"\"").and_then(|t| t.strip_suffix(b"\"")).unwrap_or(text).trim_ascii();
    parse_micros(text)
}

pub(crate) fn parse_micros(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let mut int: i64 = 0;
    let mut i = 0;
    while i < digits.len() && digits[i].is_ascii_digit() {
        let d = (digits[i] - b'0') as i64;
        // 18 digits cannot overflow, and an overflow-checked multiply is a call into a
        // 128-bit multiply on wasm32: checked only past them.
        int = if i < 18 { int * 10 + d } else { int.checked_mul(10)?.checked_add(d)? };
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut frac_ns: i64 = 0;
    if i < digits.len() && digits[i] == b'.' {
        i += 1;
        let mut scale = 100;
        let mut round_up = false;
        let mut first_extra = true;
        while i < digits.len() && digits[i].is_ascii_digit() {
            let d = (digits[i] - b'0') as i64;
            if scale > 0 {
                frac_ns += d * scale;
                scale /= 10;
            } else if first_extra {
                // Round to the nearest nanosecond on the first digit past it.
                round_up = d >= 5;
                first_extra = false;
            }
            i += 1;
        }
        frac_ns += round_up as i64;
    }
    if i < digits.len() {
        // Exponent or other forms: rare; fall back to f64 (still nanosecond-exact for any
        // duration or relative timestamp below ~100 days).
        let s = std::str::from_utf8(b).ok()?;
        let v: f64 = s.parse().ok()?;
        let ns = v * 1000.0;
        return if ns.is_finite() && ns.abs() < 9.2e18 { Some(ns.round() as i64) } else { None };
    }
    // frac_ns <= 1000 (999 rounded up).
    let ns = if int <= (i64::MAX - 1000) / 1000 {
        int * 1000 + frac_ns
    } else {
        int.checked_mul(1000)?.checked_add(frac_ns)?
    };
    Some(if neg { -ns } else { ns })
}

#[cfg(test)]
#[path = "number_tests.rs"]
mod tests;
