//! Streaming Chrome-trace reader: visits `traceEvents` one event at a time, never holding more
//! than one chunk of the decompressed JSON (plus the event that straddles its end).
//!
//! The top level is walked by hand (an object with metadata keys in any order around
//! `traceEvents`, or a bare array of events); each event and each metadata value is parsed by
//! serde_json straight from the chunk slice, borrowing strings from it. An event cut by the
//! chunk's end reports "EOF" to serde; the chunk is then refilled and the event parsed again.

#![forbid(unsafe_code)]

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
    fn event(&mut self, ev: &RawEvent<'_>, offset: u64);
    /// A top-level key other than `traceEvents`, with its raw JSON value.
    fn metadata(&mut self, key: &str, value: &RawValue);
    /// An element of `traceEvents` that is valid JSON but not a readable event.
    fn malformed(&mut self, offset: u64, why: &str);
}

/// How the stream ended.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
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
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub end: End,
    /// Decoded bytes read: where reading stopped at a syntax error or an oversized value,
    /// else every byte of the input.
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

/// [`read_trace`] with an explicit chunk size (tests use tiny chunks): a thin loop that pulls
/// chunks from `reader` and pushes them into a [`PushReader`].
pub fn read_trace_chunked<R: Read, S: Sink>(
    mut reader: R,
    sink: &mut S,
    progress: &mut dyn FnMut(u64) -> bool,
    chunk: usize,
) -> Result<Outcome, Fatal> {
    let mut push = PushReader::new();
    let mut buf = vec![0; chunk.max(16)];
    let mut total = 0u64;
    let ending = loop {
        // Fill the buffer at least half, so tiny reads (a reader handing out 7 bytes at a
        // time) do not turn into one parse attempt per read.
        let mut n = 0;
        let mut failed = None;
        while n < buf.len() / 2 {
            match read_retrying(&mut reader, &mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if n > 0 {
            total += n as u64;
            if !progress(total) {
                break Ending::Cancelled;
            }
            push.feed(&buf[..n], sink);
        }
        if let Some(e) = failed {
            break Ending::Failed(e);
        }
        if n == 0 || !push.wants_more() {
            break Ending::Eof;
        }
    };
    push.finish(sink, ending)
}

/// Why the input ended, as the byte source tells [`PushReader::finish`].
#[derive(Debug)]
pub enum Ending {
    /// All bytes were fed.
    Eof,
    /// The byte source failed (a read error, damaged or cut gzip data).
    Failed(std::io::Error),
    /// The caller stopped reading.
    Cancelled,
}

/// Where the reader is in the JSON, between two chunks.
#[derive(Debug)]
enum State {
    /// Before the top-level value (a byte-order mark, whitespace).
    Start { bom_checked: bool },
    /// In the top-level object, expecting a key, `,` or `}`.
    Object,
    /// After a key, expecting `:`.
    Colon(String),
    /// After `key:`, expecting its value.
    Value(String),
    /// In the events array (`traceEvents`, or a bare top-level array).
    Events { in_object: bool, after_comma: bool },
    /// Skipping an element of the events array that is valid JSON but not a readable event.
    Skip { in_object: bool, why: String },
    /// After the top-level value: only whitespace may follow.
    After,
    /// The input ended where more JSON was expected.
    Cut,
    /// Not a trace at all.
    Fatal(Fatal),
    /// Reading stopped (a syntax error, a value over the size limit); `Outcome::end` says why.
    Stopped,
}

/// What one step of the state machine did.
enum Step {
    /// Consumed some bytes (maybe none) and moved on: step again.
    Next,
    /// The window ends inside the next value: feed more bytes.
    NeedMore,
    /// Nothing more will be read.
    Stop,
}

/// The push-based core: takes the decoded JSON bytes as they come ([`PushReader::feed`]),
/// holding back only the value that straddles two chunks, and reports how it ended
/// ([`PushReader::finish`]). The same events come out however the bytes are cut.
pub struct PushReader {
    state: State,
    /// The unconsumed tail of earlier chunks: the start of a value cut by a chunk's end.
    carry: Vec<u8>,
    /// Stream offset of the first unconsumed byte (the start of `carry`).
    pos: u64,
    /// `carry` is parsed again once it holds this many bytes.
    retry_at: usize,
    out: Outcome,
}

impl Default for PushReader {
    fn default() -> Self {
        Self::new()
    }
}

impl PushReader {
    pub fn new() -> Self {
        PushReader {
            state: State::Start { bom_checked: false },
            carry: Vec::new(),
            pos: 0,
            retry_at: 0,
            out: Outcome {
                end: End::Complete,
                bytes: 0,
                events: 0,
                found_events: false,
                trailing_bytes: false,
                stray_commas: 0,
            },
        }
    }

    /// A reader for a later part of a file split between events: it starts inside the events
    /// array (`in_object`: the `traceEvents` array of an object, not a bare array) right after
    /// the comma that ends at stream offset `offset`, and reports absolute offsets. Its part is
    /// read as the whole file would be read only if the part before ends there, which
    /// [`PushReader::after_event_comma`] on that part's reader tells.
    pub fn resume_after_comma(offset: u64, in_object: bool) -> Self {
        let mut r = PushReader::new();
        r.state = State::Events { in_object, after_comma: true };
        r.pos = offset;
        r.out.bytes = offset;
        r.out.found_events = true;
        r
    }

    /// `Some(in_object)` when everything fed was read and the reader stands in the events
    /// array right after a comma (where a part of a split file may end), else None.
    pub fn after_event_comma(&self) -> Option<bool> {
        match self.state {
            State::Events { in_object, after_comma: true } if self.carry.is_empty() => Some(in_object),
            _ => None,
        }
    }

    /// Stray commas seen so far (`[a,,b]`).
    pub fn stray_commas(&self) -> u64 {
        self.out.stray_commas
    }

    /// Whether more bytes can change the result (false after a syntax error, a fatal start or
    /// an oversized value). After the top-level value it stays true: a damaged gzip trailer
    /// behind it must still be seen.
    pub fn wants_more(&self) -> bool {
        !matches!(self.state, State::Stopped | State::Fatal(_) | State::Cut)
    }

    /// Bytes held back between two chunks: the start of the value the last chunk cut.
    pub fn held(&self) -> usize {
        self.carry.len()
    }

    /// Events handed to the sink so far.
    pub fn events(&self) -> u64 {
        self.out.events
    }

    /// Parses as much of `chunk` as forms whole values and keeps the rest for the next call.
    pub fn feed<S: Sink>(&mut self, chunk: &[u8], sink: &mut S) {
        self.out.bytes += chunk.len() as u64;
        if !self.wants_more() {
            return;
        }
        let mut rest = chunk;
        if !self.carry.is_empty() {
            // Finish the straddling value with as few of the new bytes as it needs. A value
            // that stays cut is tried again only once it has doubled, so a long one costs a
            // logarithmic number of parse attempts, whatever the piece size.
            loop {
                let before = self.carry.len();
                let target = self.retry_at.max(before + 4096).min(limits::MAX_VALUE_BYTES);
                let t = target.saturating_sub(before).min(rest.len());
                self.carry.extend_from_slice(&rest[..t]);
                rest = &rest[t..];
                if self.carry.len() < target {
                    return; // all of this chunk is held; wait for more
                }
                let carry = std::mem::take(&mut self.carry);
                let used = self.run(&carry, false, sink);
                let left = carry.len() - used;
                self.carry = carry;
                if !self.wants_more() {
                    self.carry = Vec::new();
                    return;
                }
                if used >= before {
                    // Past the old bytes: what is left came from this chunk; take it back.
                    self.carry.clear();
                    rest = &chunk[chunk.len() - rest.len() - left..];
                    break;
                }
                self.carry.drain(..used);
                self.retry_at = self.carry.len() * 2;
                if self.carry.len() >= limits::MAX_VALUE_BYTES {
                    self.check_size();
                    return;
                }
                if rest.is_empty() {
                    return;
                }
            }
            if !self.wants_more() {
                return;
            }
        }
        let used = self.run(rest, false, sink);
        if self.wants_more() {
            self.carry.extend_from_slice(&rest[used..]);
            self.retry_at = self.carry.len() * 2;
            self.check_size();
        }
    }

    /// Parses the values the held bytes complete, without waiting for more input (which `feed`
    /// may do to amortise retries): the end of a part of a split file is known to fall between
    /// events, so what is held there must be read before [`PushReader::after_event_comma`].
    pub fn settle<S: Sink>(&mut self, sink: &mut S) {
        if self.carry.is_empty() || !self.wants_more() {
            return;
        }
        let carry = std::mem::take(&mut self.carry);
        let used = self.run(&carry, false, sink);
        if self.wants_more() {
            self.carry = carry[used..].to_vec();
        }
    }

    /// One value longer than [`limits::MAX_VALUE_BYTES`] stops the read, at the offset where
    /// that value starts (the first byte held).
    fn check_size(&mut self) {
        if self.carry.len() >= limits::MAX_VALUE_BYTES {
            self.out.end = End::ValueTooLarge { at: self.pos };
            self.state = State::Stopped;
            self.carry = Vec::new();
        }
    }

    /// The input ended (`how` says why): parses what is held and says how the read went.
    pub fn finish<S: Sink>(mut self, sink: &mut S, how: Ending) -> Result<Outcome, Fatal> {
        if !matches!(how, Ending::Cancelled) && self.wants_more() {
            let carry = std::mem::take(&mut self.carry);
            self.run(&carry, true, sink);
        }
        let at = self.out.bytes;
        match self.state {
            State::Fatal(f) => Err(f),
            State::Start { .. } => Err(match how {
                Ending::Cancelled => Fatal::Cancelled,
                Ending::Failed(e) => Fatal::Stream(input::classify(&e), input::describe(&e)),
                Ending::Eof => Fatal::Empty,
            }),
            // Where reading stopped, not how far past it the input was fed (that depends on
            // how the bytes were cut).
            State::Stopped => {
                if let End::Invalid { at, .. } | End::ValueTooLarge { at } = self.out.end {
                    self.out.bytes = at;
                }
                Ok(self.out)
            }
            State::After => {
                if let Ending::Failed(e) = how {
                    // The JSON closed, but the gzip container after it is damaged (bad
                    // trailer): at the end of everything decoded.
                    self.out.end = stream_end(at, &e);
                }
                Ok(self.out)
            }
            // Cut short, or cancelled mid-value.
            _ => {
                self.out.end = match how {
                    Ending::Cancelled => End::Cancelled,
                    Ending::Failed(e) => stream_end(at, &e),
                    Ending::Eof => End::Truncated { at },
                };
                Ok(self.out)
            }
        }
    }

    /// Runs the state machine over `w` (starting at stream offset `self.pos`); returns the
    /// bytes consumed. With `eof`, a value the window cuts is cut for good.
    fn run<S: Sink>(&mut self, w: &[u8], eof: bool, sink: &mut S) -> usize {
        let base = self.pos;
        let mut i = 0;
        loop {
            let step = self.step(w, &mut i, base, eof, sink);
            self.pos = base + i as u64;
            match step {
                Step::Next => {}
                Step::NeedMore => {
                    if eof && !matches!(self.state, State::After | State::Start { .. }) {
                        self.state = State::Cut;
                    }
                    return i;
                }
                Step::Stop => return i,
            }
        }
    }

    fn invalid(&mut self, at: u64, message: String) -> Step {
        self.out.end = End::Invalid { at, message };
        self.state = State::Stopped;
        Step::Stop
    }

    fn syntax(&mut self, at: u64, window: &[u8], e: &serde_json::Error) -> Step {
        let at = at + error_offset(window, e) as u64;
        self.invalid(at, strip_position(&e.to_string()))
    }

    /// One step from `w[*i..]`; `base` is the stream offset of `w[0]`.
    fn step<S: Sink>(&mut self, w: &[u8], i: &mut usize, base: u64, eof: bool, sink: &mut S) -> Step {
        if let State::Start { bom_checked: bom_checked @ false } = &mut self.state {
            const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];
            let window = &w[*i..];
            if !eof && window.len() < 3 && BOM.starts_with(window) {
                return Step::NeedMore;
            }
            *bom_checked = true;
            if window.starts_with(BOM) {
                *i += 3;
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
            State::Start { .. } => {
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
            State::Object => match b {
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
            },
            State::Colon(key) => {
                if b == b':' {
                    *i += 1;
                    self.state = State::Value(std::mem::take(key));
                    Step::Next
                } else {
                    let m = format!("expected ':' after \"{key}\", found {}", describe_byte(b));
                    self.invalid(at, m)
                }
            }
            State::Value(key) => {
                if key == "traceEvents" && b == b'[' {
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
                // The fast path; serde_json decides whatever it cannot read.
                let mut ev = RawEvent::default();
                match scan::event(window, &mut ev) {
                    Ok(n) => {
                        sink.event(&ev, at);
                        self.out.events += 1;
                        *i += n;
                        return Step::Next;
                    }
                    Err(scan::Miss::NeedMore) if !eof => return Step::NeedMore,
                    Err(_) => {}
                }
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
            State::Skip { in_object, why } => match parse_one::<serde::de::IgnoredAny>(window, eof) {
                Parsed::Value(_, n) => {
                    sink.malformed(at, &strip_position(why));
                    *i += n;
                    self.state = State::Events { in_object: *in_object, after_comma: false };
                    Step::Next
                }
                Parsed::NeedMore | Parsed::DataError(_) => Step::NeedMore,
                Parsed::Syntax(e) => self.syntax(at, window, &e),
            },
            State::After => {
                self.out.trailing_bytes = true;
                *i = w.len();
                Step::NeedMore
            }
            State::Cut | State::Fatal(_) | State::Stopped => Step::Stop,
        }
    }
}

/// Whether `w` starts with one of `words` followed by a delimiter or the end.
fn literal_ahead(w: &[u8], words: &[&[u8]]) -> bool {
    words.iter().any(|word| {
        w.starts_with(word)
            && w.get(word.len()).is_none_or(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b',' | b']' | b'}'))
    })
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
