//! The analysis: stream a trace into the collector, then build the Report.

mod attention;
mod attribution;
mod build;
mod classify;
pub mod collect;
pub mod diagnostics;
pub mod diff;
pub mod hints;
pub mod idle;
pub mod intervals;
pub mod kernel_name;
mod layers;
mod memory;
pub mod ranks;
mod steps;
mod tables;
pub mod taxonomy;
pub mod tokens;

use crate::input::{self, Failure};
use crate::report::*;
use crate::trace::{self, End, Fatal};
use collect::Collector;
use std::fmt;
use std::io::Read;

/// What the caller can tune.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows in the top-kernels and top-ops tables.
    pub top_n: usize,
    /// Decoded bytes per parse chunk (tests use tiny chunks).
    pub chunk_size: usize,
    /// The user's own bucket rules, tried before the built-in ones.
    pub rules: Vec<taxonomy::UserRule>,
}

impl Default for Options {
    fn default() -> Self {
        Options { top_n: 25, chunk_size: trace::CHUNK, rules: Vec::new() }
    }
}

/// Why a file could not be analysed at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// No JSON in it (an empty or all-whitespace file).
    Empty,
    /// The first byte (or the first invalid JSON) is not JSON.
    NotJson,
    /// An object without `traceEvents`.
    NotATrace,
    /// A top-level string, number, boolean or null.
    WrongTopLevel,
    /// The file (plain or gzip) ends before the first event.
    Truncated,
    /// The gzip data is damaged before the first event.
    Corrupt,
    /// The source could not be read.
    Io,
    Cancelled,
}

impl ErrorKind {
    fn of(f: Failure) -> ErrorKind {
        match f {
            Failure::Truncated => ErrorKind::Truncated,
            Failure::Corrupt => ErrorKind::Corrupt,
            Failure::Source => ErrorKind::Io,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub file: String,
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for TraceError {}

/// Analyses one trace streamed from `reader` (plain JSON or gzip, sniffed by magic bytes).
/// `progress` receives the number of input bytes consumed so far, every chunk; returning
/// `false` cancels. A trace cut short still yields a report, with a diagnostic.
pub fn analyze_reader<R: Read>(
    file: &str,
    reader: R,
    opts: &Options,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<TraceReport, TraceError> {
    let err = |kind, message: String| TraceError { file: file.to_string(), kind, message };
    // A stream that fails before any JSON, whether while sniffing or at the first read.
    let stream_failed = |failure: Failure, message: String| match failure {
        // The same words as a plain file cut before its first event.
        Failure::Truncated => {
            err(ErrorKind::Truncated, "truncated: the JSON ends at byte 0 before any trace event".into())
        }
        _ => err(ErrorKind::of(failure), message),
    };
    let decoded = input::decode(reader).map_err(|e| stream_failed(input::classify(&e), input::describe(&e)))?;
    let consumed = decoded.consumed.clone();
    let mut collector = Collector::default();
    let mut on_chunk = |_decoded_bytes: u64| progress(consumed.get());
    let outcome = trace::read_trace_chunked(decoded, &mut collector, &mut on_chunk, opts.chunk_size)
        .map_err(|f| match f {
            Fatal::Empty => err(ErrorKind::Empty, "empty file: no JSON in it".into()),
            Fatal::NotJson { at, found } => err(
                ErrorKind::NotJson,
                format!("not JSON at byte {at}: found {found} where a trace starts with '{{' or '['"),
            ),
            Fatal::WrongTopLevel { kind } => err(
                ErrorKind::WrongTopLevel,
                format!("not a trace: the top-level JSON value is {kind}, not an object with traceEvents or an array of events"),
            ),
            Fatal::Stream(failure, m) => stream_failed(failure, m),
            Fatal::Cancelled => err(ErrorKind::Cancelled, "cancelled".into()),
        })?;

    if outcome.end == End::Cancelled {
        return Err(err(ErrorKind::Cancelled, "cancelled".into()));
    }
    if outcome.events == 0 {
        // Nothing was read: say what is wrong instead of printing an empty report.
        match &outcome.end {
            End::Truncated { at } => {
                return Err(err(
                    ErrorKind::Truncated,
                    format!("truncated: the JSON ends at byte {at} before any trace event"),
                ))
            }
            End::Invalid { at, message } => {
                return Err(err(ErrorKind::NotJson, format!("not JSON at byte {at}: {message}")))
            }
            End::Corrupt { message, .. } => return Err(err(ErrorKind::Corrupt, message.clone())),
            End::Io { message, .. } => return Err(err(ErrorKind::Io, message.clone())),
            End::ValueTooLarge { .. } => {}
            End::Complete | End::Cancelled => {
                if !outcome.found_events {
                    return Err(err(
                        ErrorKind::NotATrace,
                        "not a trace: the JSON object has no traceEvents array".into(),
                    ));
                }
            }
        }
    }
    Ok(report(file, collector, &outcome, opts))
}

/// What a Report written by `tracesight --json` starts with (our serializer writes
/// `tool_version` first), after optional whitespace.
fn is_report_prefix(bytes: &[u8]) -> bool {
    let t = bytes.trim_ascii_start();
    let Some(rest) = t.strip_prefix(b"{") else { return false };
    rest.trim_ascii_start().starts_with(b"\"tool_version\"")
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
    let err = |kind, message: String| TraceError { file: file.to_string(), kind, message };
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
    let head = if prefix.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(&prefix[..]).take(256).read_to_end(&mut out);
        out
    } else {
        prefix.clone()
    };
    let whole = std::io::Cursor::new(prefix).chain(reader);
    if !is_report_prefix(&head) {
        return analyze_reader(file, whole, opts, progress).map(|t| vec![t]);
    }
    let mut json = Vec::new();
    input::decode(whole)
        .and_then(|mut d| d.read_to_end(&mut json))
        .map_err(|e| err(ErrorKind::of(input::classify(&e)), input::describe(&e)))?;
    let report: Report = serde_json::from_slice(&json)
        .map_err(|e| err(ErrorKind::NotATrace, format!("a tracesight report that cannot be read: {e}")))?;
    Ok(report.traces)
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

fn report(file: &str, c: Collector, outcome: &trace::Outcome, opts: &Options) -> TraceReport {
    let (b, c) = build::build(c, opts);
    let mut r = TraceReport {
        file: file.to_string(),
        events: outcome.events,
        json_bytes: outcome.bytes,
        device: device_info(&c),
        rank: c.meta.rank,
        world_size: c.meta.world_size,
        distributed_backend: c.meta.backend.clone(),
        has_gpu: !c.gpu.is_empty(),
        gpu: b.gpu,
        devices: b.devices,
        buckets: b.buckets,
        attention: b.attention,
        top_kernels: b.top_kernels,
        top_ops: b.top_ops,
        steps: b.steps,
        hints: Vec::new(),
        diagnostics: diagnostics::diagnostics(&c, outcome, &b.extra),
        launch: b.launch,
        training: b.training,
        copies: b.copies,
        tensor_cores: b.tensor_cores,
        kernels: b.kernels,
        ops: b.ops,
        collectives: b.collectives,
        idle: b.idle,
        layers: b.layers,
        memory: b.memory,
    };
    r.hints = hints::hints(&r, &b.extra);
    r
}

fn device_info(c: &Collector) -> DeviceInfo {
    // The device the GPU rows ran on most, else the first listed.
    let mut counts: Vec<(i32, u64)> = Vec::new();
    for g in &c.gpu {
        match counts.iter_mut().find(|(d, _)| *d == g.device) {
            Some(e) => e.1 += 1,
            None => counts.push((g.device, 1)),
        }
    }
    let main = counts.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|x| x.0 as i64);
    let devs = &c.meta.devices;
    let d = main.and_then(|m| devs.iter().find(|d| d.id.and_then(|i| i.as_i64()) == Some(m))).or_else(|| devs.first());
    let Some(d) = d else {
        return DeviceInfo { count: devs.len(), ..Default::default() };
    };
    let int = |v: Option<trace::Loose>| v.and_then(|x| x.as_i64());
    DeviceInfo {
        name: d.name.clone(),
        sm_count: int(d.num_sms),
        compute_capability: match (int(d.compute_major), int(d.compute_minor)) {
            (Some(a), Some(b)) => Some(format!("{a}.{b}")),
            _ => None,
        },
        memory_gb: int(d.total_global_mem).map(|b| (b as f64 / (1u64 << 30) as f64 * 10.0).round() / 10.0),
        count: devs.len(),
    }
}

/// Combines per-file results into one Report: traces in rank order (then file name), files
/// that failed listed in `errors`, and a cross-rank table when there are several ranks.
pub fn combine(results: Vec<Result<TraceReport, TraceError>>) -> Report {
    combine_all(results.into_iter().map(|r| r.map(|t| vec![t])).collect())
}

/// As [`combine`], for inputs that each gave one or more traces (a Report file gives several).
pub fn combine_all(results: Vec<Result<Vec<TraceReport>, TraceError>>) -> Report {
    let mut traces = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(t) => traces.extend(t),
            Err(e) => errors.push(FileError { file: e.file, message: e.message }),
        }
    }
    assemble(traces, errors)
}

/// Merges Reports of separate files (each made by [`combine_all`] on its own, as the page's
/// workers do, one file each) into the Report of all of them: the same as [`combine_all`]
/// over all the files in that order.
pub fn merge(reports: Vec<Report>) -> Report {
    let mut traces = Vec::new();
    let mut errors = Vec::new();
    for r in reports {
        traces.extend(r.traces);
        errors.extend(r.errors);
    }
    assemble(traces, errors)
}

/// As [`merge`], and each trace's label (the label of the Report it came from), in the merged
/// order: the page merges a second run into the open one and knows which traces are which.
pub fn merge_labelled<T: Clone>(reports: Vec<(Report, T)>) -> (Report, Vec<T>) {
    let mut traces = Vec::new();
    let mut errors = Vec::new();
    for (r, label) in reports {
        traces.extend(r.traces.into_iter().map(|t| (t, label.clone())));
        errors.extend(r.errors);
    }
    // The same stable order as `assemble`, so its sort leaves these as they are.
    traces.sort_by(|a, b| trace_order(&a.0, &b.0));
    let (traces, labels) = traces.into_iter().unzip();
    (assemble(traces, errors), labels)
}

/// Rank order (traces without a rank last), then file name.
fn trace_order(a: &TraceReport, b: &TraceReport) -> std::cmp::Ordering {
    (a.rank.is_none(), a.rank.unwrap_or(0), &a.file).cmp(&(b.rank.is_none(), b.rank.unwrap_or(0), &b.file))
}

fn assemble(mut traces: Vec<TraceReport>, errors: Vec<FileError>) -> Report {
    traces.sort_by(trace_order);
    let (ranks, job) = if traces.len() > 1 {
        let mut rows = ranks::rank_rows(&traces);
        let job = ranks::job_view(&traces, &mut rows);
        (rows, Some(job))
    } else {
        (Vec::new(), None)
    };
    Report { tool_version: crate::TOOL_VERSION.to_string(), traces, errors, ranks, job }
}
