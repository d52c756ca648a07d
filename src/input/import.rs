//! The one dispatch over the importers: sniff the first bytes (gzip or not,
//! then which format), push the decoded bytes into that format's importer, finish.

use super::formats::Format;
use super::gzip::{from_source, Encoding, Inflater, Pulled};
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
        Import { stage: Stage::Sniff(Vec::with_capacity(SNIFF)), format: None, sink }
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
        let mut skip = 0;
        if let Stage::Sniff(prefix) = &mut self.stage {
            let all = match &bytes {
                Bytes::Slice(b) => *b,
                Bytes::Owned(v) => &v[..],
            };
            skip = (SNIFF - prefix.len()).min(all.len());
            prefix.extend_from_slice(&all[..skip]);
            if prefix.len() < SNIFF {
                return;
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
                drain(inflater, i.as_mut(), failed, &mut self.sink);
            }
        }
    }

    /// Decides the encoding and the format from the sniffed prefix and hands the prefix on.
    /// `may_be_report` is false when the source failed while sniffing: such an input is
    /// read as a trace, for the events before the failure.
    fn decide(&mut self, may_be_report: bool) {
        let Stage::Sniff(prefix) = &mut self.stage else { return };
        let prefix = std::mem::take(prefix);
        let format = match sniff::format(&prefix) {
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
            drain(&mut inflater, importer.as_mut(), &mut failed, &mut self.sink);
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
                drain(&mut inflater, i.as_mut(), &mut failed, &mut self.sink);
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

/// Hands the importer what the inflater has ready.
fn drain<S: Sink>(inflater: &mut Inflater, i: &mut dyn Importer<S>, failed: &mut Option<io::Error>, sink: &mut S) {
    while failed.is_none() && i.wants_more() {
        match inflater.pull() {
            Ok(Pulled::Bytes(b)) => i.push(b, sink),
            Ok(Pulled::NeedInput | Pulled::End) => return,
            Err(e) => *failed = Some(e),
        }
    }
}

/// The pull dispatch: reads `reader` to its end in pieces of about `chunk` bytes into an
/// [`Import`]. `progress` gets the input bytes read so far after every piece; returning
/// `false` cancels.
pub fn import_from<R: Read, S: Sink>(
    mut reader: R,
    sink: S,
    chunk: usize,
    progress: &mut dyn FnMut(u64) -> bool,
) -> (S, Imported) {
    let mut import = Import::new(sink);
    let mut buf = vec![0; chunk.max(16)];
    let mut total = 0u64;
    loop {
        // Fill the buffer at least half, so tiny reads (a reader handing out 7 bytes at a
        // time) do not turn into one parse attempt per read.
        let (n, failed) = crate::input::gzip::fill_half(&mut reader, &mut buf);
        if n > 0 {
            total += n as u64;
            import.push(Bytes::Slice(&buf[..n]));
            if !progress(total) {
                return import.cancel();
            }
        }
        if failed.is_some() || n == 0 || !import.wants_more() {
            return import.finish(failed);
        }
    }
}
