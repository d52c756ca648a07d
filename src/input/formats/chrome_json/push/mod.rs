//! The push-based reader: a state machine over the top level of the JSON, fed chunk by chunk.

mod step;

use super::event::RawEvent;
use super::sink::JsonSink as Sink;
use super::{flow, scan};
use crate::input::gzip as input;
use crate::limits;
use crate::trace::Failure;
use crate::trace::*;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

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
}

/// How a stream error ends the read, by its kind (never by its message).
fn stream_end(at: u64, e: &std::io::Error) -> End {
    match input::classify(e) {
        Failure::Truncated => End::Truncated { at },
        Failure::Corrupt => End::Corrupt { at, message: input::describe(e) },
        Failure::Source => End::Io { at, message: input::describe(e) },
    }
}
