//! A hand-written parser for one trace event object: the hot path of the whole tool.
//!
//! serde_json spends most of its time on the fields we throw away (Kineto's `args` carry
//! shapes, strides, grids, ...). This parser reads the fields the analysis needs and skips
//! everything else with memchr-based string skipping and bracket counting (64 bytes at a time
//! for containers: `structural.rs`), in one pass over
//! the bytes. Skipped values are checked only for their structure (balanced brackets,
//! terminated strings), not for full JSON grammar; anything it cannot read as an event is
//! reported so the caller can fall back to serde_json for an exact verdict and message.
//! The serde implementation in `event/` stays as the reference; tests compare the two on
//! every real trace and on hand-made edge cases.
//!
//! What a member means is not decided here: keys are looked up in `event/mod.rs`'s key tables
//! (`event_member` / `arg_member`, the same functions the serde visitors call), and numbers
//! go through the same `Num` -> `Loose` / `Id` conversions. This file only reads the JSON
//! syntax, and falls back wherever serde_json would disagree on a value it reads (a number
//! outside the JSON grammar or beyond f64, a boolean pid, a numeric string with raw control
//! characters or invalid UTF-8).

use super::event::{arg_member, event_member, number_len, Args, Id, Loose, Num, RawEvent, Text, Values};
use super::runs::{is_delim, is_ws, quote_or_backslash, spaces};
use std::borrow::Cow;

/// Why an event could not be read here.
#[derive(Debug, PartialEq, Eq)]
pub enum Miss {
    /// The window ends inside the value: read more input.
    NeedMore,
    /// Something this parser does not handle; let serde_json decide.
    Fallback,
}

type R<T> = Result<T, Miss>;

struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cur<'a> {
    /// The next byte that is not whitespace. Most whitespace inside an event is the one space
    /// Kineto writes after a `:` or `,`, so the byte at hand and the one after it are looked at
    /// before a loop (the loop alone was 7% of a native read's instructions).
    #[inline(always)]
    fn ws(&mut self) -> R<u8> {
        match self.b.get(self.i) {
            Some(&c) if !is_ws(c) => Ok(c),
            Some(b' ') => match self.b.get(self.i + 1) {
                Some(&c) if !is_ws(c) => {
                    self.i += 1;
                    Ok(c)
                }
                _ => self.ws_slow(),
            },
            _ => self.ws_slow(),
        }
    }

    /// Indented files (Kineto breaks the line before `ts` and `args`; `json.dump(indent=...)`
    /// before every member): after a line break the indentation's spaces are counted eight at a
    /// time, not looked at one by one.
    #[inline(never)]
    fn ws_slow(&mut self) -> R<u8> {
        loop {
            match *self.b.get(self.i).ok_or(Miss::NeedMore)? {
                b'\n' => self.i += 1 + spaces(&self.b[self.i + 1..]),
                b' ' | b'\r' | b'\t' => self.i += 1,
                c => return Ok(c),
            }
        }
    }

    #[inline]
    fn expect(&mut self, c: u8) -> R<()> {
        if self.ws()? == c {
            self.i += 1;
            Ok(())
        } else {
            Err(Miss::Fallback)
        }
    }

    /// A string starting at the current `"`: borrowed when it has no escapes. Inlined where
    /// it is read (keys, text values), in the page's wasm too: there this inlining (with
    /// `text`'s and `num`'s) once made an older Firefox ESR 5-11% slower; in ESR 153.8 and
    /// Chromium 156 it makes both about 7% faster (500 MB, docs/performance.md).
    #[inline(always)]
    fn string(&mut self) -> R<Text<'a>> {
        let mut t = Text::default();
        self.string_into(&mut t)?;
        Ok(t)
    }

    /// [`Cur::string`] stored into `into` (see [`Values::text`] for why a value is stored, not
    /// returned).
    #[inline(always)]
    fn string_into(&mut self, into: &mut Text<'a>) -> R<()> {
        debug_assert_eq!(self.b[self.i], b'"');
        let start = self.i + 1;
        match quote_or_backslash(&self.b[start..]) {
            None => return Err(Miss::NeedMore),
            Some(n) if self.b[start + n] == b'"' => {
                self.i = start + n + 1;
                *into = Text(Cow::Borrowed(&self.b[start..start + n]));
            }
            Some(_) => *into = self.escaped_string()?,
        }
        Ok(())
    }

    /// A string with escapes, starting at the current `"`: its end found, then decoded by
    /// serde_json exactly. Out of line: rare in traces.
    #[inline(never)]
    fn escaped_string(&mut self) -> R<Text<'a>> {
        let start = self.i;
        self.skip_string()?;
        match serde_json::from_slice::<Cow<str>>(&self.b[start..self.i]) {
            Ok(s) => Ok(Text(Cow::Owned(s.into_owned().into_bytes()))),
            Err(_) => Err(Miss::Fallback),
        }
    }

    /// Skips a string starting at the current `"`.
    #[inline]
    fn skip_string(&mut self) -> R<()> {
        let mut j = self.i + 1;
        loop {
            match quote_or_backslash(&self.b[j..]) {
                None => return Err(Miss::NeedMore),
                Some(n) => {
                    j += n;
                    if self.b[j] == b'"' {
                        self.i = j + 1;
                        return Ok(());
                    }
                    j += 2; // the backslash and the escaped byte
                    if j > self.b.len() {
                        return Err(Miss::NeedMore);
                    }
                }
            }
        }
    }

    /// The bytes of a number, literal or other scalar (up to the next delimiter).
    #[inline]
    fn scalar(&mut self) -> R<&'a [u8]> {
        let start = self.i;
        while self.i < self.b.len() {
            match self.b[self.i] {
                c if is_delim(c) => {
                    if self.i == start {
                        return Err(Miss::Fallback);
                    }
                    return Ok(&self.b[start..self.i]);
                }
                b'"' | b'{' | b'[' | b':' => return Err(Miss::Fallback),
                _ => self.i += 1,
            }
        }
        Err(Miss::NeedMore)
    }

    /// Skips any value.
    fn skip_value(&mut self) -> R<()> {
        match self.ws()? {
            b'"' => self.skip_string(),
            open @ (b'{' | b'[') => {
                // In valid JSON, brackets of the other kind nest inside this value, so counting
                // only this kind (outside strings) finds its end: 64 bytes at a time.
                let close = if open == b'{' { b'}' } else { b']' };
                let n = super::structural::container_end(&self.b[self.i..], open, close).ok_or(Miss::NeedMore)?;
                self.i += n;
                Ok(())
            }
            _ => self.scalar().map(|_| ()),
        }
    }

    /// A value kept as raw JSON text (for `ts`, `dur` and the SDPA shape arguments). A
    /// scalar must be a JSON number or literal, as serde_json's `RawValue` checks (only the
    /// grammar: `1e400` is kept).
    fn raw(&mut self) -> R<&'a [u8]> {
        let first = self.ws()?;
        let start = self.i;
        match first {
            b'"' | b'{' | b'[' => {
                self.skip_value()?;
                // serde_json's RawValue is a `str`: valid UTF-8 only (else it decides). Shapes
                // and type lists are ASCII: checked so first, a few words for the whole value,
                // where `from_utf8` cost about 135 instructions a shape list.
                let text = &self.b[start..self.i];
                if !text.is_ascii() && std::str::from_utf8(text).is_err() {
                    return Err(Miss::Fallback);
                }
            }
            _ => match number_len(&self.b[start..]) {
                Some(n) if self.b.get(start + n).is_some_and(|&c| is_delim(c)) => self.i += n,
                _ => {
                    if !matches!(self.scalar()?, b"null" | b"true" | b"false") {
                        return Err(Miss::Fallback);
                    }
                }
            },
        }
        Ok(&self.b[start..self.i])
    }

    /// A string value as serde_json's `visit_str` would see it: valid UTF-8 without raw
    /// control characters (else serde_json decides).
    fn str_value(&mut self) -> R<Cow<'a, str>> {
        match self.string()?.0 {
            Cow::Borrowed(b) if b.iter().all(|&c| c >= 0x20) => {
                std::str::from_utf8(b).map(Cow::Borrowed).map_err(|_| Miss::Fallback)
            }
            Cow::Borrowed(_) => Err(Miss::Fallback),
            // Decoded by serde_json as a `str`, so already checked.
            Cow::Owned(v) => String::from_utf8(v).map(Cow::Owned).map_err(|_| Miss::Fallback),
        }
    }

    /// A number literal (not a string, not `null`/`true`/`false`) as serde_json classifies
    /// it; anything serde_json rejects, including `1e400` ("number out of range"), goes back
    /// to it.
    #[inline(always)]
    fn num(&mut self) -> R<Num> {
        match Num::parse_prefix(&self.b[self.i..]) {
            Some((num, n)) if self.b.get(self.i + n).is_some_and(|&c| is_delim(c)) => {
                if let Num::F64(f) = num {
                    if !f.is_finite() {
                        return Err(Miss::Fallback);
                    }
                }
                self.i += n;
                Ok(num)
            }
            // Not a number followed by a delimiter: cut short by the window's end (the
            // scalar then needs more), or not a number.
            _ => self.scalar().and(Err(Miss::Fallback)),
        }
    }

    /// A [`Loose`] number, as `Option<Loose>`'s `Deserialize` reads it.
    fn number(&mut self, into: &mut Option<Loose>) -> R<()> {
        // Each arm stores its value itself (see `Values::text`).
        match self.ws()? {
            b'-' | b'0'..=b'9' => {
                let n = self.num()?;
                *into = Some(Loose::from(n));
            }
            b'"' => {
                let s = self.str_value()?;
                *into = Some(Loose::from_text(&s));
            }
            b'n' => *into = self.literal(b"null", None)?,
            b't' => *into = self.literal(b"true", Some(Loose::from(true)))?,
            b'f' => *into = self.literal(b"false", Some(Loose::from(false)))?,
            _ => return Err(Miss::Fallback),
        }
        Ok(())
    }

    /// An [`Id`], as its `Deserialize` reads it (booleans are an error there).
    fn id(&mut self, into: &mut Id<'a>) -> R<()> {
        // Each arm stores its value itself (see `Values::text`).
        match self.ws()? {
            b'-' | b'0'..=b'9' => {
                // The old value dropped first: the number is then stored without a copy
                // through the stack around the drop (half of `id`'s time, sampled).
                *into = Id::Missing;
                let n = self.num()?;
                *into = Id::from(n);
            }
            b'"' => {
                let s = self.str_value()?;
                *into = Id::Str(s);
            }
            b'n' => *into = self.literal(b"null", Id::Missing)?,
            _ => return Err(Miss::Fallback),
        }
        Ok(())
    }

    /// The literal `word`, giving `v`.
    #[inline]
    fn literal<T>(&mut self, word: &[u8], v: T) -> R<T> {
        if self.scalar()? == word {
            Ok(v)
        } else {
            Err(Miss::Fallback)
        }
    }

    /// A string value, stored into `into`.
    #[inline(always)]
    fn text(&mut self, into: &mut Text<'a>) -> R<()> {
        if self.ws()? != b'"' {
            return Err(Miss::Fallback);
        }
        self.string_into(into)
    }

    /// An `args` object, or `null`.
    fn args(&mut self, into: &mut Option<Args<'a>>) -> R<()> {
        if self.ws()? == b'n' {
            *into = None;
            return self.literal(b"null", ());
        }
        let a = into.insert(Args::default());
        self.object(|c, key| arg_member(a, key, c))
    }

    /// Iterates the members of an object: `f(cursor, key)` must consume the value.
    fn object(&mut self, mut f: impl FnMut(&mut Self, &[u8]) -> R<()>) -> R<()> {
        self.expect(b'{')?;
        if self.ws()? == b'}' {
            self.i += 1;
            return Ok(());
        }
        if self.ws()? != b'"' {
            return Err(Miss::Fallback);
        }
        loop {
            let key = self.string()?;
            // Kineto writes `": "` after a key and `, "` between members: each is stepped over
            // at once (byte patterns, not a slice comparison: that is a memcmp call in wasm);
            // any other spacing goes through `ws`, as does the end of a window.
            if let Some([b':', b' ']) = self.b.get(self.i..self.i + 2) {
                self.i += 2;
            } else {
                self.expect(b':')?;
            }
            // `f` reads the value through a reader that skips whitespace itself.
            f(self, key.bytes())?;
            if let Some([b',', b' ', b'"']) = self.b.get(self.i..self.i + 3) {
                self.i += 2;
                continue;
            }
            match self.ws()? {
                b',' => {
                    self.i += 1;
                    // An indented file: a line break and spaces, then the key (here rather than
                    // through `ws`, whose slow path does the same: 1300-1333 against 1263-1302
                    // MB/s on an indent=2 file, `probe memory`).
                    if self.b.get(self.i) == Some(&b'\n') {
                        self.i += 1 + spaces(&self.b[self.i + 1..]);
                    }
                    if self.ws()? != b'"' {
                        return Err(Miss::Fallback);
                    }
                }
                b'}' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Miss::Fallback),
            }
        }
    }
}

/// The scanner reads member values through the same table and rules as the serde reference.
impl<'a> Values<'a> for Cur<'a> {
    type Error = Miss;
    #[inline(always)]
    fn text(&mut self, into: &mut Text<'a>) -> R<()> {
        Cur::text(self, into)
    }
    #[inline(always)]
    fn id(&mut self, into: &mut Id<'a>) -> R<()> {
        Cur::id(self, into)
    }
    #[inline(always)]
    fn number(&mut self, into: &mut Option<Loose>) -> R<()> {
        Cur::number(self, into)
    }
    #[inline(always)]
    fn raw(&mut self, into: &mut Option<&'a [u8]>) -> R<()> {
        *into = Some(Cur::raw(self)?);
        Ok(())
    }
    #[inline(always)]
    fn args(&mut self, into: &mut Option<Args<'a>>) -> R<()> {
        Cur::args(self, into)
    }
    #[inline(always)]
    fn skip(&mut self) -> R<()> {
        self.skip_value()
    }
}

/// Parses the event object at the start of `window` into `ev` (a fresh one: in place, as it
/// is large); returns the bytes consumed.
pub fn event<'a>(window: &'a [u8], ev: &mut RawEvent<'a>) -> Result<usize, Miss> {
    let mut c = Cur { b: window, i: 0 };
    c.object(|c, key| event_member(ev, key, c))?;
    Ok(c.i)
}
