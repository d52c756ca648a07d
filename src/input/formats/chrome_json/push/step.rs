//! The state machine's steps: one transition per call, from the state and the bytes ahead.

use super::*;

impl PushReader {
    pub(super) fn invalid(&mut self, at: u64, message: String) -> Step {
        self.out.end = End::Invalid { at, message };
        self.state = State::Stopped;
        Step::Stop
    }

    pub(super) fn syntax(&mut self, at: u64, window: &[u8], e: &serde_json::Error) -> Step {
        let at = at + error_offset(window, e) as u64;
        self.invalid(at, strip_position(&e.to_string()))
    }

    /// One step from `w[*i..]`; `base` is the stream offset of `w[0]`. The hot path is an
    /// event read by the scanner in `State::Events`; the other states (the top level, a key,
    /// metadata, a skipped value) are stepped through a few times per file, out of line.
    pub(super) fn step<S: Sink>(&mut self, w: &[u8], i: &mut usize, base: u64, eof: bool, sink: &mut S) -> Step {
        if let State::Start { bom_checked: false } = self.state {
            if let Some(step) = self.skip_bom(&w[*i..], i, eof) {
                return step;
            }
        }
        // Whitespace between values is consumed in every state.
        match w[*i..].iter().position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t')) {
            Some(n) => *i += n,
            None => {
                *i = w.len();
                return Step::NeedMore;
            }
        }
        let at = base + *i as u64;
        let window = &w[*i..];
        let b = window[0];
        match &mut self.state {
            State::Start { .. } => self.top_level(window, i, at, eof),
            State::Object => self.key(window, i, at, eof),
            State::Colon(_) => self.colon(b, i, at),
            State::Value(_) => self.value(window, i, at, eof, sink),
            State::Events { in_object, after_comma } => {
                match b {
                    b']' => {
                        if *after_comma {
                            self.out.stray_commas += 1;
                        }
                        *i += 1;
                        self.state = if *in_object { State::Object } else { State::After };
                        return Step::Next;
                    }
                    b',' => {
                        if *after_comma {
                            self.out.stray_commas += 1;
                        }
                        *after_comma = true;
                        *i += 1;
                        return Step::Next;
                    }
                    _ => *after_comma = false,
                }
                let in_object = *in_object;
                // The fast paths (a flow event read for its phase and category alone, else the
                // event scanner); serde_json decides whatever they cannot read.
                let mut ev = RawEvent::default();
                let read = flow::flow(window, &mut ev).unwrap_or_else(|| scan::event(window, &mut ev));
                match read {
                    Ok(n) => {
                        sink.event(&ev, at);
                        self.out.events += 1;
                        *i += n;
                        Step::Next
                    }
                    Err(scan::Miss::NeedMore) if !eof => Step::NeedMore,
                    Err(_) => self.event_by_serde(window, i, at, eof, in_object, sink),
                }
            }
            State::Skip { .. } => self.skip(window, i, at, eof, sink),
            State::After => {
                self.out.trailing_bytes = true;
                *i = w.len();
                Step::NeedMore
            }
            State::Cut | State::Fatal(_) | State::Stopped => Step::Stop,
        }
    }

    /// Skips a UTF-8 byte-order mark at the very start; `Some` when more bytes are needed to
    /// tell one.
    #[cold]
    #[inline(never)]
    fn skip_bom(&mut self, window: &[u8], i: &mut usize, eof: bool) -> Option<Step> {
        const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];
        if !eof && window.len() < 3 && BOM.starts_with(window) {
            return Some(Step::NeedMore);
        }
        self.state = State::Start { bom_checked: true };
        if window.starts_with(BOM) {
            *i += 3;
        }
        None
    }

    /// The top-level value: an object (with `traceEvents`), a bare array of events, or not a
    /// trace.
    #[cold]
    #[inline(never)]
    fn top_level(&mut self, window: &[u8], i: &mut usize, at: u64, eof: bool) -> Step {
        let b = window[0];
        // Room to tell a literal from a word (`false` and a delimiter).
        if !eof && window.len() < 6 && !matches!(b, b'[' | b'{' | b'"' | b'-' | b'0'..=b'9') {
            return Step::NeedMore;
        }
        let fatal = match b {
            b'[' => {
                *i += 1;
                self.out.found_events = true;
                self.state = State::Events { in_object: false, after_comma: false };
                return Step::Next;
            }
            b'{' => {
                *i += 1;
                self.state = State::Object;
                return Step::Next;
            }
            b'"' => Fatal::WrongTopLevel { kind: "a string" },
            b'-' | b'0'..=b'9' => Fatal::WrongTopLevel { kind: "a number" },
            // Only a real literal is "a boolean": a text file starting with "these"
            // is not JSON.
            _ if literal_ahead(window, &[b"true", b"false"]) => Fatal::WrongTopLevel { kind: "a boolean" },
            _ if literal_ahead(window, &[b"null"]) => Fatal::WrongTopLevel { kind: "null" },
            other => Fatal::NotJson { at, found: describe_byte(other) },
        };
        self.state = State::Fatal(fatal);
        Step::Stop
    }

    /// In the top-level object: the next key, a `,`, or the object's end.
    #[cold]
    #[inline(never)]
    fn key(&mut self, window: &[u8], i: &mut usize, at: u64, eof: bool) -> Step {
        match window[0] {
            b'}' => {
                *i += 1;
                self.state = State::After;
                Step::Next
            }
            b',' => {
                *i += 1;
                Step::Next
            }
            b'"' => match parse_one::<Cow<str>>(window, eof) {
                Parsed::Value(k, n) => {
                    *i += n;
                    self.state = State::Colon(k.into_owned());
                    Step::Next
                }
                Parsed::NeedMore => Step::NeedMore,
                Parsed::DataError(m) => self.invalid(at, m),
                Parsed::Syntax(e) => self.syntax(at, window, &e),
            },
            other => self.invalid(at, format!("expected a key, found {}", describe_byte(other))),
        }
    }

    /// After a key: its `:`.
    #[cold]
    #[inline(never)]
    fn colon(&mut self, b: u8, i: &mut usize, at: u64) -> Step {
        let State::Colon(key) = &mut self.state else { unreachable!("called in State::Colon") };
        if b == b':' {
            *i += 1;
            self.state = State::Value(std::mem::take(key));
            Step::Next
        } else {
            let m = format!("expected ':' after \"{key}\", found {}", describe_byte(b));
            self.invalid(at, m)
        }
    }

    /// A top-level key's value: the events array for `traceEvents`, else metadata for the sink.
    #[cold]
    #[inline(never)]
    fn value<S: Sink>(&mut self, window: &[u8], i: &mut usize, at: u64, eof: bool, sink: &mut S) -> Step {
        let State::Value(key) = &self.state else { unreachable!("called in State::Value") };
        if key == "traceEvents" && window[0] == b'[' {
            *i += 1;
            self.out.found_events = true;
            self.state = State::Events { in_object: true, after_comma: false };
            return Step::Next;
        }
        match parse_one::<&RawValue>(window, eof) {
            Parsed::Value(v, n) => {
                sink.metadata(key, v);
                *i += n;
                self.state = State::Object;
                Step::Next
            }
            Parsed::NeedMore => Step::NeedMore,
            Parsed::DataError(m) => self.invalid(at, m),
            Parsed::Syntax(e) => self.syntax(at, window, &e),
        }
    }

    /// An event the scanner could not read: serde_json reads it, or says why it is not an
    /// event (then that value is skipped) or not JSON.
    #[cold]
    #[inline(never)]
    fn event_by_serde<S: Sink>(
        &mut self,
        window: &[u8],
        i: &mut usize,
        at: u64,
        eof: bool,
        in_object: bool,
        sink: &mut S,
    ) -> Step {
        match parse_one::<RawEvent>(window, eof) {
            Parsed::Value(ev, n) => {
                sink.event(&ev, at);
                self.out.events += 1;
                *i += n;
                Step::Next
            }
            // Valid JSON but not a readable event: skip exactly that value.
            Parsed::DataError(why) => {
                self.state = State::Skip { in_object, why };
                Step::Next
            }
            Parsed::NeedMore => Step::NeedMore,
            Parsed::Syntax(e) => self.syntax(at, window, &e),
        }
    }

    /// Skips an element of the events array that is valid JSON but not a readable event.
    #[cold]
    #[inline(never)]
    fn skip<S: Sink>(&mut self, window: &[u8], i: &mut usize, at: u64, eof: bool, sink: &mut S) -> Step {
        let State::Skip { in_object, why } = &self.state else { unreachable!("called in State::Skip") };
        match parse_one::<serde::de::IgnoredAny>(window, eof) {
            Parsed::Value(_, n) => {
                sink.malformed(at, &strip_position(why));
                *i += n;
                self.state = State::Events { in_object: *in_object, after_comma: false };
                Step::Next
            }
            Parsed::NeedMore | Parsed::DataError(_) => Step::NeedMore,
            Parsed::Syntax(e) => self.syntax(at, window, &e),
        }
    }
}

/// Whether `w` starts with one of `words` followed by a delimiter or the end.
pub(super) fn literal_ahead(w: &[u8], words: &[&[u8]]) -> bool {
    words.iter().any(|word| {
        w.starts_with(word)
            && w.get(word.len()).is_none_or(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b',' | b']' | b'}'))
    })
}

/// Result of parsing one JSON value at the start of the window.
pub(super) enum Parsed<T> {
    Value(T, usize),
    NeedMore,
    DataError(String),
    Syntax(serde_json::Error),
}

pub(super) fn parse_one<'a, T: Deserialize<'a>>(window: &'a [u8], eof: bool) -> Parsed<T> {
    let mut it = serde_json::Deserializer::from_slice(window).into_iter::<T>();
    match it.next() {
        None => Parsed::NeedMore,
        Some(Ok(v)) => {
            let n = it.byte_offset();
            // A value that ends exactly at the window's end may continue (a number cut in
            // two); valid JSON always has a delimiter after it, so wait for one more byte.
            if n >= window.len() && !eof {
                Parsed::NeedMore
            } else {
                Parsed::Value(v, n)
            }
        }
        Some(Err(e)) if e.is_eof() => Parsed::NeedMore,
        // A type error on a value cut by the window's end (a number's first digits) would name
        // the partial value: wait for the rest, so the message is the same at every chunk size.
        Some(Err(e)) if e.is_data() && !eof && error_offset(window, &e) + 2 >= window.len() => Parsed::NeedMore,
        Some(Err(e)) if e.is_data() => Parsed::DataError(e.to_string()),
        // A number cut after its '.', 'e' or '-' is reported as "invalid number", not as EOF:
        // an error at the very end of the window needs more bytes (or, at the end of input,
        // means the file was cut short).
        Some(Err(e)) if error_offset(window, &e) + 2 >= window.len() => Parsed::NeedMore,
        Some(Err(e)) => Parsed::Syntax(e),
    }
}

/// Byte offset inside `window` of a serde_json error's line/column.
pub(super) fn error_offset(window: &[u8], e: &serde_json::Error) -> usize {
    let mut line = 1;
    let mut line_start = 0;
    for (i, &b) in window.iter().enumerate() {
        if line == e.line() {
            break;
        }
        if b == b'\n' {
            line += 1;
            line_start = i + 1;
        }
    }
    (line_start + e.column().saturating_sub(1)).min(window.len())
}

/// serde_json appends " at line L column C"; we report byte offsets instead.
pub(super) fn strip_position(m: &str) -> String {
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m.to_string(),
    }
}

pub(super) fn describe_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}
