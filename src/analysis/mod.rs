//! The analysis: stream a trace into the collector, then build the Report.

#![forbid(unsafe_code)]

mod attention;
mod attribution;
mod build;
mod classify;
pub mod collect;
mod collectives;
pub mod combine;
mod conclude;
mod cpath;
mod cpath_graph;
mod cpath_what_if;
pub mod diagnostics;
pub mod diff;
mod extra;
pub mod fork;
pub mod gate;
mod generation;
pub mod hints;
pub mod hints_doc;
pub mod idle;
pub mod intervals;
pub mod kernel_name;
mod layers;
mod memory;
mod name_flags;
pub mod op_work;
mod options;
pub mod ranks;
pub mod roofline;
mod rows;
pub mod split;
pub mod stakes;
mod steps;
mod tables;
pub mod taxonomy;
pub mod timeline;
pub mod tokens;

use crate::input;
use crate::input::sniff::is_report;
use crate::report::*;
use crate::trace::{self, Fatal};
use collect::Collector;
pub use combine::{combine, combine_all, merge, merge_labelled};
use conclude::*;
pub use cpath::WhatIfSpec;
pub use options::{ErrorKind, Options, Range, TraceError, UserPeaks};
use std::io::Read;

/// Analyses one trace streamed from `reader` (plain JSON or gzip, sniffed by magic bytes).
/// `progress` receives the number of input bytes consumed so far, every chunk; returning
/// `false` cancels. A trace cut short still yields a report, with a diagnostic.
pub fn analyze_reader<R: Read>(
    file: &str,
    reader: R,
    opts: &Options,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<TraceReport, TraceError> {
    let decoded = input::decode(reader).map_err(|e| stream_failed(file, input::classify(&e), input::describe(&e)))?;
    let consumed = decoded.consumed.clone();
    let mut collector = Collector::default();
    let mut on_chunk = |_decoded_bytes: u64| progress(consumed.get());
    let read = trace::read_trace_chunked(decoded, &mut collector, &mut on_chunk, opts.chunk_size);
    conclude(file, collector, read, opts)
}

/// The report of a trace read in parts (the CLI's reading on several threads), given how
/// reading ended: the same as [`analyze_reader`] gives for the same bytes read in one go.
pub fn report_of_parts(
    file: &str,
    collector: Collector,
    read: Result<trace::Outcome, Fatal>,
    opts: &Options,
) -> Result<TraceReport, TraceError> {
    conclude(file, collector, read, opts)
}

/// Analyses a trace, or reads the traces of a Report that `tracesight --json` wrote (plain
/// or gzip), so per-rank reports made elsewhere (one job per rank on a cluster) can be combined
/// like the traces themselves.
pub fn analyze_any<R: Read>(
    file: &str,
    mut reader: R,
    opts: &Options,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Vec<TraceReport>, TraceError> {
    // Sniff the first bytes (inflated when gzip), then hand them back in front of the rest.
    let mut prefix = Vec::with_capacity(512);
    let mut buf = [0u8; 512];
    let mut failed: Option<std::io::Error> = None;
    while prefix.len() < 512 {
        match reader.read(&mut buf[..512 - prefix.len()]) {
            Ok(0) => break,
            Ok(n) => prefix.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    if let Some(e) = failed {
        // The same outcome as reading the stream directly: hand the bytes and the error on.
        let replay = std::io::Cursor::new(prefix).chain(FailOnce(Some(input::carry(&e))));
        return analyze_reader(file, replay, opts, progress).map(|t| vec![t]);
    }
    let is_report = is_report(&prefix);
    let whole = std::io::Cursor::new(prefix).chain(reader);
    if !is_report {
        return analyze_reader(file, whole, opts, progress).map(|t| vec![t]);
    }
    read_report(file, whole)
}

/// Bytes [`analyze_any`] looks at to tell a report from a trace.
const SNIFF: usize = 512;

/// Push-based [`analyze_any`]: the caller feeds the file's bytes as they arrive (the browser's
/// worker, from asynchronous reads) and then finishes. Plain JSON is parsed in place from the
/// fed slices; gzip is inflated piece by piece as input comes. Fed the same pieces as a reader
/// would hand out, it gives exactly what [`analyze_any`] gives.
pub struct Analysis {
    file: String,
    opts: Options,
    stage: Stage,
}

enum Stage {
    /// The first bytes, until there are enough to tell a trace from a report.
    Sniff(Vec<u8>),
    /// A tracesight report (small): kept whole and read at the end.
    Report(Vec<u8>),
    Plain(Feed),
    Gzip(Box<input::Inflater>, Feed),
}

/// The trace reader and what it fills.
struct Feed {
    reader: trace::PushReader,
    collector: Collector,
    /// The gzip stream failed (damaged or cut data).
    failed: Option<std::io::Error>,
}

impl Feed {
    fn new() -> Self {
        Feed { reader: trace::PushReader::new(), collector: Collector::default(), failed: None }
    }

    /// Parses what the inflater has ready.
    fn drain(&mut self, inflater: &mut input::Inflater) {
        while self.failed.is_none() && self.reader.wants_more() {
            match inflater.pull() {
                Ok(input::Pulled::Bytes(b)) => self.reader.feed(b, &mut self.collector),
                Ok(input::Pulled::NeedInput | input::Pulled::End) => return,
                Err(e) => self.failed = Some(e),
            }
        }
    }
}

/// Fed bytes: borrowed where they are parsed in place, owned where they are kept (gzip input
/// is queued for the inflater without another copy).
enum Bytes<'a> {
    Slice(&'a [u8]),
    Owned(Vec<u8>),
}

impl Analysis {
    pub fn new(file: &str, opts: Options) -> Self {
        Analysis { file: file.to_string(), opts, stage: Stage::Sniff(Vec::with_capacity(SNIFF)) }
    }

    /// The next bytes of the file.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.push(Bytes::Slice(bytes));
    }

    /// The next bytes of the file, handed over (no copy for gzip input).
    pub fn feed_vec(&mut self, bytes: Vec<u8>) {
        self.push(Bytes::Owned(bytes));
    }

    /// Whether the input read so far is a tracesight report (not a trace).
    pub fn is_report(&self) -> bool {
        matches!(self.stage, Stage::Report(_))
    }

    /// Whether more input can change the result (false once the JSON is known to be bad).
    pub fn wants_more(&self) -> bool {
        match &self.stage {
            Stage::Sniff(_) | Stage::Report(_) => true,
            Stage::Plain(f) => f.reader.wants_more(),
            Stage::Gzip(_, f) => f.failed.is_none() && f.reader.wants_more(),
        }
    }

    fn push(&mut self, bytes: Bytes) {
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
            (Stage::Report(all), Bytes::Slice(b)) => all.extend_from_slice(b),
            (Stage::Report(all), Bytes::Owned(v)) => all.extend_from_slice(&v),
            (Stage::Plain(f), Bytes::Slice(b)) => f.reader.feed(b, &mut f.collector),
            (Stage::Plain(f), Bytes::Owned(v)) => f.reader.feed(&v, &mut f.collector),
            // Reading stopped (bad JSON, damaged gzip): the rest is not needed.
            (Stage::Gzip(_, f), _) if f.failed.is_some() || !f.reader.wants_more() => {}
            (Stage::Gzip(inflater, f), rest) => {
                inflater.push(match rest {
                    Bytes::Slice(b) => b.to_vec(),
                    Bytes::Owned(v) => v,
                });
                f.drain(inflater);
            }
        }
    }

    /// Decides what the sniffed prefix is and hands it on.
    fn decide(&mut self, may_be_report: bool) {
        let Stage::Sniff(prefix) = &mut self.stage else { return };
        let prefix = std::mem::take(prefix);
        self.stage = if may_be_report && is_report(&prefix) {
            Stage::Report(prefix)
        } else if prefix.starts_with(&crate::input::GZIP_MAGIC) {
            // The same pieces as `input::decode` reads: the two magic bytes, then the rest.
            let mut inflater = Box::new(input::Inflater::new());
            let mut f = Feed::new();
            inflater.push(prefix[..2].to_vec());
            inflater.push(prefix[2..].to_vec());
            f.drain(&mut inflater);
            Stage::Gzip(inflater, f)
        } else {
            let mut f = Feed::new();
            f.reader.feed(&prefix, &mut f.collector);
            Stage::Plain(f)
        };
    }

    /// The input ended; `failure` says how the source failed, if it did.
    pub fn finish(mut self, failure: Option<std::io::Error>) -> Result<Vec<TraceReport>, TraceError> {
        // A source that fails while sniffing is read as a trace (as `analyze_any` does).
        self.decide(failure.is_none());
        let failure = failure.map(input::from_source);
        let (f, failed) = match self.stage {
            Stage::Sniff(_) => unreachable!("decided above"),
            Stage::Report(all) => {
                return match failure {
                    Some(e) => Err(TraceError {
                        file: self.file,
                        kind: ErrorKind::of(input::classify(&e)),
                        message: input::describe(&e),
                    }),
                    None => read_report(&self.file, &all[..]),
                }
            }
            Stage::Plain(f) => (f, failure),
            Stage::Gzip(mut inflater, mut f) => {
                inflater.end(failure);
                f.drain(&mut inflater);
                let failed = f.failed.take();
                (f, failed)
            }
        };
        let Feed { reader, mut collector, .. } = f;
        let ending = match failed {
            Some(e) => trace::Ending::Failed(e),
            None => trace::Ending::Eof,
        };
        let read = reader.finish(&mut collector, ending);
        conclude(&self.file, collector, read, &self.opts).map(|t| vec![t])
    }
}

/// A reader that fails once with the error it holds, then ends.
struct FailOnce(Option<std::io::Error>);

impl Read for FailOnce {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

/// Analyses a trace held in memory.
pub fn analyze_slice(file: &str, bytes: &[u8], opts: &Options) -> Result<TraceReport, TraceError> {
    analyze_reader(file, bytes, opts, &mut |_| true)
}
