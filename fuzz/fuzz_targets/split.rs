//! A file read in parts (as the CLI's threads and the page's workers read it), the later parts
//! through their encoded form, gives the report of one reading, or is refused; never another.
//! Read on from the first part refused (as the CLI does), it always gives that report.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracesight::analysis::job::split::{self, Joined, Part, PartJob, PartReader};
use tracesight::analysis::report_of_parts;
use tracesight::{analyze_slice, Options, TraceError, TraceReport};

/// The outcome as text.
fn text(r: Result<TraceReport, TraceError>) -> String {
    format!("{:?}", r.map(|r| serde_json::to_string(&r).unwrap()))
}

/// The report of the parts joined, or with the file read on from the first part refused
/// (`read_on`); None where the page would read the file whole (refused, not read on).
fn in_parts(data: &[u8], parts: u64, read_on: bool) -> Option<String> {
    let size = data.len() as u64;
    let layout = split::layout(&data[..data.len().min(split::HEAD_BYTES)])?;
    let found: Vec<Option<u64>> = split::targets(size, parts, layout)
        .into_iter()
        .map(|at| {
            let from = (at as usize).min(data.len());
            split::cut_in(&data[from..(from + split::CUT_WINDOW).min(data.len())]).map(|c| at + c as u64)
        })
        .collect();
    let mut joined = Joined::default();
    for (k, job) in PartJob::all(&split::cuts(size, found), layout).into_iter().enumerate() {
        let mut reader = PartReader::new(job);
        for piece in data[job.from as usize..job.to as usize].chunks(977) {
            reader.feed(piece);
        }
        let part =
            reader
                .finish()
                .map(|p| if k == 0 { p } else { Part::decode(&p.encode()).expect("decodes what it encoded") });
        match part.map(|p| joined.push(p)) {
            Some(Ok(())) => {}
            _ if read_on => {
                let mut rest = joined.rest_from(job.from, layout.in_object);
                for piece in data[job.from as usize..].chunks(977) {
                    rest.feed(piece);
                }
                let (collector, read) = rest.finish();
                return Some(text(report_of_parts("fuzz", collector, read, &Options::default())));
            }
            _ => return None,
        }
    }
    let (collector, outcome) = joined.finish()?;
    let report = report_of_parts("fuzz", collector, Ok(outcome), &Options::default());
    Some(text(report))
}

fuzz_target!(|data: &[u8]| {
    let whole = text(analyze_slice("fuzz", data, &Options::default()));
    for parts in [2, 3] {
        if let Some(got) = in_parts(data, parts, false) {
            assert_eq!(got, whole, "{parts} parts");
        }
        if split::layout(&data[..data.len().min(split::HEAD_BYTES)]).is_some() {
            assert_eq!(in_parts(data, parts, true).as_deref(), Some(whole.as_str()), "{parts} parts, read on");
        }
    }
});
