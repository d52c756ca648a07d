//! Byte sources: turns whatever the caller hands us (a file, a browser `File`, a slice) into
//! the decompressed JSON byte stream, and counts input bytes for progress reporting.
//!
//! Gzip is detected by its magic bytes, never by the file name. Multi-member gzip (what
//! `cat a.gz b.gz` or parallel compressors write) is read to the end, and every member's CRC-32
//! and size trailer is verified by flate2 (whose pure-Rust backend is miniz_oxide).

use std::cell::Cell;
use std::io::{self, BufReader, Read};
use std::rc::Rc;

/// Size of the buffer between the raw source and the decompressor.
const RAW_BUFFER: usize = 256 * 1024;

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
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
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
    Gzip(flate2::bufread::MultiGzDecoder<Raw<R>>),
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
    let is_gzip = head == [0x1f, 0x8b];
    let raw = BufReader::with_capacity(RAW_BUFFER, io::Cursor::new(head).chain(counting));
    let (inner, encoding) = if is_gzip {
        (DecodedInner::Gzip(flate2::bufread::MultiGzDecoder::new(raw)), Encoding::Gzip)
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
            DecodedInner::Gzip(r) => r.read(buf),
        }
    }
}
