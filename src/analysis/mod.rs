//! The analysis: an input's events into the collector (through `input`'s dispatch), then the
//! Report.

#![forbid(unsafe_code)]

mod build;
mod conclude;
pub mod fork;
pub mod job;
pub mod model;
mod options;
pub mod passes;
pub mod rules;

use crate::input::{self, Bytes, Import, ImportError, Imported};
use crate::report::*;
use crate::trace::{self, Fatal};
use conclude::*;
pub use input::formats::Format;
pub use job::combine::{combine, combine_all, merge, merge_labelled};
pub use model::capture::Capture;
use model::collect::{Collector, Progress};
pub use options::{ErrorKind, Options, Range, TraceError, UserPeaks};
pub use passes::cpath::WhatIfSpec;
use std::io::Read;

/// Analyses one Chrome-JSON trace streamed from `reader` (plain JSON or gzip, sniffed by
/// magic bytes). `progress` receives the number of input bytes consumed so far, every chunk
/// read and, for gzip, every half chunk inflated; returning `false` cancels. A trace cut short still yields a report, with a diagnostic.
pub fn analyze_reader<R: Read>(
    file: &str,
    reader: R,
    opts: &Options,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<TraceReport, TraceError> {
    analyze_chrome_json(file, reader, None, opts, progress)
}

/// [`analyze_reader`], with the capture trace of its graph replays when there is one.
fn analyze_chrome_json<R: Read>(
    file: &str,
    reader: R,
    capture: Option<Capture>,
    opts: &Options,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<TraceReport, TraceError> {
    let (collector, read) = read_chrome_json(reader, Collector::default(), opts, progress);
    conclude(file, collector, read, opts, capture)
}

/// Reads a Chrome-JSON trace (plain or gzip) into `collector` through the one pull dispatch,
/// its format given rather than sniffed (a file that looks like a report is still read as a
/// trace here).
fn read_chrome_json<R: Read>(
    reader: R,
    collector: Collector,
    opts: &Options,
    progress: &mut dyn FnMut(u64) -> bool,
) -> (Collector, Result<trace::Outcome, Fatal>) {
    match input::import_as(reader, collector, Format::ChromeJson, opts.chunk_size, progress) {
        (collector, Imported::Reading(read)) => (collector, read),
        // Not reached: the Chrome-JSON importer always ends in a reading.
        (collector, Imported::Report(_)) => (collector, Err(Fatal::WrongTopLevel { kind: "a tracesight report" })),
    }
}

/// Reads the trace of a graph capture (or an eager trace of the same step), to be handed to
/// [`analyze_with_capture`] beside the replay trace. Fails only where nothing could be read.
pub fn read_capture<R: Read>(file: &str, reader: R, opts: &Options) -> Result<Capture, TraceError> {
    let (collector, read) = read_chrome_json(reader, Collector::for_capture(), opts, &mut |_| true);
    read.map_err(|f| fatal(file, f))?;
    Ok(Capture { file: file.to_string(), collector })
}

/// [`analyze_reader`] for a trace of graph replays, with the reading of the trace that
/// captured the graphs: replayed rows are mapped to the ops that captured them.
pub fn analyze_with_capture<R: Read>(
    file: &str,
    reader: R,
    capture: Capture,
    opts: &Options,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<TraceReport, TraceError> {
    analyze_chrome_json(file, reader, Some(capture), opts, progress)
}

/// The report of a trace read in parts (the CLI's reading on several threads), given how
/// reading ended: the same as [`analyze_reader`] gives for the same bytes read in one go.
pub fn report_of_parts(
    file: &str,
    collector: Collector,
    read: Result<trace::Outcome, Fatal>,
    opts: &Options,
) -> Result<TraceReport, TraceError> {
    conclude(file, collector, read, opts, None)
}

/// Analyses an input of any format (a trace, or a Report that `tracesight --json` wrote,
/// plain or gzip), pulled from `reader`: so per-rank reports made elsewhere (one job per rank
/// on a cluster) can be combined like the traces themselves. The same dispatch as
/// [`Analysis`], which is pushed the bytes instead.
pub fn analyze_any<R: Read>(
    file: &str,
    reader: R,
    opts: &Options,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Vec<TraceReport>, TraceError> {
    let (collector, imported) = input::import_from(reader, Collector::default(), opts.chunk_size, progress);
    outcome(file, collector, imported, opts)
}

/// The traces of what an importer read.
fn outcome(
    file: &str,
    collector: Collector,
    imported: Imported,
    opts: &Options,
) -> Result<Vec<TraceReport>, TraceError> {
    let err = |kind, message: String| TraceError { file: file.to_string(), kind, message };
    match imported {
        Imported::Reading(read) => conclude(file, collector, read, opts, None).map(|t| vec![t]),
        Imported::Report(Ok(report)) => from_report(report),
        Imported::Report(Err(ImportError::Stream(failure, message))) => Err(err(ErrorKind::of(failure), message)),
        Imported::Report(Err(ImportError::Unreadable(message))) => Err(err(ErrorKind::NotATrace, message)),
        Imported::Report(Err(ImportError::Cancelled)) => Err(err(ErrorKind::Cancelled, "cancelled".into())),
    }
}

/// The traces of a report read back. A report made for a file that could not be read (one
/// array task of a cluster job, say) holds no trace but that file's error: the error is handed
/// on under that file's name, so a merge of the reports names it as reading the traces would.
fn from_report(report: Report) -> Result<Vec<TraceReport>, TraceError> {
    match (report.traces.is_empty(), report.errors.first()) {
        (true, Some(e)) => {
            let more = report.errors.len() - 1;
            let message = if more == 0 { e.message.clone() } else { format!("{} (and {more} more files)", e.message) };
            Err(TraceError { file: e.file.clone(), kind: ErrorKind::Reported, message })
        }
        _ => Ok(report.traces),
    }
}

/// Push-based [`analyze_any`]: the caller feeds the file's bytes as they arrive (the browser's
/// worker, from asynchronous reads; the CLI, from its reading thread) and then finishes. Fed
/// the same pieces as a reader would hand out, it gives exactly what [`analyze_any`] gives.
pub struct Analysis {
    file: String,
    opts: Options,
    import: Import<Collector>,
}

impl Analysis {
    pub fn new(file: &str, opts: Options) -> Self {
        Analysis { file: file.to_string(), opts, import: Import::new(Collector::default()) }
    }

    /// Where the file's size is known: how far into it the bytes fed next reach (`read` of
    /// `total` bytes; for a .gz, compressed bytes, even where the inflated ones are fed). The
    /// per-event lists then grow to the size that predicts (`model::collect::Progress`), not by
    /// doubling, which keeps the page worker's memory down. Changes no result.
    pub fn progress(&mut self, read: u64, total: u64) {
        self.import.sink.progress = Progress { read, total };
    }

    /// The next bytes of the file.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.import.push(Bytes::Slice(bytes));
    }

    /// The next bytes of the file, handed over (no copy for gzip input).
    pub fn feed_vec(&mut self, bytes: Vec<u8>) {
        self.import.push(Bytes::Owned(bytes));
    }

    /// The input's format, once its first bytes told it.
    pub fn format(&self) -> Option<Format> {
        self.import.format()
    }

    /// Whether the input read so far is a tracesight report (not a trace).
    pub fn is_report(&self) -> bool {
        self.format() == Some(Format::Report)
    }

    /// Whether more input can change the result (false once the input is known to be bad).
    pub fn wants_more(&self) -> bool {
        self.import.wants_more()
    }

    /// The input ended; `failure` says how the source failed, if it did.
    pub fn finish(self, failure: Option<std::io::Error>) -> Result<Vec<TraceReport>, TraceError> {
        let (collector, imported) = self.import.finish(failure);
        outcome(&self.file, collector, imported, &self.opts)
    }
}

/// Analyses a trace held in memory.
pub fn analyze_slice(file: &str, bytes: &[u8], opts: &Options) -> Result<TraceReport, TraceError> {
    analyze_reader(file, bytes, opts, &mut |_| true)
}
