//! Reading a large plain-JSON file in parts: the lead worker finds the cuts, reads the first
//! part and joins the parts the other workers read and encode (`read_part`), reading on itself
//! from a part that cannot be joined.

use super::mailbox::*;
use super::progress::*;
use super::reader::*;
use crate::analysis::job::split::{self, Joined, Part, PartJob, PartReader};
use crate::web::protocol::{ToPage, ToWorker};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::{Blob, DedicatedWorkerGlobalScope};

/// A lone file is read in parts only with at least this many cores. The browser's own threads
/// (each worker's reader, the wasm's optimising compile, the page) keep a core busy beside the
/// parsing: on two cores two workers read 500 MB 1.03-1.12x slower than one in Chromium and
/// 1.2-1.35x in Firefox (three rounds alternating, `CORES=1` / `2 node
/// scripts/bench-page.mjs`), with the lead's memory 97 against 65 MiB.
pub(super) const MIN_SPLIT_WORKERS: u32 = 3;

/// Leads the reading of a large plain-JSON file in `workers` parts: the result and the number
/// of pieces it was read in, or None when the file is not one to split or its first part
/// could not be read as one (the caller then reads it whole). Where a later part cannot be
/// joined exactly (it did not end where the next starts, a limit was reached in it), the parts
/// before it stay joined and this worker reads the file on from that part's start, into them
/// (`Joined::rest_from`, as the CLI does): the pieces are then the parts joined and the rest.
pub(super) async fn analyse_in_parts(
    scope: &DedicatedWorkerGlobalScope,
    name: &str,
    blob: Blob,
    workers: u32,
    opts: &crate::analysis::Options,
    scratch: &mut Vec<u8>,
) -> Option<(Result<Vec<crate::report::TraceReport>, crate::analysis::TraceError>, u32)> {
    let size = blob.size() as u64;
    if workers < MIN_SPLIT_WORKERS || size < split::MIN_SPLIT_BYTES {
        return None;
    }
    let head = read_bytes(&blob, 0, split::HEAD_BYTES as u64, size).await.ok()?;
    let layout = split::layout(&head)?;
    let mut found = Vec::new();
    for at in split::targets(size, workers as u64, layout) {
        let window = read_bytes(&blob, at, split::CUT_WINDOW as u64, size).await.ok()?;
        found.push(split::cut_in(&window).map(|c| at + c as u64));
    }
    let cuts = split::cuts(size, found);
    if cuts.len() < 3 {
        return None;
    }
    let jobs = PartJob::all(&cuts, layout);
    post(scope, &ToPage::Split { parts: jobs[1..].to_vec() });
    let first = read_one_part(scope, &blob, jobs[0], scratch).await?;
    let others: Array = loop {
        if let Inbox::Page(ToWorker::Join { parts }) = receive().await {
            break parts;
        }
    };
    if others.length() as usize + 1 != jobs.len() {
        return None;
    }
    let mut joined = Joined::default();
    joined.push(first).ok()?;
    // The first part the join refuses (or that was not read as one), if any.
    let refused = (1..jobs.len()).find(|&k| {
        let part = others.get(k as u32 - 1).dyn_into::<Uint8Array>().ok().and_then(|b| Part::decode(&b.to_vec()));
        // The joined lists grow once to their size extrapolated to the whole file, not by
        // doubling at each part (500 MB, emulated: 99.1 -> 90.6 MiB in three parts, 94.4 ->
        // 77.4 in four, 87.9 -> 70.8 in eight).
        joined.progress(jobs[k].to, size);
        part.is_none_or(|p| joined.push(p).is_err())
    });
    drop(others);
    let (collector, outcome, pieces) = match refused {
        None => {
            let (collector, outcome) = joined.finish()?;
            (collector, Ok(outcome), jobs.len())
        }
        Some(k) => {
            let from = jobs[k].from;
            let mut rest = joined.rest_from(from, layout.in_object);
            let progress = Progress::read_on(scope, 0, from as f64);
            read_range(scope, progress, &blob, from as f64, size as f64, scratch, &mut |piece, read| {
                rest.progress(from + read, size);
                rest.feed(piece);
                rest.wants_more()
            })
            .await
            // The browser failed to read the file: read whole, its error is then reported.
            .ok()?;
            let (collector, read) = rest.finish();
            (collector, read, k + 1)
        }
    };
    let report = crate::analysis::report_of_parts(name, collector, outcome, opts);
    Some((report.map(|t| vec![t]), pieces as u32))
}

/// Reads one part for the lead worker: its encoded form, or None when it cannot be joined.
pub(super) async fn read_part(
    scope: &DedicatedWorkerGlobalScope,
    blob: Blob,
    job: PartJob,
    scratch: &mut Vec<u8>,
) -> Option<Vec<u8>> {
    Some(read_one_part(scope, &blob, job, scratch).await?.encode())
}

/// Reads part `job` of `blob`: None when it cannot be joined (or the browser failed to read it).
async fn read_one_part(
    scope: &DedicatedWorkerGlobalScope,
    blob: &Blob,
    job: PartJob,
    scratch: &mut Vec<u8>,
) -> Option<Part> {
    let mut reader = PartReader::new(job);
    read_range(scope, Progress::new(0), blob, job.from as f64, job.to as f64, scratch, &mut |piece, _| {
        reader.feed(piece);
        reader.wants_more()
    })
    .await
    .ok()?;
    reader.finish()
}
