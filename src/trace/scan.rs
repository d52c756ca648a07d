//! A hand-written parser for one trace event object: the hot path of the whole tool.
//!
//! serde_json spends most of its time on the fields we throw away (Kineto's `args` carry
//! shapes, strides, grids, ...). This parser reads the fields the analysis needs and skips
//! everything else with memchr-based string skipping and bracket counting, in one pass over
//! the bytes. Skipped values are checked only for their structure (balanced brackets,
//! terminated strings), not for full JSON grammar; anything it cannot read as an event is
//! reported so the caller can fall back to serde_json for an exact verdict and message.
//! The serde implementation in `event.rs` stays as the reference; tests compare the two on
//! every real trace.

use super::event::{Args, Id, Loose, RawEvent, Text};
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

#[inline]
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t')
}

impl<'a> Cur<'a> {
    #[inline]
    fn ws(&mut self) -> R<u8> {
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if !is_ws(c) {
                return Ok(c);
            }
            self.i += 1;
        }
        Err(Miss::NeedMore)
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

    /// A string starting at the current `"`: borrowed when it has no escapes.
    fn string(&mut self) -> R<Text<'a>> {
        debug_assert_eq!(self.b[self.i], b'"');
        let start = self.i + 1;
        match memchr::memchr2(b'"', b'\\', &self.b[start..]) {
            None => Err(Miss::NeedMore),
            Some(n) if self.b[start + n] == b'"' => {
                self.i = start + n + 1;
                Ok(Text(Cow::Borrowed(&self.b[start..start + n])))
            }
            Some(_) => {
                // Escapes: find the end, then let serde_json decode the string exactly.
                self.skip_string()?;
                let raw = &self.b[start - 1..self.i];
                match serde_json::from_slice::<Cow<str>>(raw) {
                    Ok(s) => Ok(Text(Cow::Owned(s.into_owned().into_bytes()))),
                    Err(_) => Err(Miss::Fallback),
                }
            }
        }
    }

    /// Skips a string starting at the current `"`.
    #[inline]
    fn skip_string(&mut self) -> R<()> {
        let mut j = self.i + 1;
        loop {
            match memchr::memchr2(b'"', b'\\', &self.b[j..]) {
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
                b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t' => {
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
                // only this kind (outside strings) finds its end: three needles for memchr.
                let close = if open == b'{' { b'}' } else { b']' };
                let mut depth = 0usize;
                loop {
                    let Some(n) = memchr::memchr3(b'"', open, close, &self.b[self.i..]) else {
                        return Err(Miss::NeedMore);
                    };
                    self.i += n;
                    let c = self.b[self.i];
                    if c == b'"' {
                        self.skip_string()?;
                    } else if c == open {
                        depth += 1;
                        self.i += 1;
                    } else {
                        depth -= 1;
                        self.i += 1;
                        if depth == 0 {
                            return Ok(());
                        }
                    }
                }
            }
            _ => self.scalar().map(|_| ()),
        }
    }

    /// A value kept as raw JSON text (for `ts`, `dur` and the SDPA shape arguments).
    fn raw(&mut self) -> R<&'a [u8]> {
        let start = self.i;
        self.skip_value()?;
        Ok(&self.b[start..self.i])
    }

    fn number(&mut self) -> R<Option<Loose>> {
        match self.ws()? {
            // Numbers written as strings ("0x0", "12"), read as `Loose` reads them.
            b'"' => {
                Ok(Some(Loose::from_text(&self.string()?.to_str())))
            }
            b'{' | b'[' => Err(Miss::Fallback),
            _ => {
                let s = self.scalar()?;
                Ok(match s {
                    b"null" => None,
                    b"true" => Some(Loose::Int(1)),
                    b"false" => Some(Loose::Int(0)),
                    _ => {
                        if let Some(i) = small_int(s) {
                            return Ok(Some(Loose::Int(i)));
                        }
                        let t = std::str::from_utf8(s).map_err(|_| Miss::Fallback)?;
                        match t.parse::<i64>() {
                            Ok(i) => Some(Loose::Int(i)),
                            Err(_) => Some(Loose::Float(t.parse::<f64>().map_err(|_| Miss::Fallback)?)),
                        }
                    }
                })
            }
        }
    }

    fn id(&mut self) -> R<Id<'a>> {
        match self.ws()? {
            b'"' => {
                let t = self.string()?;
                Ok(Id::Str(match t.0 {
                    Cow::Borrowed(b) => Cow::Borrowed(std::str::from_utf8(b).map_err(|_| Miss::Fallback)?),
                    Cow::Owned(v) => Cow::Owned(String::from_utf8(v).map_err(|_| Miss::Fallback)?),
                }))
            }
            _ => Ok(match self.number()? {
                None => Id::Missing,
                Some(Loose::Int(i)) => Id::Int(i),
                Some(Loose::Float(f)) => Id::Int(f as i64),
                Some(Loose::Null) => Id::Missing,
            }),
        }
    }

    fn text(&mut self) -> R<Text<'a>> {
        if self.ws()? == b'"' {
            self.string()
        } else {
            Err(Miss::Fallback)
        }
    }

    /// Iterates the members of an object: `f(cursor, key)` must consume the value.
    fn object(&mut self, mut f: impl FnMut(&mut Self, &[u8]) -> R<()>) -> R<()> {
        self.expect(b'{')?;
        if self.ws()? == b'}' {
            self.i += 1;
            return Ok(());
        }
        loop {
            if self.ws()? != b'"' {
                return Err(Miss::Fallback);
            }
            let key = self.string()?;
            self.expect(b':')?;
            self.ws()?;
            f(self, key.bytes())?;
            match self.ws()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(Miss::Fallback),
            }
        }
    }
}

/// Plain decimal integers (the common case) without going through `str::parse`.
#[inline]
fn small_int(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first()? {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    Some(if neg { -v } else { v })
}

fn args<'a>(c: &mut Cur<'a>) -> R<Option<Args<'a>>> {
    if c.ws()? == b'n' {
        return c.scalar().and_then(|s| if s == b"null" { Ok(None) } else { Err(Miss::Fallback) });
    }
    let mut a = Args::default();
    c.object(|c, key| {
        match key {
            b"correlation" => a.correlation = c.number()?,
            b"External id" | b"external id" => a.external_id = c.number()?,
            b"device" => a.device = c.number()?,
            b"stream" => a.stream = c.number()?,
            b"blocks per SM" => a.blocks_per_sm = c.number()?,
            b"est. achieved occupancy %" => a.occupancy_pct = c.number()?,
            b"Input Dims" | b"Input dims" => a.input_dims = Some(c.raw()?),
            b"Input type" => a.input_type = Some(c.raw()?),
            b"Concrete Inputs" => a.concrete_inputs = Some(c.raw()?),
            _ => c.skip_value()?,
        }
        Ok(())
    })?;
    Ok(Some(a))
}

/// Parses the event object at the start of `window`; returns it and the bytes consumed.
pub fn event(window: &[u8]) -> Result<(RawEvent<'_>, usize), Miss> {
    let mut c = Cur { b: window, i: 0 };
    let mut ev = RawEvent::default();
    c.object(|c, key| {
        match key {
            b"ph" => ev.ph = c.text()?,
            b"cat" => ev.cat = c.text()?,
            b"name" => ev.name = c.text()?,
            b"pid" => ev.pid = c.id()?,
            b"tid" => ev.tid = c.id()?,
            b"ts" => ev.ts = Some(c.raw()?),
            b"dur" => ev.dur = Some(c.raw()?),
            b"args" => ev.args = args(c)?,
            _ => c.skip_value()?,
        }
        Ok(())
    })?;
    Ok((ev, c.i))
}
