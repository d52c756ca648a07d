//! Byte sources: turns whatever the caller hands us (a file, a browser `File`, a slice) into
//! the decompressed JSON byte stream, and counts input bytes for progress reporting.
//!
//! Gzip is detected by its magic bytes, never by the file name. Multi-member gzip (what
//! `cat a.gz b.gz` or parallel compressors write) is read to the end, and every member's CRC-32
//! and size trailer is verified ([`Gunzip`], over flate2's zlib-rs inflate).

use std::cell::Cell;
use std::io::{self, BufReader, Read};
use std::rc::Rc;

use super::gunzip::Gunzip;

/// The first two bytes of every gzip member (RFC 1952).
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Size of the buffer between the raw source and the decompressor.
const RAW_BUFFER: usize = 256 * 1024;

/// Size of the pieces [`Inflater`] hands out.
const INFLATE_PIECE: usize = 64 * 1024;

/// How the input was encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Plain,
    Gzip,
}

/// Wraps a reader and counts the bytes pulled from it, so progress can be reported in input
/// (on-disk) bytes while the parser consumes decompressed bytes.
pub struct CountingReader<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf).map_err(|e| match e.kind() {
            io::ErrorKind::Interrupted => e,
            // Already classified (a decoder on another thread): keep its verdict.
            _ if e.get_ref().is_some_and(|inner| inner.is::<Classified>()) => e,
            // Marked, so that a failing source is never mistaken for damaged gzip data.
            kind => io::Error::new(kind, SourceError(e.to_string())),
        })?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// An error of the byte source itself (a file that cannot be read), as opposed to damage in
/// the bytes it delivered.
#[derive(Debug)]
struct SourceError(String);

impl std::fmt::Display for SourceError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SourceError {}

pub use crate::trace::Failure;

/// A stream error with its verdict, to hand on through another reader (the CLI decodes on a
/// second thread and passes the bytes, or the error, to the parser).
#[derive(Debug)]
struct Classified(Failure, String);

impl std::fmt::Display for Classified {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

impl std::error::Error for Classified {}

/// `e` (from a [`Decoded`] stream) with its classification attached, so that a reader it is
/// passed through reports it as the same failure.
pub fn carry(e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), Classified(classify(e), describe(e)))
}

/// Classifies an error returned by a [`Decoded`] stream.
pub fn classify(e: &io::Error) -> Failure {
    if let Some(c) = e.get_ref().and_then(|inner| inner.downcast_ref::<Classified>()) {
        c.0
    } else if e.get_ref().is_some_and(|inner| inner.is::<SourceError>()) {
        Failure::Source
    } else if e.kind() == io::ErrorKind::UnexpectedEof {
        Failure::Truncated
    } else {
        Failure::Corrupt
    }
}

/// A one-line explanation of a stream error, for reports.
pub fn describe(e: &io::Error) -> String {
    if let Some(c) = e.get_ref().and_then(|inner| inner.downcast_ref::<Classified>()) {
        return c.1.clone();
    }
    match classify(e) {
        Failure::Truncated => "the gzip stream ends early (file cut short)".into(),
        Failure::Corrupt => format!("corrupt gzip data ({e})"),
        Failure::Source => format!("read error: {e}"),
    }
}

/// The raw stream after sniffing: the sniffed bytes, then the rest of the source.
type Raw<R> = BufReader<io::Chain<io::Cursor<Vec<u8>>, CountingReader<R>>>;

/// The decompressed byte stream of one input.
pub struct Decoded<R: Read> {
    inner: DecodedInner<R>,
    /// Input bytes consumed so far (shared, so progress can be read while parsing).
    pub consumed: Rc<Cell<u64>>,
    pub encoding: Encoding,
}

enum DecodedInner<R: Read> {
    Plain(Raw<R>),
    Gzip(Box<Gunzip<Raw<R>>>),
}

/// Sniffs the first bytes of `reader` and returns the decoded stream.
pub fn decode<R: Read>(reader: R) -> io::Result<Decoded<R>> {
    let consumed = Rc::new(Cell::new(0));
    let mut counting = CountingReader { inner: reader, count: consumed.clone() };
    // A reader may hand out fewer bytes than asked for (even one at a time): loop.
    let mut head = Vec::with_capacity(2);
    let mut byte = [0u8; 2];
    while head.len() < 2 {
        let n = read_retrying(&mut counting, &mut byte[..2 - head.len()])?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&byte[..n]);
    }
    let is_gzip = head == GZIP_MAGIC;
    let raw = BufReader::with_capacity(RAW_BUFFER, io::Cursor::new(head).chain(counting));
    let (inner, encoding) = if is_gzip {
        (DecodedInner::Gzip(Box::new(Gunzip::new(raw))), Encoding::Gzip)
    } else {
        (DecodedInner::Plain(raw), Encoding::Plain)
    };
    Ok(Decoded { inner, consumed, encoding })
}

/// `read` that retries on `Interrupted`, as `read_exact` does.
pub fn read_retrying<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

impl<R: Read> Read for Decoded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.inner {
            DecodedInner::Plain(r) => r.read(buf),
            // Gunzip hands out what it inflated before damage whatever the read sizes, so the
            // same damaged file gives the same events and error however it is read.
            DecodedInner::Gzip(r) => r.read(buf),
        }
    }
}

/// `e` from a byte source the caller drives (the browser's reads), marked as a source error
/// unless it already carries a verdict.
pub fn from_source(e: io::Error) -> io::Error {
    if e.get_ref().is_some_and(|inner| inner.is::<Classified>() || inner.is::<SourceError>()) {
        e
    } else {
        io::Error::new(e.kind(), SourceError(e.to_string()))
    }
}

/// Compressed bytes waiting for the inflater. Reading past them "would block" until more
/// arrive or the input ends; each read stops at the end of one pushed piece, as a reader over
/// the same pieces would.
#[derive(Default)]
struct Queue {
    pieces: std::collections::VecDeque<Vec<u8>>,
    pos: usize,
    /// Bytes handed to the inflater so far (for progress in input bytes).
    taken: u64,
    ended: bool,
    failure: Option<io::Error>,
}

impl Read for Queue {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while let Some(front) = self.pieces.front() {
            if self.pos < front.len() {
                let n = buf.len().min(front.len() - self.pos);
                buf[..n].copy_from_slice(&front[self.pos..self.pos + n]);
                self.pos += n;
                self.taken += n as u64;
                return Ok(n);
            }
            self.pieces.pop_front();
            self.pos = 0;
        }
        match self.failure.take() {
            Some(e) => Err(e),
            None if self.ended => Ok(0),
            None => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

/// Push-side gzip inflate: compressed pieces in, inflated pieces out, the same pieces (and the
/// same verdict on damaged data) as [`decode`] gives over a reader that hands out the same
/// pieces. [`Gunzip`] keeps its state across "would block", so no output is lost in between.
pub struct Inflater {
    decoder: Gunzip<BufReader<Queue>>,
    piece: Box<[u8]>,
    done: bool,
}

/// What the inflater has next.
pub enum Pulled<'a> {
    Bytes(&'a [u8]),
    /// Every pushed byte is used: push more, or end the input.
    NeedInput,
    /// The stream is complete.
    End,
}

impl Default for Inflater {
    fn default() -> Self {
        Self::new()
    }
}

impl Inflater {
    pub fn new() -> Self {
        let raw = BufReader::with_capacity(RAW_BUFFER, Queue::default());
        Inflater { decoder: Gunzip::new(raw), piece: vec![0; INFLATE_PIECE].into(), done: false }
    }

    /// Adds compressed bytes (moved, not copied).
    pub fn push(&mut self, bytes: Vec<u8>) {
        if !bytes.is_empty() {
            self.decoder.get_mut().get_mut().pieces.push_back(bytes);
        }
    }

    /// The compressed bytes the inflater has taken so far (it reads ahead of its output by
    /// at most its input buffer).
    pub fn taken(&self) -> u64 {
        self.decoder.get_ref().get_ref().taken
    }

    /// No more input will come; `failure` is how the source failed, if it did.
    pub fn end(&mut self, failure: Option<io::Error>) {
        let q = self.decoder.get_mut().get_mut();
        q.ended = true;
        q.failure = failure.map(from_source);
    }

    /// The next inflated piece. An error ends the stream.
    pub fn pull(&mut self) -> io::Result<Pulled<'_>> {
        if self.done {
            return Ok(Pulled::End);
        }
        loop {
            match self.decoder.read(&mut self.piece) {
                Ok(0) => {
                    self.done = true;
                    return Ok(Pulled::End);
                }
                Ok(n) => return Ok(Pulled::Bytes(&self.piece[..n])),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Pulled::NeedInput),
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
    }
}

/// A stream error as it crosses to another worker: its verdict and its text, which is all a
/// report takes from it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CarriedError {
    pub failure: Failure,
    pub message: String,
}

impl CarriedError {
    pub fn of(e: &io::Error) -> CarriedError {
        CarriedError { failure: classify(e), message: describe(e) }
    }

    /// The error again, classified and described as the original.
    pub fn into_error(self) -> io::Error {
        io::Error::other(Classified(self.failure, self.message))
    }
}

/// What the inflate stage has next.
#[derive(Debug, PartialEq)]
pub enum Inflating {
    Bytes(Vec<u8>),
    /// Every pushed byte is used: push more, or end the input.
    NeedInput,
    /// The stream is complete.
    End,
    /// The stream failed after the bytes handed out so far.
    Failed(CarriedError),
}

/// The first stage of a two-stage pipeline (the page's inflating worker): an [`Inflater`]
/// whose output comes in chunks of about `chunk` bytes, to hand to the parsing stage, and
/// whose error comes after the last bytes inflated before it. An [`crate::Analysis`] fed
/// these chunks and finished with the error gives what one fed the compressed file gives.
pub struct InflateStage {
    inflater: Inflater,
    chunk: usize,
    failed: Option<CarriedError>,
}

impl InflateStage {
    pub fn new(chunk: usize) -> InflateStage {
        InflateStage { inflater: Inflater::new(), chunk: chunk.max(1), failed: None }
    }

    pub fn push(&mut self, compressed: Vec<u8>) {
        self.inflater.push(compressed);
    }

    /// No more input will come; `failure` is how the source failed, if it did.
    pub fn end(&mut self, failure: Option<io::Error>) {
        self.inflater.end(failure);
    }

    pub fn pull(&mut self) -> Inflating {
        if let Some(e) = self.failed.take() {
            return Inflating::Failed(e);
        }
        let mut out = Vec::new();
        loop {
            let then = match self.inflater.pull() {
                Ok(Pulled::Bytes(b)) => {
                    out.extend_from_slice(b);
                    if out.len() < self.chunk {
                        continue;
                    }
                    return Inflating::Bytes(out);
                }
                Ok(Pulled::NeedInput) => Inflating::NeedInput,
                Ok(Pulled::End) => Inflating::End,
                Err(e) => Inflating::Failed(CarriedError::of(&e)),
            };
            if out.is_empty() {
                return then;
            }
            if let Inflating::Failed(e) = then {
                self.failed = Some(e);
            }
            return Inflating::Bytes(out);
        }
    }
}
