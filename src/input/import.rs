//! The one dispatch over the importers: sniff the first bytes (gzip or not,
//! then which format), push the decoded bytes into that format's importer, finish.

use super::formats::Format;
use super::gzip::{from_source, read_retrying, Encoding, Inflater, Pulled};
use super::importer::{Imported, Importer};
use super::sniff::{self, SNIFF};
use crate::trace::{Ending, Sink};
use std::io::{self, Read};

/// The push dispatch: bytes of one input in, as they arrive (a file read in pieces, the
/// browser's asynchronous reads); the format's events into `sink`. Plain input is parsed in
/// place from the pushed slices; gzip is inflated piece by piece as input comes.
pub struct Import<S: Sink> {
    stage: Stage<S>,
    format: Option<Format>,
    /// The format the caller knows the input to be in, where it is not to be sniffed.
    known: Option<Format>,
    pub sink: S,
}

enum Stage<S: Sink> {
    /// The first bytes, until there are enough to tell the formats apart.
    Sniff(Vec<u8>),
    Plain(Box<dyn Importer<S>>),
    /// The inflater, the importer, and how the gzip stream failed (damaged or cut data).
    Gzip(Box<Inflater>, Box<dyn Importer<S>>, Option<io::Error>),
}

/// Pushed bytes: borrowed where they are parsed in place, owned where they are kept (gzip
/// input is queued for the inflater without another copy).
pub enum Bytes<'a> {
    Slice(&'a [u8]),
    Owned(Vec<u8>),
}

impl<S: Sink> Import<S> {
    pub fn new(sink: S) -> Self {
        Import { stage: Stage::Sniff(Vec::with_capacity(SNIFF)), format: None, known: None, sink }
    }

    /// An input known to be in `format`: only its encoding (gzip or not) is sniffed.
    pub fn of_format(sink: S, format: Format) -> Self {
        Import { known: Some(format), ..Import::new(sink) }
    }

    /// The format, once the first bytes told it.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Whether more input can change the result.
    pub fn wants_more(&self) -> bool {
        match &self.stage {
            Stage::Sniff(_) => true,
            Stage::Plain(i) => i.wants_more(),
            Stage::Gzip(_, i, failed) => failed.is_none() && i.wants_more(),
        }
    }

    /// The next bytes of the input.
    pub fn push(&mut self, bytes: Bytes) {
        self.push_paced(bytes, &mut Pace::none());
    }

    /// [`Import::push`], with `pace` told as gzip input is inflated; false when `pace`
    /// cancelled (the rest of the pushed bytes is then left unread).
    fn push_paced(&mut self, bytes: Bytes, pace: &mut Pace) -> bool {
        let mut skip = 0;
        if let Stage::Sniff(prefix) = &mut self.stage {
            let all = match &bytes {
                Bytes::Slice(b) => *b,
                Bytes::Owned(v) => &v[..],
            };
            skip = (SNIFF - prefix.len()).min(all.len());
            prefix.extend_from_slice(&all[..skip]);
            if prefix.len() < SNIFF {
                return true;
            }
            self.decide(true);
        }
        let rest: Bytes = match bytes {
            Bytes::Slice(b) => Bytes::Slice(&b[skip..]),
            Bytes::Owned(v) if skip == 0 => Bytes::Owned(v),
            Bytes::Owned(v) => Bytes::Owned(v[skip..].to_vec()),
        };
        match (&mut self.stage, rest) {
            (Stage::Sniff(_), _) => unreachable!("decided above"),
            (Stage::Plain(i), Bytes::Slice(b)) => i.push(b, &mut self.sink),
            (Stage::Plain(i), Bytes::Owned(v)) => i.push(&v, &mut self.sink),
            // Reading stopped (bad input, damaged gzip): the rest is not needed.
            (Stage::Gzip(_, i, failed), _) if failed.is_some() || !i.wants_more() => {}
            (Stage::Gzip(inflater, i, failed), rest) => {
                inflater.push(match rest {
                    Bytes::Slice(b) => b.to_vec(),
                    Bytes::Owned(v) => v,
                });
                return drain(inflater, i.as_mut(), failed, &mut self.sink, pace);
            }
        }
        true
    }

    /// Decides the encoding and the format from the sniffed prefix and hands the prefix on.
    /// `may_be_report` is false when the source failed while sniffing: such an input is
    /// read as a trace, for the events before the failure.
    fn decide(&mut self, may_be_report: bool) {
        let Stage::Sniff(prefix) = &mut self.stage else { return };
        let prefix = std::mem::take(prefix);
        let format = match self.known.unwrap_or_else(|| sniff::format(&prefix)) {
            Format::Report if !may_be_report => Format::ChromeJson,
            f => f,
        };
        self.format = Some(format);
        let mut importer = format.importer::<S>();
        self.stage = if sniff::encoding(&prefix) == Encoding::Gzip {
            // The same pieces as `gzip::decode` reads: the two magic bytes, then the rest.
            let mut inflater = Box::new(Inflater::new());
            let mut failed = None;
            inflater.push(prefix[..2].to_vec());
            inflater.push(prefix[2..].to_vec());
            drain(&mut inflater, importer.as_mut(), &mut failed, &mut self.sink, &mut Pace::none());
            Stage::Gzip(inflater, importer, failed)
        } else {
            importer.push(&prefix, &mut self.sink);
            Stage::Plain(importer)
        };
    }

    /// The caller stopped reading: gives back the sink with what the importer read.
    pub fn cancel(mut self) -> (S, Imported) {
        self.decide(true);
        let importer = match self.stage {
            Stage::Sniff(_) => unreachable!("decided above"),
            Stage::Plain(i) | Stage::Gzip(_, i, _) => i,
        };
        let imported = importer.finish(&mut self.sink, Ending::Cancelled);
        (self.sink, imported)
    }

    /// The input ended; `failure` says how the source failed, if it did. Gives back the sink
    /// with what the importer read.
    pub fn finish(mut self, failure: Option<io::Error>) -> (S, Imported) {
        self.decide(failure.is_none());
        let failure = failure.map(from_source);
        let (importer, failed) = match self.stage {
            Stage::Sniff(_) => unreachable!("decided above"),
            Stage::Plain(i) => (i, failure),
            Stage::Gzip(mut inflater, mut i, mut failed) => {
                inflater.end(failure);
                drain(&mut inflater, i.as_mut(), &mut failed, &mut self.sink, &mut Pace::none());
                (i, failed)
            }
        };
        let ending = match failed {
            Some(e) => Ending::Failed(e),
            None => Ending::Eof,
        };
        let imported = importer.finish(&mut self.sink, ending);
        (self.sink, imported)
    }
}

/// Hands the importer what the inflater has ready, telling `pace` as it goes; false when
/// `pace` cancelled.
fn drain<S: Sink>(
    inflater: &mut Inflater,
    i: &mut dyn Importer<S>,
    failed: &mut Option<io::Error>,
    sink: &mut S,
    pace: &mut Pace,
) -> bool {
    while failed.is_none() && i.wants_more() {
        match inflater.pull() {
            Ok(Pulled::Bytes(b)) => {
                let n = b.len();
                i.push(b, sink);
                if !pace.inflated(n, inflater) {
                    return false;
                }
            }
            Ok(Pulled::NeedInput | Pulled::End) => break,
            Err(e) => *failed = Some(e),
        }
    }
    true
}

/// Progress while inflating: a few MB of gzip can inflate to GB (a gzip bomb), so the pull
/// dispatch reports progress, and so can cancel, every `every` inflated bytes, not only
/// once per compressed piece it reads.
struct Pace<'a> {
    every: usize,
    since: usize,
    /// Gets the compressed bytes the inflater has taken; false cancels.
    report: Option<&'a mut dyn FnMut(u64) -> bool>,
}

impl<'a> Pace<'a> {
    /// No reports: the push dispatch, whose caller hands in pieces as they arrive and reports
    /// progress between them.
    fn none() -> Pace<'static> {
        Pace { every: usize::MAX, since: 0, report: None }
    }

    fn every(every: usize, report: &'a mut dyn FnMut(u64) -> bool) -> Pace<'a> {
        Pace { every: every.max(1), since: 0, report: Some(report) }
    }

    /// `n` more bytes were inflated; false when the report cancelled.
    fn inflated(&mut self, n: usize, inflater: &Inflater) -> bool {
        self.since += n;
        match &mut self.report {
            Some(report) if self.since >= self.every => {
                self.since = 0;
                report(inflater.taken())
            }
            _ => true,
        }
    }
}

/// The pull dispatch: reads `reader` to its end in pieces of about `chunk` bytes into an
/// [`Import`]. `progress` gets the input bytes read so far after every piece, and, for gzip,
/// the compressed bytes inflated so far after every `chunk / 2` inflated bytes (the least a
/// plain piece holds); returning `false` cancels.
pub fn import_from<R: Read, S: Sink>(
    reader: R,
    sink: S,
    chunk: usize,
    progress: &mut dyn FnMut(u64) -> bool,
) -> (S, Imported) {
    pull(reader, Import::new(sink), chunk, progress)
}

/// [`import_from`] for an input known to be in `format` (its encoding is still sniffed).
pub fn import_as<R: Read, S: Sink>(
    reader: R,
    sink: S,
    format: Format,
    chunk: usize,
    progress: &mut dyn FnMut(u64) -> bool,
) -> (S, Imported) {
    pull(reader, Import::of_format(sink, format), chunk, progress)
}

fn pull<R: Read, S: Sink>(
    mut reader: R,
    mut import: Import<S>,
    chunk: usize,
    progress: &mut dyn FnMut(u64) -> bool,
) -> (S, Imported) {
    let mut buf = vec![0; chunk.max(16)];
    let mut total = 0u64;
    loop {
        // Fill the buffer at least half, so tiny reads (a reader handing out 7 bytes at a
        // time) do not turn into one parse attempt per read.
        let (n, failed) = fill_half(&mut reader, &mut buf);
        if n > 0 {
            total += n as u64;
            let pushed = import.push_paced(Bytes::Slice(&buf[..n]), &mut Pace::every(buf.len() / 2, progress));
            if !pushed || !progress(total) {
                return import.cancel();
            }
        }
        if failed.is_some() || n == 0 || !import.wants_more() {
            return import.finish(failed);
        }
    }
}

/// Reads until `buf` is at least half full, the input ends or a read fails: how much was
/// read, and the failure. Tiny reads (7 bytes at a time) then do not become one parse each.
pub fn fill_half<R: Read + ?Sized>(reader: &mut R, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let half = buf.len() / 2;
    fill_to(reader, buf, half)
}

/// Reads into `buf` until at least `want` bytes are in, the input ends or a read fails: how
/// much was read, and the failure.
pub fn fill_to<R: Read + ?Sized>(reader: &mut R, buf: &mut [u8], want: usize) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < want {
        match read_retrying(reader, &mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}
