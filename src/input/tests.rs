//! The importer interface and its dispatch: the edge's neutral events, and which format the
//! first bytes choose (plain and gzip, however the bytes are cut).

use super::formats::Format;
use super::*;
use crate::trace::{Device, Event, GpuKind, Kind, Meta, Phase, Sink};
use std::io::Write;

/// An event as the sink saw it, owned.
#[derive(Debug, PartialEq)]
struct Seen {
    phase: Phase,
    kind: Kind,
    name: String,
    thread: Option<i64>,
    start: Option<i64>,
    dur: Option<i64>,
    correlation: Option<i64>,
}

#[derive(Default)]
struct Recorder {
    events: Vec<Seen>,
    meta: Vec<Meta>,
    malformed: Vec<u64>,
}

impl Sink for Recorder {
    fn event(&mut self, ev: &Event<'_>) {
        self.events.push(Seen {
            phase: ev.phase,
            kind: ev.kind,
            name: String::from_utf8_lossy(ev.name).into_owned(),
            thread: ev.thread.as_int(),
            start: ev.start,
            dur: ev.dur,
            correlation: ev.args.and_then(|a| a.correlation).and_then(|c| c.as_i64()),
        });
    }
    fn metadata(&mut self, meta: Meta) {
        self.meta.push(meta);
    }
    fn malformed(&mut self, offset: u64, _why: &str) {
        self.malformed.push(offset);
    }
}

const TRACE: &str = r#"{"deviceProperties": [{"id": 0, "name": "H100", "numSms": "132", "computeMajor": 9.0}],
 "traceEvents": [
  {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 1.5, "dur": 2, "args": {"correlation": 5}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 1, "dur": 0.25},
  {"ph": "i", "name": "[memory]", "pid": 1, "tid": 2, "ts": 3, "args": {"Bytes": 512}},
  {"ph": "s", "cat": "ac2g", "name": "flow", "pid": 1, "tid": 2, "ts": 4},
  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2},
  {"ph": "X", "cat": "Something New", "name": "n", "pid": 1, "tid": 2, "ts": 5},
  7
 ],
 "distributedInfo": {"rank": "3", "world_size": 8, "backend": "nccl"}}"#;

fn seen(phase: Phase, kind: Kind, name: &str, thread: i64, times: (Option<i64>, Option<i64>)) -> Seen {
    Seen { phase, kind, name: name.into(), thread: Some(thread), start: times.0, dur: times.1, correlation: None }
}

#[test]
fn the_chrome_json_edge_hands_on_typed_events_and_metadata() {
    let (r, imported) = import_from(TRACE.as_bytes(), Recorder::default(), 64, &mut |_| true);
    let Imported::Reading(Ok(outcome)) = imported else { panic!("not a reading: {imported:?}") };
    assert_eq!((outcome.events, r.malformed.len()), (6, 1));
    let kernel = Seen {
        correlation: Some(5),
        ..seen(Phase::Complete, Kind::Gpu(GpuKind::Kernel), "k", 7, (Some(1500), Some(2000)))
    };
    let want = vec![
        kernel,
        seen(Phase::Complete, Kind::Runtime, "cudaLaunchKernel", 2, (Some(1000), Some(250))),
        // Times are read for spans and memory events only.
        seen(Phase::Memory, Kind::Missing, "[memory]", 2, (Some(3000), None)),
        // Flow events are read for their phase and category alone (chrome_json/flow.rs).
        Seen { thread: None, ..seen(Phase::Flow, Kind::Ignored, "", 0, (None, None)) },
        seen(Phase::Metadata, Kind::Missing, "thread_name", 2, (None, None)),
        seen(Phase::Complete, Kind::Unknown, "n", 2, (Some(5000), None)),
    ];
    assert_eq!(r.events, want);
    let h100 = Device {
        id: Some(0),
        name: Some("H100".into()),
        num_sms: Some(132),
        compute_major: Some(9),
        ..Device::default()
    };
    let distributed = Meta::Distributed { rank: Some(3), world_size: Some(8), backend: Some("nccl".into()) };
    assert_eq!(r.meta, vec![Meta::Devices(vec![h100]), distributed]);
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Pushes `bytes` into the dispatch in pieces of `piece` bytes.
fn pushed(bytes: &[u8], piece: usize) -> (Option<Format>, Recorder, Imported) {
    let mut import = Import::new(Recorder::default());
    for p in bytes.chunks(piece) {
        import.push(Bytes::Slice(p));
    }
    let format = import.format();
    let (sink, imported) = import.finish(None);
    (format, sink, imported)
}

#[test]
fn the_dispatch_tells_the_formats_apart_plain_or_gzip_in_any_pieces() {
    // Not a report this version reads: the report importer says so, and no event is pushed.
    let report = format!(" \n{{ \"tool_version\": \"0\", \"pad\": \"{}\" }}", "x".repeat(600));
    for bytes in [report.as_bytes().to_vec(), gzip(report.as_bytes())] {
        assert_eq!(sniff::format(&bytes[..bytes.len().min(sniff::SNIFF)]), Format::Report);
        for piece in [1, 7, 4096] {
            let (format, sink, imported) = pushed(&bytes, piece);
            // Shorter than the sniffed prefix: decided when the input ends.
            assert_eq!(format, (bytes.len() >= sniff::SNIFF).then_some(Format::Report));
            assert!(sink.events.is_empty());
            match imported {
                Imported::Report(Err(ImportError::Unreadable(m))) => assert!(m.contains("cannot be read"), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }
    for bytes in [TRACE.as_bytes().to_vec(), gzip(TRACE.as_bytes())] {
        for piece in [1, 7, 4096] {
            let (format, sink, imported) = pushed(&bytes, piece);
            assert_eq!(format, (bytes.len() >= sniff::SNIFF).then_some(Format::ChromeJson));
            assert_eq!(sink.events.len(), 6);
            assert!(matches!(imported, Imported::Reading(Ok(ref o)) if o.events == 6), "{imported:?}");
        }
    }
}

#[test]
fn a_report_cut_short_is_a_stream_failure_not_a_parse_error() {
    let report = format!("{{\"tool_version\": \"0\", \"traces\": [{}]}}", "1,".repeat(400));
    let gz = gzip(report.as_bytes());
    let (_, _, imported) = pushed(&gz[..gz.len() - 12], 100);
    assert!(matches!(imported, Imported::Report(Err(ImportError::Stream(Failure::Truncated, _)))), "{imported:?}");
}

/// Gzip that inflates to a few hundred times its size, in one compressed piece: the pull
/// dispatch reports progress (in compressed bytes) as it inflates, not once per piece it
/// reads, and a cancel there stops the reading at once.
#[test]
fn the_pull_dispatch_reports_progress_and_cancels_while_inflating() {
    let event = r#"{"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1}"#;
    let n = 100_000;
    let json = format!("[{}]", vec![event; n].join(","));
    let gz = gzip(json.as_bytes());
    let chunk = 256 << 10;
    assert!(gz.len() <= chunk, "one compressed piece: {} bytes", gz.len());
    let (mut calls, mut last) = (0u64, 0u64);
    let (sink, imported) = import_from(&gz[..], Recorder::default(), chunk, &mut |taken| {
        assert!(taken >= last && taken <= gz.len() as u64, "{taken} after {last}");
        (calls, last) = (calls + 1, taken);
        true
    });
    assert!(matches!(imported, Imported::Reading(Ok(ref o)) if o.events == n as u64), "{imported:?}");
    assert_eq!(sink.events.len(), n);
    // One report per half chunk inflated, and the last at the end of the input.
    assert!(calls >= (json.len() / (chunk / 2)) as u64, "{calls} calls for {} bytes", json.len());
    assert_eq!(last, gz.len() as u64);

    let mut calls = 0;
    let (sink, imported) = import_from(&gz[..], Recorder::default(), chunk, &mut |_| {
        calls += 1;
        calls < 3
    });
    assert_eq!(calls, 3);
    assert!(matches!(imported, Imported::Reading(Ok(ref o)) if o.end == crate::trace::End::Cancelled), "{imported:?}");
    assert!(!sink.events.is_empty() && sink.events.len() < n / 4, "{} events", sink.events.len());
}
