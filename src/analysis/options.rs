//! What a caller tunes (`Options`, the time `Range`) and how an analysis fails (`TraceError`).

use super::fork;
use super::rules::taxonomy;
use crate::input::formats::chrome_json;
use crate::report::TimeWindow;
use crate::trace::Failure;
use std::fmt;

/// What the caller can tune.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows in the top-kernels and top-ops tables.
    pub top_n: usize,
    /// Decoded bytes per parse chunk (tests use tiny chunks).
    pub chunk_size: usize,
    /// The user's own bucket rules, tried before the built-in ones.
    pub rules: Vec<taxonomy::UserRule>,
    /// Restrict the analysis to GPU time inside this range (rows clipped to it).
    pub window: Option<Range>,
    /// How the report build runs its independent passes: one after the other unless the
    /// caller hands in threads.
    pub fork: fork::Fork,
    /// Peaks to measure efficiency against instead of the device table's (`--peak-tflops`,
    /// `--peak-tbps`, the page's fields).
    pub peaks: UserPeaks,
    /// The model's size, for the analytic 6·N·T MFU beside the measured one.
    pub model: Option<crate::report::ModelSize>,
    /// `--what-if gemm=30%`: the step time along the critical path with that bucket or name
    /// family faster.
    pub what_if: Option<WhatIfSpec>,
}

/// The user's own peak figures; each left as None falls back to the device table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserPeaks {
    /// Dense TFLOP/s: one figure for every precision, or per precision.
    pub tflops: Vec<(Option<crate::vocab::Precision>, f64)>,
    pub tbps: Option<f64>,
}

impl UserPeaks {
    /// `989` (every precision) or `bf16=989,fp8=1979`.
    pub fn parse_tflops(text: &str) -> Result<Vec<(Option<crate::vocab::Precision>, f64)>, String> {
        let bad = |p: &str| format!("`{p}` is not a peak: write TFLOP/s as 989, or per precision as bf16=989,fp8=1979");
        text.split(',')
            .map(|part| {
                let (p, v) = match part.split_once('=') {
                    Some((p, v)) => {
                        let p = crate::vocab::Precision::ALL.into_iter().find(|x| x.id() == p.trim().to_lowercase());
                        (Some(p.ok_or_else(|| bad(part))?), v)
                    }
                    None => (None, part),
                };
                match v.trim().parse::<f64>() {
                    Ok(v) if v.is_finite() && v > 0.0 => Ok((p, v)),
                    _ => Err(bad(part)),
                }
            })
            .collect()
    }
}

/// A time range to analyse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Range {
    /// Nanoseconds on the trace's own clock (what the page's timeline selects).
    Clock { start_ns: i64, end_ns: i64 },
    /// Nanoseconds after the trace's first GPU row (what the timeline's axis shows; the CLI's
    /// `--range`).
    FromFirstRow { start_ns: i64, end_ns: i64 },
}

impl Range {
    /// `FROM..TO` in milliseconds after the first GPU row (`12.5..40`, `ms` allowed after a
    /// number); either end may be left out (`..40`, `100..`).
    pub fn parse_ms(text: &str) -> Result<Range, String> {
        let bad = || format!("`{text}` is not a range: write FROM..TO in milliseconds, e.g. 120..135.5");
        let (a, b) = text.split_once("..").ok_or_else(bad)?;
        let ns = |s: &str, default: i64| -> Result<i64, String> {
            let s = s.trim();
            let s = s.strip_suffix("ms").unwrap_or(s).trim();
            if s.is_empty() {
                return Ok(default);
            }
            let v: f64 = s.parse().map_err(|_| bad())?;
            if !v.is_finite() || v < 0.0 {
                return Err(bad());
            }
            Ok((v * 1e6).round().min(i64::MAX as f64) as i64)
        };
        let (start_ns, end_ns) = (ns(a, 0)?, ns(b, i64::MAX)?);
        if end_ns <= start_ns {
            return Err(format!("`{text}`: the range ends before it starts"));
        }
        Ok(Range::FromFirstRow { start_ns, end_ns })
    }

    /// The range on the trace's clock, given the first GPU row's start.
    pub fn resolve(self, first_row_ns: i64) -> TimeWindow {
        let (start_ns, end_ns) = match self {
            Range::Clock { start_ns, end_ns } => (start_ns, end_ns),
            Range::FromFirstRow { start_ns, end_ns } => {
                (first_row_ns.saturating_add(start_ns), first_row_ns.saturating_add(end_ns))
            }
        };
        TimeWindow { start_ns, end_ns: end_ns.max(start_ns.saturating_add(1)), origin_ns: first_row_ns }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            top_n: 25,
            chunk_size: chrome_json::CHUNK,
            rules: Vec::new(),
            window: None,
            fork: fork::Fork::default(),
            peaks: UserPeaks::default(),
            model: None,
            what_if: None,
        }
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
    /// A tracesight report that says its own file could not be read.
    Reported,
}

impl ErrorKind {
    pub(super) fn of(f: Failure) -> ErrorKind {
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

/// `--what-if TARGET=PCT%`: a bucket id or a name family, made PCT% faster.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIfSpec {
    pub target: String,
    pub faster_pct: f64,
}

impl WhatIfSpec {
    pub fn parse(text: &str) -> Result<WhatIfSpec, String> {
        let (target, pct) = text.split_once('=').ok_or("expected TARGET=PCT%, as in gemm=30%")?;
        let pct: f64 = pct.trim().trim_end_matches('%').parse().map_err(|_| format!("not a percentage: {pct}"))?;
        if !(0.0..=100.0).contains(&pct) || target.trim().is_empty() {
            return Err(format!("expected a target and 0-100%, got {text}"));
        }
        Ok(WhatIfSpec { target: target.trim().to_string(), faster_pct: pct })
    }
}
