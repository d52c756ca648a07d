//! Reader tests: structure, chunk boundaries, and every way input can be bad.

use super::*;
use serde_json::value::RawValue;
use std::io::Read;

/// The scanner on one event, as a value.
pub(super) fn scanned(text: &[u8]) -> Result<(RawEvent<'_>, usize), scan::Miss> {
    let mut ev = RawEvent::default();
    scan::event(text, &mut ev).map(|n| (ev, n))
}

#[derive(Default)]
struct Names {
    events: Vec<String>,
    meta: Vec<String>,
    malformed: Vec<u64>,
}

impl Sink for Names {
    fn event(&mut self, ev: &RawEvent<'_>, _offset: u64) {
        self.events.push(ev.name.to_str().into_owned());
    }
    fn metadata(&mut self, key: &str, _value: &RawValue) {
        self.meta.push(key.to_string());
    }
    fn malformed(&mut self, offset: u64, _why: &str) {
        self.malformed.push(offset);
    }
}

/// Reads a whole trace from `reader` in chunks of `chunk` bytes (tests use tiny ones) into a
/// [`PushReader`], as the pull dispatch (`input::import_from`) does with the Chrome-JSON
/// importer, but with the JSON sink, so the tests see the raw events.
fn read_trace_chunked<R: Read, S: JsonSink>(
    mut reader: R,
    sink: &mut S,
    progress: &mut dyn FnMut(u64) -> bool,
    chunk: usize,
) -> Result<Outcome, Fatal> {
    let mut push = PushReader::new();
    let mut buf = vec![0; chunk.max(16)];
    let mut total = 0u64;
    let ending = loop {
        // Fill the buffer at least half, so tiny reads (a reader handing out 7 bytes at a
        // time) do not turn into one parse attempt per read.
        let (n, failed) = crate::input::fill_half(&mut reader, &mut buf);
        if n > 0 {
            total += n as u64;
            if !progress(total) {
                break Ending::Cancelled;
            }
            push.feed(&buf[..n], sink);
        }
        if let Some(e) = failed {
            break Ending::Failed(e);
        }
        if n == 0 || !push.wants_more() {
            break Ending::Eof;
        }
    };
    push.finish(sink, ending)
}

fn read(text: &str, chunk: usize) -> (Result<Outcome, Fatal>, Names) {
    let mut s = Names::default();
    let r = read_trace_chunked(text.as_bytes(), &mut s, &mut |_| true, chunk);
    (r, s)
}

#[test]
fn metadata_before_and_after_events_at_every_chunk_size() {
    let text = r#"{"a": {"x": [1, 2, {"y": "}"}]}, "traceEvents": [{"name": "e1", "ts": 1.5}, {"name": "e\"2", "ts": 1e3} ], "b": 12345678901234567890, "c": "z"}"#;
    for chunk in [16, 17, 23, 64, 4096] {
        let (r, s) = read(text, chunk);
        let o = r.unwrap();
        assert_eq!(o.end, End::Complete, "chunk {chunk}");
        assert_eq!(s.events, vec!["e1", "e\"2"], "chunk {chunk}");
        assert_eq!(s.meta, vec!["a", "b", "c"], "chunk {chunk}");
        assert!(!o.trailing_bytes);
    }
}

#[test]
fn bare_array_and_empty_arrays() {
    let (r, s) = read(r#"[{"name": "a"}, {"name": "b"}]"#, 16);
    assert_eq!(r.unwrap().events, 2);
    assert_eq!(s.events, vec!["a", "b"]);
    let (r, _) = read("[]", 16);
    assert_eq!(r.unwrap().events, 0);
    let (r, _) = read(r#"{"traceEvents": []}"#, 16);
    let o = r.unwrap();
    assert!(o.found_events && o.events == 0);
}

#[test]
fn malformed_elements_are_skipped_and_counted() {
    let text = r#"[{"name": "a"}, 17, {"name": "b", "ts": {"no": 1}}, {"name": ["x"]}, {"name": "c"},]"#;
    for chunk in [16, 4096] {
        let (r, s) = read(text, chunk);
        let o = r.unwrap();
        assert_eq!(o.end, End::Complete);
        assert_eq!(s.events, vec!["a", "b", "c"], "ts of the wrong type is left to the analysis");
        assert_eq!(s.malformed.len(), 2, "chunk {chunk}");
        assert_eq!(s.malformed[0], 16);
        assert_eq!(o.stray_commas, 1);
    }
}

#[test]
fn truncated_input_keeps_what_was_read() {
    let text = r#"{"traceEvents": [{"name": "a", "ts": 1}, {"name": "b", "ts": 2}, {"name": "c", "ts": 3"#;
    for chunk in [16, 4096] {
        let (r, s) = read(text, chunk);
        let o = r.unwrap();
        assert_eq!(s.events, vec!["a", "b"]);
        assert_eq!(o.end, End::Truncated { at: text.len() as u64 }, "chunk {chunk}");
    }
    // Cut inside a number right after the decimal point.
    let (r, s) = read(r#"[{"name": "a", "ts": 1.5}, {"name": "b", "ts": 2."#, 16);
    assert!(matches!(r.unwrap().end, End::Truncated { .. }));
    assert_eq!(s.events, vec!["a"]);
}

#[test]
fn syntax_errors_report_byte_offsets() {
    let text = "{\"traceEvents\": [{\"name\": \"a\"},\n {\"name\": \"b\" \"x\": 1}]}";
    let (r, s) = read(text, 4096);
    assert_eq!(s.events, vec!["a"]);
    match r.unwrap().end {
        End::Invalid { at, .. } => assert_eq!(at, text.find("\"x\"").unwrap() as u64),
        other => panic!("{other:?}"),
    }
}

#[test]
fn not_a_trace() {
    assert_eq!(read("", 16).0, Err(Fatal::Empty));
    assert_eq!(read("  \n ", 16).0, Err(Fatal::Empty));
    assert_eq!(read("\"hello\"", 16).0, Err(Fatal::WrongTopLevel { kind: "a string" }));
    assert_eq!(read("42", 16).0, Err(Fatal::WrongTopLevel { kind: "a number" }));
    assert_eq!(read("null", 16).0, Err(Fatal::WrongTopLevel { kind: "null" }));
    assert!(matches!(read("hello world", 16).0, Err(Fatal::NotJson { at: 0, .. })));
    assert!(matches!(read("these are my notes", 16).0, Err(Fatal::NotJson { at: 0, .. })));
    assert!(matches!(read("nothing", 16).0, Err(Fatal::NotJson { at: 0, .. })));
    assert_eq!(read("true", 16).0, Err(Fatal::WrongTopLevel { kind: "a boolean" }));
    assert!(matches!(read("\u{1}\u{2}binary", 16).0, Err(Fatal::NotJson { .. })));
    let (r, _) = read(r#"{"foo": 1}"#, 16);
    assert!(!r.unwrap().found_events);
}

#[test]
fn trailing_data_is_flagged() {
    let (r, _) = read(r#"[{"name": "a"}] garbage"#, 16);
    let o = r.unwrap();
    assert_eq!(o.end, End::Complete);
    assert!(o.trailing_bytes);
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let deep = format!(r#"[{{"name": "a", "args": {}{}}}]"#, "[".repeat(100_000), "]".repeat(100_000));
    let (r, s) = read(&deep, 4096);
    // serde_json's recursion limit stops the typed parse; the element is then skipped
    // (serde_json skips values iteratively), so the reader goes on without a crash.
    assert!(s.events.is_empty());
    assert_eq!(s.malformed.len(), 1);
    assert_eq!(r.unwrap().end, End::Complete);
}

#[test]
fn cancel_stops_reading() {
    let text = format!("[{}]", vec![r#"{"name": "a"}"#; 1000].join(","));
    let mut s = Names::default();
    let mut calls = 0;
    let r = read_trace_chunked(
        text.as_bytes(),
        &mut s,
        &mut |_| {
            calls += 1;
            calls < 3
        },
        64,
    );
    let o = r.unwrap();
    assert_eq!(o.end, End::Cancelled);
    assert!(s.events.len() < 1000);
}
/// The same events read through the whole reader at chunk sizes that cut them anywhere,
/// against serde_json on each element.
#[test]
fn reader_agrees_with_serde_at_every_chunk_size() {
    let events = [
        r#"{"ph": "X", "name": "a", "pid": 18446744073709551615, "tid": -9223372036854775809, "ts": 1.5e3, "dur": -0, "args": {"correlation": 9223372036854775808, "External id": "12", "device": -0, "stream": 7.0, "blocks per SM": 1e-400}}"#,
        r#"{"args": {"Ext\u0065rnal id": 1, "external id": 2, "correlation": 123456789012345678901234567890}, "tid": 1.5, "pid": "stream 7", "ts": 12345678901234.567}"#,
        r#"{"name": "b", "name": "c", "args": null, "pid": 9223372036854775807, "tid": -9223372036854775808}"#,
    ];
    #[derive(Default)]
    struct Dbg(Vec<String>);
    impl Sink for Dbg {
        fn event(&mut self, ev: &RawEvent<'_>, _offset: u64) {
            self.0.push(format!("{ev:?}"));
        }
        fn metadata(&mut self, _key: &str, _value: &RawValue) {}
        fn malformed(&mut self, _offset: u64, why: &str) {
            panic!("{why}");
        }
    }
    let expected: Vec<String> =
        events.iter().map(|e| format!("{:?}", serde_json::from_str::<RawEvent>(e).unwrap())).collect();
    let text = format!("[{}]", events.join(",\n"));
    for chunk in [16, 17, 19, 23, 31, 64, 4096] {
        let mut s = Dbg::default();
        let o = read_trace_chunked(text.as_bytes(), &mut s, &mut |_| true, chunk).unwrap();
        assert_eq!(o.end, End::Complete);
        assert_eq!(s.0, expected, "chunk {chunk}");
    }
}

/// Pushes `text` in pieces of `sizes` (cycled), as the browser's reads or the CLI's inflate
/// hand them over, checking that no more than the longest value is ever held back.
fn push_in_pieces(text: &str, sizes: &[usize]) -> (Result<Outcome, Fatal>, Names) {
    let mut s = Names::default();
    let mut p = PushReader::new();
    let bytes = text.as_bytes();
    let (mut at, mut k) = (0, 0);
    while at < bytes.len() && p.wants_more() {
        let n = sizes[k % sizes.len()].min(bytes.len() - at);
        p.feed(&bytes[at..at + n], &mut s);
        assert!(p.held() <= 200, "held {} bytes", p.held());
        at += n;
        k += 1;
    }
    (p.finish(&mut s, Ending::Eof), s)
}

#[test]
fn push_reader_gives_the_same_result_at_every_piece_size() {
    let texts = [
        r#"{"a": {"x": [1, 2, {"y": "}"}]}, "traceEvents": [{"name": "e1", "ts": 1.5}, {"name": "e\"2", "ts": 1e3} ], "b": 12345678901234567890, "c": "z"}"#,
        r#"[{"name": "a"}, 17, {"name": "b", "ts": {"no": 1}}, {"name": ["x"]}, {"name": "c"},]"#,
        r#"{"traceEvents": [{"name": "a", "ts": 1}, {"name": "b", "ts": 2}, {"name": "c", "ts": 3"#,
        "\u{feff}{\"traceEvents\": [{\"name\": \"a\"},\n {\"name\": \"b\" \"x\": 1}]}",
        r#"[{"name": "a"}] garbage"#,
        "  \n [ {\"name\": \"a\", \"ts\": 2.} ]",
        "true",
        "nothing",
        "",
    ];
    for text in texts {
        let (want, w) = read(text, 1 << 16);
        for sizes in [&[1][..], &[2], &[3, 1], &[7], &[13, 5, 1], &[64]] {
            let (got, g) = push_in_pieces(text, sizes);
            assert_eq!(got, want, "{text:?} in pieces of {sizes:?}");
            assert_eq!((&g.events, &g.meta, &g.malformed), (&w.events, &w.meta, &w.malformed), "{text:?} {sizes:?}");
        }
    }
}
