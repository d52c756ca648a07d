//! From a finished reading to the trace's report: the outcome's diagnostics, the built parts,
//! the device; and a file that is a tracesight report read back.

use super::build;
use super::options::{ErrorKind, Options, TraceError};
use super::passes::{diagnostics, hints, roofline};
use crate::analysis::model::capture::Capture;
use crate::analysis::model::collect::Collector;
use crate::report::*;
use crate::trace::Failure;
use crate::trace::{self, End, Fatal};

/// A stream that fails before any JSON, whether while sniffing or at the first read.
pub(super) fn stream_failed(file: &str, failure: Failure, message: String) -> TraceError {
    let err = |kind, message: String| TraceError { file: file.to_string(), kind, message };
    match failure {
        // The same words as a plain file cut before its first event.
        Failure::Truncated => {
            err(ErrorKind::Truncated, "truncated: the JSON ends at byte 0 before any trace event".into())
        }
        _ => err(ErrorKind::of(failure), message),
    }
}

/// Why a reading that found no trace at all failed.
pub(super) fn fatal(file: &str, f: Fatal) -> TraceError {
    let err = |kind, message: String| TraceError { file: file.to_string(), kind, message };
    match f {
        Fatal::Empty => err(ErrorKind::Empty, "empty file: no JSON in it".into()),
        Fatal::NotJson { at, found } => err(
            ErrorKind::NotJson,
            format!("not JSON at byte {at}: found {found} where a trace starts with '{{' or '['"),
        ),
        Fatal::WrongTopLevel { kind } => err(
            ErrorKind::WrongTopLevel,
            format!(
                "not a trace: the top-level JSON value is {kind}, not an object with traceEvents or an array of events"
            ),
        ),
        Fatal::Stream(failure, m) => stream_failed(file, failure, m),
        Fatal::Cancelled => err(ErrorKind::Cancelled, "cancelled".into()),
    }
}

/// Turns what the reader found into the trace's report, or says why there is none.
pub(super) fn conclude(
    file: &str,
    collector: Collector,
    read: Result<trace::Outcome, Fatal>,
    opts: &Options,
    capture: Option<Capture>,
) -> Result<TraceReport, TraceError> {
    let err = |kind, message: String| TraceError { file: file.to_string(), kind, message };
    let outcome = read.map_err(|f| fatal(file, f))?;
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
    Ok(report(file, collector, &outcome, opts, capture))
}

pub(super) fn report(
    file: &str,
    c: Collector,
    outcome: &trace::Outcome,
    opts: &Options,
    capture: Option<Capture>,
) -> TraceReport {
    let (b, c) = build::build(c, opts, capture);
    let mut r = TraceReport {
        file: file.to_string(),
        events: outcome.events,
        json_bytes: outcome.bytes,
        device: device_info(&c),
        rank: c.meta.rank,
        world_size: c.meta.world_size,
        distributed_backend: c.meta.backend.clone(),
        diagnostics: diagnostics::diagnostics(&c, outcome, &b.extra, b.report.critical_path.as_ref()),
        ..b.report
    };
    r.efficiency = efficiency(&c, b.work, &r, opts);
    r.hints = hints::hints(&r, &b.extra);
    r
}

/// The work sums measured against the main device's peaks (the table's, or the user's).
fn efficiency(c: &Collector, work: roofline::WorkSums, r: &TraceReport, opts: &Options) -> Option<Efficiency> {
    let d = main_device(c);
    let device = d.and_then(|d| {
        let compute = d.compute_major.zip(d.compute_minor);
        roofline::peaks::lookup(d.name.as_deref().unwrap_or(""), d.num_sms, compute, d.total_global_mem)
    });
    let peaks = roofline::with_user(device.map(roofline::table_peaks), &opts.peaks);
    let unknown_device = match (device, d) {
        (None, Some(d)) => {
            Some(d.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "a device with no name".into()))
        }
        _ => None,
    };
    roofline::finish(
        work,
        roofline::Finish {
            peaks,
            unknown_device,
            span_us: r.gpu.span_us,
            steps: r.steps.iter().map(|s| (s.name.as_str(), s.span_us)).collect(),
            training: r.training,
            model: opts.model,
            top_n: opts.top_n,
        },
    )
}

/// The device the GPU rows ran on most, else the first listed.
fn main_device(c: &Collector) -> Option<&trace::Device> {
    // Counted per lane (no row decoded), then per device.
    let mut per_lane = vec![0u64; c.gpu.lanes().len()];
    for i in 0..c.gpu.len() {
        per_lane[c.gpu.lane_of(i) as usize] += 1;
    }
    let mut counts: Vec<(i32, u64)> = Vec::new();
    for (&(device, _), &n) in c.gpu.lanes().iter().zip(&per_lane).filter(|(_, &n)| n > 0) {
        match counts.iter_mut().find(|(d, _)| *d == device) {
            Some(e) => e.1 += n,
            None => counts.push((device, n)),
        }
    }
    let main = counts.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|x| x.0 as i64);
    let devs = &c.meta.devices;
    main.and_then(|m| devs.iter().find(|d| d.id == Some(m))).or_else(|| devs.first())
}

pub(super) fn device_info(c: &Collector) -> DeviceInfo {
    let devs = &c.meta.devices;
    let Some(d) = main_device(c) else {
        return DeviceInfo { count: devs.len(), ..Default::default() };
    };
    DeviceInfo {
        name: d.name.clone(),
        sm_count: d.num_sms,
        compute_capability: match (d.compute_major, d.compute_minor) {
            (Some(a), Some(b)) => Some(format!("{a}.{b}")),
            _ => None,
        },
        memory_gb: d.total_global_mem.map(|b| (b as f64 / (1u64 << 30) as f64 * 10.0).round() / 10.0),
        count: devs.len(),
    }
}
