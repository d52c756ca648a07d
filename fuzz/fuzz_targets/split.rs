//! A file read in parts (as the CLI's threads and the page's workers read it), the later parts
//! through their encoded form, gives the report of one reading, or is refused; never another.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracesight::analysis::report_of_parts;
use tracesight::analysis::job::split::{self, Joined, Part, PartJob, PartReader};
use tracesight::{analyze_slice, Options, TraceError, TraceReport};

/// The outcome as text.
fn text(r: Result<TraceReport, TraceError>) -> String {
    format!("{:?}", r.map(|r| serde_json::to_string(&r).unwrap()))
}

fn in_parts(data: &[u8], parts: u64) -> Option<String> {
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
        let part = reader.finish()?;
        let part = if k == 0 { part } else { Part::decode(&part.encode()).expect("decodes what it encoded") };
        joined.push(part).ok()?;
    }
    let (collector, outcome) = joined.finish()?;
    let report = report_of_parts("fuzz", collector, Ok(outcome), &Options::default());
    Some(text(report))
}

fuzz_target!(|data: &[u8]| {
    let whole = text(analyze_slice("fuzz", data, &Options::default()));
    for parts in [2, 3] {
        if let Some(got) = in_parts(data, parts) {
            assert_eq!(got, whole, "{parts} parts");
        }
    }
});
