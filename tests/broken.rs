//! Hostile and broken input: every entry of the corpus (`tests/common/corpus.rs`) with its
//! exact outcome: the error kind and message, or the report's event count and its error and
//! warning diagnostics (id and severity). The same situation gets the same outcome on every
//! input path: plain, gzip, and read 7 bytes at a time.

mod common;
#[path = "common/corpus.rs"]
mod corpus;

use common::Trickle;
use tracesight::{analyze_reader, Options, TraceError};

/// A one-line summary of an outcome: `error Kind: message`, or
/// `report N events: id/severity, ...`.
fn outcome(r: &Result<tracesight::TraceReport, TraceError>) -> String {
    match r {
        Err(e) => format!("error {:?}: {}", e.kind, e.message),
        Ok(t) => {
            let d: Vec<String> = t.diagnostics.iter().map(|d| format!("{}/{}", d.id, d.severity)).collect();
            format!("report {} events: {}", t.events, d.join(", "))
        }
    }
}

fn run(name: &str, bytes: &[u8]) -> String {
    outcome(&analyze_reader(name, bytes, &Options::default(), &mut |_| true))
}

fn expected(name: &str) -> &'static str {
    match name {
        "empty.json" => "error Empty: empty file: no JSON in it",
        "whitespace.json" => "error Empty: empty file: no JSON in it",
        "not-json.json" => "error NotJson: not JSON at byte 0: found 'P' where a trace starts with '{' or '['",
        "text.json" => "error NotJson: not JSON at byte 0: found 't' where a trace starts with '{' or '['",
        "object-not-trace.json" => "error NotATrace: not a trace: the JSON object has no traceEvents array",
        "number.json" => "error WrongTopLevel: not a trace: the top-level JSON value is a number, not an object with traceEvents or an array of events",
        "cut-mid-string.json" => "report 2 events: truncated/error, no_gpu_rows/warning",
        "cut-mid-number.json" => "report 3 events: truncated/error",
        "cut-mid-key.json" => "report 1 events: truncated/error, no_gpu_rows/warning",
        "cut-mid-event.json" => "report 2 events: truncated/error, no_gpu_rows/warning",
        "cut-before-events.json" => "error Truncated: truncated: the JSON ends at byte 33 before any trace event",
        // Half the compressed stream: which event that falls in depends on the compressor
        // (flate2's, on zlib-rs); src/input/gunzip_tests.rs holds the reader to reading at
        // least what an independent inflater reads of every cut.
        "gzip-cut-short.json.gz" => "report 378 events: truncated/error",
        "gzip-cut-before-events.json.gz" => "error Truncated: truncated: the JSON ends at byte 0 before any trace event",
        "gzip-cut-in-trailer.json.gz" => "report 7 events: truncated/error",
        "gzip-bad-crc.json.gz" => "report 7 events: corrupt_gzip/error",
        "gzip-wrong-isize.json.gz" => "report 7 events: corrupt_gzip/error",
        "gzip-header-then-garbage.json.gz" => "error Corrupt: corrupt gzip data (corrupt deflate stream)",
        "gzip-garbage-after-member.json.gz" => "report 7 events: corrupt_gzip/error",
        "gzip-concatenated-members.json.gz" => "report 7 events: ",
        "invalid-utf8-name.json" => "report 3 events: dangling_correlation/info, unattributed_gpu_rows/info",
        "lone-surrogate-name.json" => "report 3 events: dangling_correlation/info, unattributed_gpu_rows/info",
        "nan-timestamp.json" => "report 2 events: invalid_json/error, unattributed_gpu_rows/info",
        "infinity-duration.json" => "report 2 events: invalid_json/error, unattributed_gpu_rows/info",
        "trailing-commas.json" => "report 4 events: unattributed_gpu_rows/info, stray_commas/info",
        "trailing-object.json" => "report 5 events: trailing_data/warning",
        "duplicate-keys.json" => "report 2 events: unattributed_gpu_rows/info",
        "number-beyond-u64.json" => "report 4 events: missing_timestamp/warning, unattributed_gpu_rows/info, gpu_row_without_correlation/info",
        "deeply-nested-args.json" => "report 5 events: unattributed_gpu_rows/info, gpu_row_without_correlation/info",
        "deeply-nested-element.json" => "report 4 events: malformed_event/warning, unattributed_gpu_rows/info",
        "deeply-nested-metadata.json" => "report 2 events: unattributed_gpu_rows/info",
        "huge-name.json" => "report 3 events: dangling_correlation/info, unattributed_gpu_rows/info, long_name/warning",
        "out-of-time-order.json" => "report 6 events: unattributed_gpu_rows/info",
        "negative-duration.json" => "report 2 events: negative_duration/warning, unattributed_gpu_rows/info, zero_duration_gpu_rows/info",
        "missing-duration.json" => "report 2 events: unattributed_gpu_rows/info, zero_duration_gpu_rows/info",
        "kernel-without-launch.json" => "report 1 events: dangling_correlation/info, unattributed_gpu_rows/info",
        "launch-without-kernel.json" => "report 3 events: unattributed_gpu_rows/info",
        "overlapping-kernels-one-stream.json" => "report 4 events: unattributed_gpu_rows/info",
        "value-too-large.json" => "report 2 events: value_too_large/error, unattributed_gpu_rows/info",
        _ => "?",
    }
}

#[test]
fn every_entry_has_its_exact_outcome() {
    let mut wrong = Vec::new();
    for (name, bytes) in corpus::small() {
        let got = run(name, &bytes);
        if got != expected(name) {
            wrong.push(format!("        \"{name}\" => \"{}\",", got.replace('"', "\\\"")));
        }
    }
    assert!(wrong.is_empty(), "unexpected outcomes:\n{}", wrong.join("\n"));
}

/// The same bytes plain, gzip-compressed, and read 7 bytes at a time through 64-byte chunks
/// give the same outcome (gzip entries: the same through the trickle).
#[test]
fn every_input_path_gives_the_same_outcome() {
    for (name, bytes) in corpus::small() {
        let want = run(name, &bytes);
        if bytes.len() < (1 << 20) {
            let trickle = analyze_reader(
                name,
                Trickle { data: &bytes, n: 7 },
                &Options { chunk_size: 64, ..Options::default() },
                &mut |_| true,
            );
            assert_eq!(outcome(&trickle), want, "{name} read 7 bytes at a time");
        }
        if !name.ends_with(".gz") {
            assert_eq!(run(name, &corpus::gzip(&bytes)), want, "{name} gzip-compressed");
        }
    }
}

/// A plain file cut short and a gzip file cut short are both `truncated`, with the same
/// message shape, whatever the input path.
#[test]
fn truncation_is_truncated_on_every_path() {
    let t = corpus::trace(400);
    let plain = &t.as_bytes()[..t.len() / 2];
    let gz = corpus::gzip(t.as_bytes());
    for (name, bytes) in
        [("plain", plain.to_vec()), ("gzip of the cut", corpus::gzip(plain)), ("gzip cut", gz[..gz.len() / 2].to_vec())]
    {
        let r = analyze_reader(name, &bytes[..], &Options::default(), &mut |_| true).unwrap();
        let ids: Vec<String> = r.diagnostics.iter().map(|d| d.id.to_string()).collect();
        assert_eq!(ids[0], "truncated", "{name}: {ids:?}");
        assert!(r.diagnostics[0].message.starts_with("the file is cut short"), "{name}");
    }
}

/// A gzip bomb (~12 MB inflating to 4 GiB of tiny kernel events): read to its end with
/// progress all the way, memory bounded by the row limit (`row_limit`, a warning); its one
/// step is too large for a critical path (`path_step_too_large`).
#[test]
fn gzip_bomb_streams_with_progress_to_the_end() {
    let bomb = corpus::gzip_bomb(64);
    assert!(bomb.len() < 16 << 20, "{} bytes", bomb.len());
    let (mut calls, mut last) = (0u64, 0u64);
    let r = analyze_reader("bomb.json.gz", &bomb[..], &Options::default(), &mut |consumed| {
        assert!(consumed >= last);
        last = consumed;
        calls += 1;
        true
    });
    assert_eq!(last, bomb.len() as u64, "progress reaches the end of the input");
    assert!(calls > 1000, "{calls} progress calls");
    let r = r.unwrap();
    assert!(r.json_bytes > 4_000_000_000, "{} bytes of JSON", r.json_bytes);
    assert_eq!(
        outcome(&Ok(r)),
        "report 82595521 events: unattributed_gpu_rows/info, gpu_row_without_correlation/info, row_limit/warning, path_step_too_large/warning"
    );
}

/// Past the distinct-name limit, new names share one placeholder (`name_limit`).
#[test]
fn distinct_names_past_the_limit() {
    let n = tracesight::limits::MAX_NAMES + 10;
    let r = analyze_reader("names.json", &corpus::many_names(n)[..], &Options::default(), &mut |_| true).unwrap();
    let d = r.diagnostics.iter().find(|d| d.id.to_string() == "name_limit").expect("name_limit");
    assert_eq!(d.count, 10);
    assert!(r.top_kernels.iter().any(|k| k.name == tracesight::limits::OTHER_NAME));
}

/// 10 million tiny kernel events (~520 MB of JSON): slow in CI, so run on demand
/// (`cargo test --profile test-opt --test broken -- --ignored`); `scripts/broken-rss.sh`
/// measures time and peak RSS through the CLI.
#[test]
#[ignore]
fn ten_million_tiny_events() {
    let path = std::env::temp_dir().join(format!("tracesight-10m-{}.json", std::process::id()));
    corpus::tiny_events(10_000_000, &mut std::io::BufWriter::new(std::fs::File::create(&path).unwrap())).unwrap();
    let r = analyze_reader("10m.json", std::fs::File::open(&path).unwrap(), &Options::default(), &mut |_| true);
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        outcome(&r),
        "report 10000000 events: unattributed_gpu_rows/info, gpu_row_without_correlation/info, row_limit/warning, path_step_too_large/warning"
    );
}

/// Inputs the fuzzers found (tests/fixtures/fuzz), kept as regression cases: each reads to
/// the same outcome in one slice, through 16-byte chunks, and gzip-compressed.
#[test]
fn fuzz_regressions() {
    let dir = common::fixture("fuzz");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let whole = run(&name, &bytes);
        let tiny = analyze_reader(&name, &bytes[..], &Options { chunk_size: 16, ..Options::default() }, &mut |_| true);
        assert_eq!(outcome(&tiny), whole, "{name}: 16-byte chunks");
        if !bytes.starts_with(&[0x1f, 0x8b]) {
            assert_eq!(run(&name, &corpus::gzip(&bytes)), whole, "{name}: gzip");
        }
        n += 1;
    }
    assert!(n >= 3);
}
