//! Streaming Chrome-trace reader: visits `traceEvents` one event at a time, never holding more
//! than one chunk of the decompressed JSON (plus the event that straddles its end).
//!
//! The top level is walked by hand (an object with metadata keys in any order around
//! `traceEvents`, or a bare array of events); each event and each metadata value is parsed by
//! serde_json straight from the chunk slice, borrowing strings from it. An event cut by the
//! chunk's end reports "EOF" to serde; the chunk is then refilled and the event parsed again.

pub mod event;
mod scan;

/// The hand-written event scanner, for the differential fuzz target (not a stable API).
#[doc(hidden)]
pub use scan::{event as scan_event, Miss as ScanMiss};

use crate::input::{self, read_retrying, Failure};
use crate::limits;
pub use event::{Args, Id, Loose, RawEvent};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::io::Read;

/// Default chunk size: big enough that refills are rare, small enough to stay cache-friendly
/// and bounded in the browser.
pub const CHUNK: usize = 4 << 20;

/// Receives what the reader finds.
pub trait Sink {
    /// One well-formed event object. `offset` is its byte position in the decoded stream.
    fn event(&mut self, ev: RawEvent<'_>, offset: u64);
    /// A top-level key other than `traceEvents`, with its raw JSON value.
    fn metadata(&mut self, key: &str, value: &RawValue);
    /// An element of `traceEvents` that is valid JSON but not a readable event.
    fn malformed(&mut self, offset: u64, why: &str);
}

/// How the stream ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// The JSON was read to its end.
    Complete,
    /// The input stopped before the JSON was closed (a cut-short file, plain or gzip), or a
    /// gzip stream ended before its trailer.
    Truncated { at: u64 },
    /// A JSON syntax error; everything before it was read.
    Invalid { at: u64, message: String },
    /// The gzip data is damaged (bad header, invalid deflate data, CRC-32 or size mismatch,
    /// garbage after a member).
    Corrupt { at: u64, message: String },
    /// The byte source itself failed (a read error).
    Io { at: u64, message: String },
    /// One JSON value is larger than [`limits::MAX_VALUE_BYTES`]; reading stopped there.
    ValueTooLarge { at: u64 },
    /// The progress callback asked to stop.
    Cancelled,
}

/// What a complete or partial read produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub end: End,
    /// Decoded bytes read.
    pub bytes: u64,
    /// Event objects handed to the sink.
    pub events: u64,
    /// Whether a `traceEvents` array (or a bare top-level array) was found.
    pub found_events: bool,
    /// Non-whitespace bytes after the top-level value (ignored).
    pub trailing_bytes: bool,
    /// Commas with no element after them (`[a, b,]`), tolerated.
    pub stray_commas: u64,
}

/// Reasons the input is not a trace at all (nothing could be read).
#[derive(Debug, Clone, PartialEq)]
pub enum Fatal {
    Empty,
    NotJson {
        at: u64,
        found: String,
    },
    WrongTopLevel {
        kind: &'static str,
    },
    /// The byte stream failed before any JSON: how, and a one-line explanation.
    Stream(Failure, String),
    Cancelled,
}

/// Reads a whole trace from `reader` into `sink`. `progress` is called after every refill with
/// the number of decoded bytes read so far; returning `false` stops the read.
pub fn read_trace<R: Read, S: Sink>(
    reader: R,
    sink: &mut S,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Outcome, Fatal> {
    read_trace_chunked(reader, sink, progress, CHUNK)
}

/// [`read_trace`] with an explicit chunk size (tests use tiny chunks).
pub fn read_trace_chunked<R: Read, S: Sink>(
    reader: R,
    sink: &mut S,
    progress: &mut dyn FnMut(u64) -> bool,
    chunk: usize,
) -> Result<Outcome, Fatal> {
    let r = Reader {
        src: reader,
        data: vec![0; chunk.max(16)],
        start: 0,
        end: 0,
        base: 0,
        eof: false,
        io_error: None,
        cancelled: false,
        too_large: false,
        progress,
        out: Outcome {
            end: End::Complete,
            bytes: 0,
            events: 0,
            found_events: false,
            trailing_bytes: false,
            stray_commas: 0,
        },
    };
    r.run(sink)
}

struct Reader<'p, R> {
    src: R,
    data: Vec<u8>,
    /// Unconsumed window is `data[start..end]`.
    start: usize,
    end: usize,
    /// Stream offset of `data[0]`.
    base: u64,
    eof: bool,
    io_error: Option<std::io::Error>,
    cancelled: bool,
    /// A value outgrew [`limits::MAX_VALUE_BYTES`].
    too_large: bool,
    progress: &'p mut dyn FnMut(u64) -> bool,
    out: Outcome,
}

/// Result of parsing one JSON value at the start of the window.
enum Parsed<T> {
    Value(T, usize),
    NeedMore,
    DataError(String),
    Syntax(serde_json::Error),
}

fn parse_one<'a, T: Deserialize<'a>>(window: &'a [u8], eof: bool) -> Parsed<T> {
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
fn error_offset(window: &[u8], e: &serde_json::Error) -> usize {
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

enum Step {
    Continue,
    Stop,
}

impl<R: Read> Reader<'_, R> {
    fn window(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    fn offset(&self) -> u64 {
        self.base + self.start as u64
    }

    /// Makes room and reads more input. Returns false at the end of input (or on error or
    /// cancellation, recorded in `io_error` / `cancelled`).
    fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        if self.start > 0 {
            self.data.copy_within(self.start..self.end, 0);
            self.base += self.start as u64;
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.data.len() {
            // One value is larger than the chunk: grow, up to the limit on one value.
            if self.data.len() >= limits::MAX_VALUE_BYTES {
                self.too_large = true;
                self.eof = true;
                return false;
            }
            let len = (self.data.len() * 2).min(limits::MAX_VALUE_BYTES.max(self.data.len()));
            self.data.resize(len, 0);
        }
        let before = self.end;
        // Top the buffer up to at least half full, so tiny reads (a reader handing out 7 bytes
        // at a time) do not turn into one parse attempt per read.
        let want = (self.data.len() / 2).max(before + 1);
        while self.end < want {
            match read_retrying(&mut self.src, &mut self.data[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) => {
                    self.io_error = Some(e);
                    self.eof = true;
                    break;
                }
            }
        }
        self.out.bytes = self.base + self.end as u64;
        if !(self.progress)(self.out.bytes) {
            self.cancelled = true;
            self.eof = true;
            self.end = before.max(self.start);
            return false;
        }
        self.end > before
    }

    /// Next non-whitespace byte (not consumed), refilling as needed.
    fn peek_non_ws(&mut self) -> Option<u8> {
        loop {
            let w = self.window();
            match w.iter().position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t')) {
                Some(i) => {
                    self.start += i;
                    return Some(self.data[self.start]);
                }
                None => {
                    self.start = self.end;
                    if self.eof {
                        return None;
                    }
                    self.fill();
                }
            }
        }
    }

    /// The end of input was reached where more JSON was expected.
    fn cut_short(&mut self) -> End {
        if self.cancelled {
            return End::Cancelled;
        }
        let at = self.offset().max(self.base + self.end as u64);
        if self.too_large {
            return End::ValueTooLarge { at };
        }
        match self.io_error.take() {
            Some(e) => stream_end(at, &e),
            None => End::Truncated { at },
        }
    }

    fn run<S: Sink>(mut self, sink: &mut S) -> Result<Outcome, Fatal> {
        // Skip a UTF-8 byte-order mark.
        if self.fill() && self.window().starts_with(&[0xEF, 0xBB, 0xBF]) {
            self.start += 3;
        }
        let first = match self.peek_non_ws() {
            Some(b) => b,
            None => {
                if self.cancelled {
                    return Err(Fatal::Cancelled);
                }
                return Err(match self.io_error.take() {
                    Some(e) => Fatal::Stream(input::classify(&e), input::describe(&e)),
                    None => Fatal::Empty,
                });
            }
        };
        match first {
            b'[' => {
                self.start += 1;
                self.out.found_events = true;
                if let Step::Stop = self.events(sink) {
                    return Ok(self.out);
                }
            }
            b'{' => {
                self.start += 1;
                if let Step::Stop = self.object(sink) {
                    return Ok(self.out);
                }
            }
            b'"' => return Err(Fatal::WrongTopLevel { kind: "a string" }),
            b'-' | b'0'..=b'9' => return Err(Fatal::WrongTopLevel { kind: "a number" }),
            // Only a real literal is "a boolean": a text file starting with "these" is not JSON.
            _ if self.literal_ahead(&[b"true", b"false"]) => return Err(Fatal::WrongTopLevel { kind: "a boolean" }),
            _ if self.literal_ahead(&[b"null"]) => return Err(Fatal::WrongTopLevel { kind: "null" }),
            other => {
                return Err(Fatal::NotJson { at: self.offset(), found: describe_byte(other) });
            }
        }
        // After the top-level value: only whitespace may follow.
        if self.peek_non_ws().is_some() {
            self.out.trailing_bytes = true;
            // Read (and drop) the rest, so that damage behind it (a bad gzip trailer) is seen
            // whatever the chunk size.
            while !self.eof {
                self.start = self.end;
                self.fill();
            }
        }
        if let Some(e) = self.io_error.take() {
            // The JSON closed, but the gzip container after it is damaged (bad trailer).
            // At the end of everything decoded, as `cut_short` reports it (whatever the chunking).
            self.out.end = stream_end(self.base + self.end as u64, &e);
        }
        Ok(self.out)
    }

    /// Reads the members of the top-level object, after its `{`.
    fn object<S: Sink>(&mut self, sink: &mut S) -> Step {
        loop {
            let Some(b) = self.peek_non_ws() else {
                self.out.end = self.cut_short();
                return Step::Stop;
            };
            match b {
                b'}' => {
                    self.start += 1;
                    return Step::Continue;
                }
                b',' => self.start += 1,
                b'"' => {
                    let Some(key) = self.parse_key() else { return Step::Stop };
                    let Some(b) = self.peek_non_ws() else {
                        self.out.end = self.cut_short();
                        return Step::Stop;
                    };
                    if key == "traceEvents" && b == b'[' {
                        self.start += 1;
                        self.out.found_events = true;
                        if let Step::Stop = self.events(sink) {
                            return Step::Stop;
                        }
                    } else if !self.metadata_value(&key, sink) {
                        return Step::Stop;
                    }
                }
                other => {
                    self.invalid(format!("expected a key, found {}", describe_byte(other)));
                    return Step::Stop;
                }
            }
        }
    }

    /// Whether the window starts with one of `words` followed by a delimiter or the end.
    fn literal_ahead(&self, words: &[&[u8]]) -> bool {
        let w = self.window();
        words.iter().any(|word| {
            w.starts_with(word)
                && w.get(word.len()).is_none_or(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b',' | b']' | b'}'))
        })
    }

    fn invalid(&mut self, message: String) {
        self.out.end = End::Invalid { at: self.offset(), message };
    }

    /// Parses `"key":` and returns the key.
    fn parse_key(&mut self) -> Option<String> {
        loop {
            match parse_one::<Cow<str>>(self.window(), self.eof) {
                Parsed::Value(k, n) => {
                    let key = k.into_owned();
                    self.start += n;
                    match self.peek_non_ws() {
                        Some(b':') => {
                            self.start += 1;
                            return Some(key);
                        }
                        Some(other) => {
                            self.invalid(format!("expected ':' after \"{key}\", found {}", describe_byte(other)));
                            return None;
                        }
                        None => {
                            self.out.end = self.cut_short();
                            return None;
                        }
                    }
                }
                Parsed::NeedMore => {
                    if self.eof {
                        self.out.end = self.cut_short();
                        return None;
                    }
                    self.fill();
                }
                Parsed::DataError(m) => {
                    self.invalid(m);
                    return None;
                }
                Parsed::Syntax(e) => {
                    self.syntax(&e);
                    return None;
                }
            }
        }
    }

    fn syntax(&mut self, e: &serde_json::Error) {
        let at = self.offset() + error_offset(self.window(), e) as u64;
        let message = strip_position(&e.to_string());
        self.out.end = End::Invalid { at, message };
    }

    /// Parses one top-level metadata value and hands it to the sink.
    fn metadata_value<S: Sink>(&mut self, key: &str, sink: &mut S) -> bool {
        loop {
            match parse_one::<&RawValue>(self.window(), self.eof) {
                Parsed::Value(v, n) => {
                    sink.metadata(key, v);
                    self.start += n;
                    return true;
                }
                Parsed::NeedMore => {
                    if self.eof {
                        self.out.end = self.cut_short();
                        return false;
                    }
                    self.fill();
                }
                Parsed::DataError(m) => {
                    self.invalid(m);
                    return false;
                }
                Parsed::Syntax(e) => {
                    self.syntax(&e);
                    return false;
                }
            }
        }
    }

    /// Reads array elements after `[` up to and including `]`.
    fn events<S: Sink>(&mut self, sink: &mut S) -> Step {
        let mut after_comma = false;
        loop {
            let Some(b) = self.peek_non_ws() else {
                self.out.end = self.cut_short();
                return Step::Stop;
            };
            match b {
                b']' => {
                    if after_comma {
                        self.out.stray_commas += 1;
                    }
                    self.start += 1;
                    return Step::Continue;
                }
                b',' => {
                    if after_comma {
                        self.out.stray_commas += 1;
                    }
                    after_comma = true;
                    self.start += 1;
                    continue;
                }
                _ => after_comma = false,
            }
            if !self.one_event(sink) {
                return Step::Stop;
            }
        }
    }

    /// Parses the event at the window's start. Returns false when reading must stop.
    fn one_event<S: Sink>(&mut self, sink: &mut S) -> bool {
        // Set when the element is valid JSON but not a readable event: then skip exactly that
        // value (refilling as needed) and go on.
        let mut skipping: Option<String> = None;
        // The fast path; serde_json below decides whatever it cannot read.
        loop {
            match scan::event(self.window()) {
                Ok((ev, n)) => {
                    sink.event(ev, self.offset());
                    self.out.events += 1;
                    self.start += n;
                    return true;
                }
                Err(scan::Miss::NeedMore) if !self.eof => {
                    self.fill();
                }
                Err(_) => break,
            }
        }
        loop {
            let offset = self.offset();
            let step: Parsed<()> = match &skipping {
                None => match parse_one::<RawEvent>(self.window(), self.eof) {
                    Parsed::Value(ev, n) => {
                        sink.event(ev, offset);
                        self.out.events += 1;
                        self.start += n;
                        return true;
                    }
                    Parsed::DataError(why) => {
                        skipping = Some(why);
                        continue;
                    }
                    Parsed::NeedMore => Parsed::NeedMore,
                    Parsed::Syntax(e) => Parsed::Syntax(e),
                },
                Some(why) => match parse_one::<serde::de::IgnoredAny>(self.window(), self.eof) {
                    Parsed::Value(_, n) => {
                        sink.malformed(offset, &strip_position(why));
                        self.start += n;
                        return true;
                    }
                    Parsed::NeedMore | Parsed::DataError(_) => Parsed::NeedMore,
                    Parsed::Syntax(e) => Parsed::Syntax(e),
                },
            };
            match step {
                Parsed::Syntax(e) => {
                    self.syntax(&e);
                    return false;
                }
                _ => {
                    if self.eof {
                        self.out.end = self.cut_short();
                        return false;
                    }
                    self.fill();
                }
            }
        }
    }
}

/// How a stream error ends the read, by its kind (never by its message).
fn stream_end(at: u64, e: &std::io::Error) -> End {
    match input::classify(e) {
        Failure::Truncated => End::Truncated { at },
        Failure::Corrupt => End::Corrupt { at, message: input::describe(e) },
        Failure::Source => End::Io { at, message: input::describe(e) },
    }
}

/// serde_json appends " at line L column C"; we report byte offsets instead.
fn strip_position(m: &str) -> String {
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m.to_string(),
    }
}

fn describe_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

#[cfg(test)]
mod tests;
