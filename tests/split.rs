//! Reading a file in parts, as the page's workers do: each part read on its own, the later
//! parts handed over in their encoded form and joined in file order, gives the report of one
//! reading, byte for byte; parts that cannot be joined exactly are refused (the page then
//! reads the file whole). On every fixture, a trace built to trap the cut finder, and every
//! plain shared real trace.

mod common;

use std::io::Read;

use common::{fixture, json_fixtures, shared_traces, trace_files};
use tracesight::analysis::job::split::{self, Joined, Part, PartJob, PartReader};
use tracesight::analysis::report_of_parts;
use tracesight::{analyze_slice, Options};

/// A trace file's JSON, inflated when it is gzip (the joining is what is checked).
fn plain_bytes(f: &std::path::Path) -> Vec<u8> {
    let bytes = std::fs::read(f).unwrap();
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return bytes;
    }
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut plain).unwrap();
    plain
}

/// The cuts that make `parts` parts of `bytes`, as the page finds them.
fn cuts_of(bytes: &[u8], parts: u64, layout: split::Layout) -> Vec<u64> {
    let size = bytes.len() as u64;
    let found = split::targets(size, parts, layout).into_iter().map(|at| {
        let from = (at as usize).min(bytes.len());
        let window = &bytes[from..(from + split::CUT_WINDOW).min(bytes.len())];
        split::cut_in(window).map(|c| at + c as u64)
    });
    split::cuts(size, found.collect::<Vec<_>>())
}

/// What the page does with a file cut into `parts` parts, read in `chunk`-byte pieces: the
/// report, or None when a part refused (a cut inside a string, a limit, late metadata). As the
/// page, the joined lists are told where each part ends (capacity only).
fn read_in_parts(name: &str, bytes: &[u8], parts: u64, chunk: usize) -> Option<String> {
    let layout = split::layout(&bytes[..bytes.len().min(split::HEAD_BYTES)])?;
    let cuts = cuts_of(bytes, parts, layout);
    assert!(cuts.windows(2).all(|w| w[0] < w[1]), "{name}: cuts out of order: {cuts:?}");
    let mut joined = Joined::default();
    for (k, job) in PartJob::all(&cuts, layout).into_iter().enumerate() {
        let mut reader = PartReader::new(job);
        for piece in bytes[job.from as usize..job.to as usize].chunks(chunk) {
            if !reader.wants_more() {
                break;
            }
            reader.feed(piece);
        }
        let part = reader.finish()?;
        // The first part stays in the joining worker; the others travel encoded.
        let part = if k == 0 { part } else { Part::decode(&part.encode()).expect("decodes what it encoded") };
        joined.progress(job.to, bytes.len() as u64);
        joined.push(part).ok()?;
    }
    let (collector, outcome) = joined.finish()?;
    let report = report_of_parts(name, collector, Ok(outcome), &Options::default());
    Some(serde_json::to_string(&report.map_err(|e| e.message)).unwrap())
}

/// What the CLI does with a file cut into `parts` parts where part `stop_at` (or the first
/// that cannot be joined, if earlier) is not joined: the parts before it joined, the rest of
/// the file read on in one go from its start, in `chunk`-byte pieces. Also says where the
/// reading went on from (the part's index; None when every part was joined). `sized`: the rest
/// told how far into the file it is, as the page's lead tells it (capacity only).
fn read_on_from(
    name: &str,
    bytes: &[u8],
    (parts, chunk): (u64, usize),
    stop_at: usize,
    sized: bool,
) -> (String, Option<usize>) {
    let layout = split::layout(&bytes[..bytes.len().min(split::HEAD_BYTES)]).unwrap();
    let jobs = PartJob::all(&cuts_of(bytes, parts, layout), layout);
    let mut joined = Joined::default();
    let mut k = 0;
    while k < stop_at.min(jobs.len()) {
        let job = jobs[k];
        let mut reader = PartReader::new(job);
        for piece in bytes[job.from as usize..job.to as usize].chunks(chunk) {
            reader.feed(piece);
        }
        let Some(part) = reader.finish() else { break };
        if joined.push(part).is_err() {
            break;
        }
        k += 1;
    }
    let on_from = (k < jobs.len()).then_some(k);
    let report = if on_from.is_none() {
        let (collector, outcome) = joined.finish().expect("every part joined");
        report_of_parts(name, collector, Ok(outcome), &Options::default())
    } else {
        let from = jobs[k].from;
        let mut rest = joined.rest_from(from, layout.in_object);
        let mut at = from;
        for piece in bytes[from as usize..].chunks(chunk) {
            at += piece.len() as u64;
            if sized {
                rest.progress(at, bytes.len() as u64);
            }
            if rest.wants_more() {
                rest.feed(piece);
            }
        }
        let (collector, read) = rest.finish();
        report_of_parts(name, collector, read, &Options::default())
    };
    (serde_json::to_string(&report.map_err(|e| e.message)).unwrap(), on_from)
}

/// Checks every way of cutting `bytes` that is tried; returns how many were joined.
fn check(name: &str, bytes: &[u8]) -> usize {
    let whole = serde_json::to_string(&analyze_slice(name, bytes, &Options::default()).map_err(|e| e.message)).unwrap();
    let mut joined = 0;
    for parts in [2, 3, 7] {
        for chunk in [1 << 20, 4093] {
            if let Some(got) = read_in_parts(name, bytes, parts, chunk) {
                assert!(
                    got == whole,
                    "{name} in {parts} parts, {chunk}-byte pieces:\n got {got:.300}\nwant {whole:.300}"
                );
                joined += 1;
            }
        }
    }
    joined
}

#[test]
fn parts_joined_across_workers_give_the_report_of_one_reading() {
    let mut files = json_fixtures();
    match shared_traces() {
        // Gzip traces are inflated here: the page splits plain files, but the joining is
        // what is checked, and real traces are where its corners are.
        Some(dir) => files.extend(trace_files(&dir)),
        None => eprintln!("skipping the shared real traces: ../shared/traces is absent"),
    }
    assert!(files.len() >= 4);
    let mut joined = 0;
    for f in &files {
        let bytes = plain_bytes(f);
        joined += check(&f.display().to_string(), &bytes);
    }
    // Every one of these files is split and joined, metadata after the events included.
    assert_eq!(joined, files.len() * 6, "some readings were refused");
}

#[test]
fn reading_on_from_any_part_gives_the_report_of_one_reading() {
    // The CLI joins parts until one cannot be (a limit reached in it, a cut inside a string)
    // and reads the rest of the file on from that part's start: from every part, on every
    // fixture and plain shared real trace, the report of one reading.
    let mut files = json_fixtures();
    if let Some(dir) = shared_traces() {
        files.extend(trace_files(&dir));
    }
    let mut read_on = 0;
    for f in &files {
        let bytes = plain_bytes(f);
        let name = f.display().to_string();
        if split::layout(&bytes[..bytes.len().min(split::HEAD_BYTES)]).is_none() {
            continue;
        }
        let whole =
            serde_json::to_string(&analyze_slice(&name, &bytes, &Options::default()).map_err(|e| e.message)).unwrap();
        for stop_at in 0..5 {
            // The CLI's (its lists grow natively as they need) and the page's (told where they are).
            for sized in [false, true] {
                let (got, from) = read_on_from(&name, &bytes, (5, 4093), stop_at, sized);
                assert!(got == whole, "{name}, read on from part {from:?}:\n got {got:.300}\nwant {whole:.300}");
                read_on += usize::from(from.is_some_and(|k| k > 0) && sized);
            }
        }
    }
    // Parts joined before reading on, on most files (small ones cut into fewer parts).
    assert!(read_on >= 3 * files.len(), "{read_on} of {} files x 4", files.len());
}

#[test]
fn a_limit_reached_in_a_part_is_read_on_from_that_part() {
    // More distinct kernel names than the name limit: the part that crosses it cannot be
    // joined (the limit's placeholder would fall elsewhere), and reading on from it gives
    // what one reading gives, the limit reached at the same name.
    let n = tracesight::limits::MAX_NAMES + 20_000;
    let mut events = Vec::with_capacity(n);
    for i in 0..n {
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"k{i}","pid":0,"tid":7,"ts":{},"dur":3,"args":{{"correlation":{i},"stream":7}}}}"#,
            i * 10
        ));
    }
    let trace = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
    let bytes = trace.as_bytes();
    let whole = analyze_slice("names", bytes, &Options::default()).unwrap();
    let over = whole.diagnostics.iter().find(|d| d.id == tracesight::vocab::DiagnosticId::NameLimit);
    assert_eq!(over.map(|d| d.count), Some(20_000), "{:?}", whole.diagnostics);
    let whole = serde_json::to_string(&Ok::<_, String>(whole)).unwrap();
    let (got, from) = read_on_from("names", bytes, (4, 1 << 20), usize::MAX, true);
    assert!(matches!(from, Some(1..=3)), "the join stopped at part {from:?}, not at the limit");
    assert!(got == whole, "read on from part {from:?}:\n got {got:.300}\nwant {whole:.300}");
}

#[test]
fn a_cut_inside_a_string_is_refused_not_misread() {
    // Every name holds `},{},`: `}`, a comma, a whole object and a comma, candidate cuts inside
    // strings that look right to the cut finder; the part before such a cut does not end
    // between events, so it is refused.
    let mut events = Vec::new();
    for i in 0..300 {
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"k{i} }},{{}}, x","pid":0,"tid":7,"ts":{},"dur":3,"args":{{"correlation":{i},"stream":7}}}}"#,
            i * 10
        ));
    }
    let trace = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
    let bytes = trace.as_bytes();
    let mut refused = 0;
    for parts in 2..12 {
        match read_in_parts("trap", bytes, parts, 1000) {
            None => refused += 1,
            Some(got) => {
                let whole =
                    serde_json::to_string(&analyze_slice("trap", bytes, &Options::default()).map_err(|e| e.message))
                        .unwrap();
                assert_eq!(got, whole, "{parts} parts");
            }
        }
    }
    assert!(refused > 0, "the trap never put a candidate cut inside a string");
    // Where the CLI reads on from the refused part instead, the report is one reading's.
    let whole =
        serde_json::to_string(&analyze_slice("trap", bytes, &Options::default()).map_err(|e| e.message)).unwrap();
    for parts in 2..12 {
        assert_eq!(read_on_from("trap", bytes, (parts, 1000), usize::MAX, false).0, whole, "{parts} parts");
    }
}

#[test]
fn gzip_reports_and_non_json_are_not_split() {
    assert_eq!(split::layout(&[0x1f, 0x8b, 8, 0]), None);
    assert_eq!(split::layout(b"{\"tool_version\": \"0.1.0\", \"traces\": []}"), None);
    assert_eq!(split::layout(b"hello"), None);
    let l = split::layout(b"  [{\"ph\":\"X\"}]").unwrap();
    assert!(!l.in_object);
    let l = split::layout(b"{\"deviceProperties\":[{},{}],\"traceEvents\":[]}").unwrap();
    assert!(l.in_object);
    assert_eq!(l.events_at, 28);
    // No target falls among the device properties.
    assert!(split::targets(1000, 4, l).iter().all(|&t| t > 28));
}

#[test]
fn damaged_part_bytes_are_refused() {
    let bytes = std::fs::read(fixture("current_schema.json")).unwrap();
    let mut reader = PartReader::new(PartJob { from: 0, to: bytes.len() as u64, last: true, in_object: true });
    reader.feed(&bytes);
    let encoded = reader.finish().expect("a whole file is one part").encode();
    assert!(Part::decode(&encoded).is_some());
    assert!(Part::decode(&encoded[..encoded.len() / 2]).is_none(), "a cut-short part decodes");
    assert!(Part::decode(b"").is_none());
}

#[test]
fn metadata_after_the_events_is_joined_as_one_reading_reads_it() {
    // Current Kineto writes `deviceProperties` and `distributedInfo` after the events; a key
    // given twice takes its later value.
    let mut events = Vec::new();
    for i in 0..200 {
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"ampere_sgemm_{}","pid":0,"tid":7,"ts":{},"dur":3,"args":{{"correlation":{i},"stream":7}}}}"#,
            i % 5,
            i * 10
        ));
    }
    let trace = format!(
        r#"{{"distributedInfo":{{"backend":"gloo","rank":1,"world_size":2}},"traceEvents":[{}],
        "deviceProperties":[{{"id":0,"name":"NVIDIA H100 80GB HBM3","numSms":132,"computeMajor":9,"computeMinor":0,"totalGlobalMem":85000000000}}],
        "distributedInfo":{{"backend":"nccl","rank":3,"world_size":8}}}}"#,
        events.join(",")
    );
    let whole = analyze_slice("meta", trace.as_bytes(), &Options::default()).unwrap();
    assert_eq!(whole.rank, Some(3), "the later distributedInfo wins in one reading");
    assert!(check("meta", trace.as_bytes()) == 6, "a split with late metadata was refused");
}

#[test]
fn parts_shrink_towards_the_end_so_that_threads_finish_together() {
    let l = split::layout(b"[{}]").unwrap();
    // 100 bytes in parts of 10 on two threads: 10 while more than 40 are left, then the rest
    // over four, down to one byte (a sixteenth of 10, at least one).
    let mut want: Vec<u64> = (1..=7).map(|k| 10 * k).collect();
    want.extend([77, 82, 86, 89, 91, 93, 94, 95, 96, 97, 98, 99]);
    assert_eq!(split::part_targets(100, 10, 2, l), want);
    // 500 MB in 32 MB parts on two threads: the last parts are 2 MB, none is larger than 32 MB,
    // and the parts never grow.
    const MB: u64 = 1 << 20;
    let mut ends = split::part_targets(500 * MB, 32 * MB, 2, l);
    ends.insert(0, 0);
    ends.push(500 * MB);
    let sizes: Vec<u64> = ends.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(sizes.iter().all(|&s| s > 0 && s <= 32 * MB), "{sizes:?}");
    assert!(sizes.windows(2).all(|w| w[1] <= w[0]), "{sizes:?}");
    assert_eq!(sizes.iter().filter(|&&s| s == 32 * MB).count(), 12, "{sizes:?}");
    assert!(sizes[sizes.len() - 2] == 2 * MB, "{sizes:?}");
    // No target before the events; a file smaller than a part's least is one part.
    let late = split::layout(b"{\"deviceProperties\":[{},{}],\"traceEvents\":[]}").unwrap();
    assert!(split::part_targets(1000, 100, 2, late).iter().all(|&t| t > 28));
    assert_eq!(split::part_targets(5, 100, 2, l), Vec::<u64>::new());
}
