//! What an importer hands on (the [`Sink`]) and how a reading ended ([`Outcome`], [`End`],
//! [`Fatal`]).

use super::event::{Event, Meta};

/// Receives what an importer finds, in the order it finds it.
pub trait Sink {
    /// One readable event.
    fn event(&mut self, ev: &Event<'_>);
    /// Metadata of the whole trace.
    fn metadata(&mut self, meta: Meta);
    /// An element that is well-formed in its format but not a readable event; `offset` is
    /// its byte position in the decoded stream.
    fn malformed(&mut self, offset: u64, why: &str);
}

/// What went wrong with the byte stream, decided by who failed and how, never by the text of
/// the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Failure {
    /// The compressed stream ends before its end (a file cut short).
    Truncated,
    /// The compressed data is damaged: a bad header, invalid deflate data, a CRC-32 or size
    /// mismatch, or bytes after the last member that are not another member.
    Corrupt,
    /// The source could not be read.
    Source,
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
