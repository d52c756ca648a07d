//! Gzip members (RFC 1952) read to the end of the input, over flate2's raw inflate.
//!
//! Not flate2's `MultiGzDecoder`: a read of it whose inflate call fails returns the error and
//! drops the bytes that call had inflated, so how much of a damaged file is read would depend
//! on how its input and the reads happen to be cut (and on the backend: zlib-rs inflates
//! further per call than miniz_oxide did). Here the bytes inflated before the damage are
//! handed out first and the error comes on the next read, whatever the cuts. Every member's
//! CRC-32 and length are checked, and anything after a member must be another member. The
//! error texts are flate2's, so reports read the same.

use flate2::{Crc, Decompress, FlushDecompress, Status};
use std::io::{self, BufRead, ErrorKind, Read};

const FHCRC: u8 = 1 << 1;
const FEXTRA: u8 = 1 << 2;
const FNAME: u8 = 1 << 3;
const FCOMMENT: u8 = 1 << 4;
const FRESERVED: u8 = 0xe0;

const BAD_HEADER: &str = "invalid gzip header";
const BAD_CHECKSUM: &str = "corrupt gzip stream does not have a matching checksum";
const BAD_DEFLATE: &str = "corrupt deflate stream";

/// Where in the stream the reader is. Every framing state can stop anywhere (input that "would
/// block" comes back to the same state), so nothing is lost between pushed pieces.
#[derive(Debug, Clone, Copy)]
enum At {
    /// The fixed 10 bytes of a member's header, `n` of them so far.
    Fixed([u8; 10], usize),
    /// FEXTRA's length (2 bytes).
    ExtraLen([u8; 2], usize),
    /// FEXTRA's bytes still to skip.
    Extra(usize),
    /// FNAME, then FCOMMENT: skipped to their NUL.
    Name,
    Comment,
    /// FHCRC: the header's CRC-16.
    HeaderCrc([u8; 2], usize),
    Body,
    /// CRC-32 and ISIZE of the member's output.
    Trailer([u8; 8], usize),
    /// After a member: the end of the input, or another member.
    Between,
    Done,
    Failed(ErrorKind, &'static str),
}

/// The decompressed bytes of every gzip member of `input`.
pub struct Gunzip<R> {
    input: R,
    inflate: Decompress,
    /// Of the current member's output (its count is what ISIZE holds).
    crc: Crc,
    /// Of the current header, when it has FHCRC.
    header_crc: Crc,
    flags: u8,
    at: At,
}

impl<R: BufRead> Gunzip<R> {
    pub fn new(input: R) -> Self {
        Gunzip {
            input,
            inflate: Decompress::new(false),
            crc: Crc::new(),
            header_crc: Crc::new(),
            flags: 0,
            at: At::Fixed([0; 10], 0),
        }
    }

    pub fn get_ref(&self) -> &R {
        &self.input
    }

    pub fn get_mut(&mut self) -> &mut R {
        &mut self.input
    }

    /// Inflates into `dst`: `Some(n)` bytes (n > 0), or `None` when the member's deflate data
    /// ended with no more output.
    fn inflate_into(&mut self, dst: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            let input = self.input.fill_buf()?;
            let eof = input.is_empty();
            let (in0, out0) = (self.inflate.total_in(), self.inflate.total_out());
            let flush = if eof { FlushDecompress::Finish } else { FlushDecompress::None };
            let status = self.inflate.decompress(input, dst, flush);
            let used = (self.inflate.total_in() - in0) as usize;
            let made = (self.inflate.total_out() - out0) as usize;
            self.input.consume(used);
            self.crc.update(&dst[..made]);
            let next = match status {
                Ok(Status::StreamEnd) => At::Trailer([0; 8], 0),
                Ok(_) if made > 0 => return Ok(Some(made)),
                Ok(_) if eof => At::Failed(ErrorKind::UnexpectedEof, "incomplete deflate stream"),
                Ok(_) => continue,
                // What this call inflated before the damage goes out first.
                Err(_) => At::Failed(ErrorKind::InvalidInput, BAD_DEFLATE),
            };
            self.at = next;
            return match (made, next) {
                (0, At::Failed(kind, why)) => Err(io::Error::new(kind, why)),
                (0, _) => Ok(None),
                (n, _) => Ok(Some(n)),
            };
        }
    }

    /// Reads framing bytes (header, trailer, between members) and moves `at` on.
    fn frame(&mut self) -> io::Result<()> {
        let input = self.input.fill_buf()?;
        if input.is_empty() {
            self.at = match self.at {
                At::Between => At::Done,
                _ => At::Failed(ErrorKind::UnexpectedEof, "the gzip stream ends early"),
            };
            return Ok(());
        }
        let (used, next) = step(self.at, &mut self.flags, &mut self.header_crc, input);
        self.input.consume(used);
        self.at = match next {
            At::Trailer(t, 8) => self.check_trailer(t),
            next => next,
        };
        Ok(())
    }

    fn check_trailer(&mut self, t: [u8; 8]) -> At {
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let size = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if crc != self.crc.sum() || size != self.crc.amount() {
            return At::Failed(ErrorKind::InvalidInput, BAD_CHECKSUM);
        }
        self.crc.reset();
        self.inflate.reset(false);
        At::Between
    }
}

/// One framing step on the bytes at hand: how many it used, and the state after them.
fn step(at: At, flags: &mut u8, hcrc: &mut Crc, input: &[u8]) -> (usize, At) {
    let hashed = |hcrc: &mut Crc, bytes: &[u8], flags: u8| {
        if flags & FHCRC != 0 {
            hcrc.update(bytes);
        }
    };
    match at {
        At::Fixed(mut b, n) => {
            let k = fill(&mut b[n..], input);
            // Judged as soon as the bytes are there: garbage shorter than a header is damage,
            // not a cut.
            let m = (n + k).min(4);
            if b[..m.min(3)] != [0x1f, 0x8b, 8][..m.min(3)] || (m == 4 && b[3] & FRESERVED != 0) {
                return (k, At::Failed(ErrorKind::InvalidInput, BAD_HEADER));
            }
            if n + k < b.len() {
                return (k, At::Fixed(b, n + k));
            }
            *flags = b[3];
            hcrc.reset();
            hashed(hcrc, &b, *flags);
            (k, after(*flags, FEXTRA))
        }
        At::ExtraLen(mut b, n) => {
            let k = fill(&mut b[n..], input);
            if n + k < b.len() {
                return (k, At::ExtraLen(b, n + k));
            }
            hashed(hcrc, &b, *flags);
            (k, At::Extra(u16::from_le_bytes(b) as usize))
        }
        At::Extra(left) => {
            let k = left.min(input.len());
            hashed(hcrc, &input[..k], *flags);
            (k, if k == left { after(*flags, FNAME) } else { At::Extra(left - k) })
        }
        At::Name | At::Comment => {
            let (k, done) = match memchr::memchr(0, input) {
                Some(i) => (i + 1, true),
                None => (input.len(), false),
            };
            hashed(hcrc, &input[..k], *flags);
            let then = if matches!(at, At::Name) { FCOMMENT } else { FHCRC };
            (k, if done { after(*flags, then) } else { at })
        }
        At::HeaderCrc(mut b, n) => {
            let k = fill(&mut b[n..], input);
            if n + k < b.len() {
                return (k, At::HeaderCrc(b, n + k));
            }
            let ok = u16::from_le_bytes(b) == hcrc.sum() as u16;
            (k, if ok { At::Body } else { At::Failed(ErrorKind::InvalidInput, BAD_CHECKSUM) })
        }
        At::Trailer(mut b, n) => {
            let k = fill(&mut b[n..], input);
            (k, At::Trailer(b, n + k))
        }
        // More input after a member: the next member's header.
        At::Between => (0, At::Fixed([0; 10], 0)),
        At::Body | At::Done | At::Failed(..) => (0, at),
    }
}

/// The first header field from `field` on (FEXTRA, FNAME, FCOMMENT, FHCRC, in their order)
/// that `flags` says is there, else the body.
fn after(flags: u8, field: u8) -> At {
    match field {
        FEXTRA if flags & FEXTRA != 0 => At::ExtraLen([0; 2], 0),
        FEXTRA => after(flags, FNAME),
        FNAME if flags & FNAME != 0 => At::Name,
        FNAME => after(flags, FCOMMENT),
        FCOMMENT if flags & FCOMMENT != 0 => At::Comment,
        FCOMMENT => after(flags, FHCRC),
        FHCRC if flags & FHCRC != 0 => At::HeaderCrc([0; 2], 0),
        _ => At::Body,
    }
}

/// Copies what fits of `from` into `to`; returns how much.
fn fill(to: &mut [u8], from: &[u8]) -> usize {
    let k = to.len().min(from.len());
    to[..k].copy_from_slice(&from[..k]);
    k
}

impl<R: BufRead> Read for Gunzip<R> {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        if dst.is_empty() {
            return Ok(0);
        }
        loop {
            match self.at {
                At::Body => {
                    if let Some(n) = self.inflate_into(dst)? {
                        return Ok(n);
                    }
                }
                At::Done => return Ok(0),
                At::Failed(kind, why) => return Err(io::Error::new(kind, why)),
                _ => self.frame()?,
            }
        }
    }
}
