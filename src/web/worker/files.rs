//! Reading one or more files into an analysis: whole, in parts by several workers, gunzipped by
//! the reader, or in two stages (another worker inflates).

use super::mailbox::*;
use super::parts::analyse_in_parts;
use super::progress::*;
use super::reader::*;
use crate::input::{formats::Format, sniff, CarriedError, Encoding, InflateStage, Inflating};
use crate::web::protocol::{Done, FromInflater, Job, Request, ToInflater, ToPage, ToWorker, REPORT_CHUNK};
use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::{Blob, DedicatedWorkerGlobalScope, File, MessagePort};

/// Compressed bytes per read of the inflating worker: small, as they inflate ~10x.
pub(super) const GZ_SLICE: f64 = (1 << 20) as f64;

/// Inflated bytes per chunk handed to the parsing worker.
pub(super) const INFLATED_CHUNK: usize = 4 << 20;

/// Chunks the inflating worker sends before the parser has taken them: bounds the memory
/// between the stages while keeping both busy.
pub(super) const CHUNKS_AHEAD: u32 = 4;

/// A .json.gz smaller than this is inflated and parsed by one worker.
pub(super) const MIN_TWO_STAGE_BYTES: f64 = (4 << 20) as f64;

/// Reads `files` one after another (leading the reading of a lone file by several workers)
/// and posts the combined report.
pub(super) async fn analyse_files(
    scope: &DedicatedWorkerGlobalScope,
    files: Array,
    request: Request,
    job: Job,
    scratch: &mut Vec<u8>,
) {
    // The page checks the rules before sending them; ones that still fail are not applied.
    let opts = request.options().unwrap_or_default();
    SLICES_READ_HERE.with(|n| n.set(0));
    INFLATED_BY_READER.with(|n| n.set(0));
    let mut results = Vec::with_capacity(files.length() as usize);
    let mut most_parts = 1;
    for (index, value) in files.iter().enumerate() {
        let index = index as u32;
        let file: File = value.unchecked_into();
        let name = file.name();
        let gzip =
            read_bytes(&file, 0, 2, file.size() as u64).await.is_ok_and(|b| sniff::encoding(&b) == Encoding::Gzip);
        let gunzipped = if gzip { analyse_gunzipped(scope, index, &name, &file, &opts, scratch).await } else { None };
        let led = match (gunzipped, job) {
            (Some(result), _) => Some((result, 1)),
            // A .json.gz is never split; it may be read in two stages.
            (None, Job::Lead { .. }) if gzip && files.length() == 1 => {
                analyse_in_two_stages(scope, &name, file.clone().into(), &opts, scratch).await.map(|result| (result, 1))
            }
            (None, Job::Lead { workers }) if files.length() == 1 => {
                analyse_in_parts(scope, &name, file.clone().into(), workers, &opts, scratch).await
            }
            (None, _) => None,
        };
        let result = match led {
            Some((result, parts)) => {
                most_parts = parts;
                result
            }
            None => analyse_file(scope, index, &name, file.into(), &opts, scratch).await,
        };
        post(scope, &ToPage::FileDone { index, ok: result.is_ok() });
        results.push(result);
    }
    let report = crate::combine_all(results);
    // Compact: the page parses it back into a Report (its JSON export prints that as the
    // CLI's --json does); pretty printing would double the text it copies and parses.
    let chunks = report_chunks(&report);
    drop(report);
    let wasm_memory_bytes = wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64;
    let slices_read_here = SLICES_READ_HERE.with(|n| n.replace(0));
    let inflated_by_reader = INFLATED_BY_READER.with(|n| n.replace(0));
    let done = Done { wasm_memory_bytes, parts: most_parts, slices_read_here, inflated_by_reader };
    let transfer: Array = chunks.iter().map(|c| c.unchecked_into::<Uint8Array>().buffer()).collect();
    post_with_data(scope, &ToPage::Done(done), &chunks, &transfer);
}

/// `report` as compact JSON in Uint8Arrays of up to [`REPORT_CHUNK`] bytes, each copied out of
/// wasm memory as soon as it is full, so that the worker's memory grows by one chunk, not by
/// the whole text (see [`REPORT_CHUNK`]). A report that cannot be written is sent as
/// `{"error": ...}`, which the page names as the file's failure.
fn report_chunks(report: &crate::Report) -> Array {
    struct Chunks {
        buf: Vec<u8>,
        out: Array,
    }
    impl Chunks {
        fn flush_chunk(&mut self) {
            if !self.buf.is_empty() {
                self.out.push(&Uint8Array::from(&self.buf[..]));
                self.buf.clear();
            }
        }
    }
    impl std::io::Write for Chunks {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.buf.len() + b.len() > REPORT_CHUNK {
                self.flush_chunk();
            }
            if b.len() > REPORT_CHUNK {
                // A single write longer than a chunk (a very long name) goes out as it is.
                self.out.push(&Uint8Array::from(b));
            } else {
                self.buf.extend_from_slice(b);
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut chunks = Chunks { buf: Vec::with_capacity(REPORT_CHUNK), out: Array::new() };
    if let Err(e) = serde_json::to_writer(&mut chunks, report) {
        let error = serde_json::json!({ "error": e.to_string() }).to_string();
        chunks = Chunks { buf: error.into_bytes(), out: Array::new() };
    }
    chunks.flush_chunk();
    chunks.out
}

/// Reads `blob` whole into a push analysis.
pub(super) async fn analyse_file(
    scope: &DedicatedWorkerGlobalScope,
    index: u32,
    name: &str,
    blob: Blob,
    opts: &crate::analysis::Options,
    scratch: &mut Vec<u8>,
) -> Result<Vec<crate::report::TraceReport>, crate::analysis::TraceError> {
    let mut analysis = crate::analysis::Analysis::new(name, opts.clone());
    let size = blob.size();
    // The per-event lists grow by the progress, not by doubling (a wasm memory cannot remap a
    // growing list: 2 GB trace, emulated, 309 -> 267 MiB).
    let read = read_range(scope, Progress::new(index), &blob, 0.0, size, scratch, &mut |piece, read| {
        analysis.progress(read, size as u64);
        analysis.feed(piece);
        analysis.wants_more()
    })
    .await;
    analysis.finish(read.err())
}

/// Reads a .json.gz that the reader worker inflates with the browser's own
/// DecompressionStream, on its thread, beside the parsing here: None when there is no reader,
/// or the reader stopped (DecompressionStream stops on a truncated or
/// damaged stream and after the first gzip member), or the file is not a trace (a report): the caller
/// then reads the file the usual way, whose diagnostics are the CLI's.
pub(super) async fn analyse_gunzipped(
    scope: &DedicatedWorkerGlobalScope,
    index: u32,
    name: &str,
    blob: &Blob,
    opts: &crate::analysis::Options,
    scratch: &mut Vec<u8>,
) -> Option<Result<Vec<crate::report::TraceReport>, crate::analysis::TraceError>> {
    let reader = ReaderChannel::ask(blob, 0.0, blob.size(), GZ_SLICE, Some(INFLATED_CHUNK))?;
    let mut analysis = crate::analysis::Analysis::new(name, opts.clone());
    let mut progress = Progress::new(index);
    let result = loop {
        match reader.next().await {
            Handed::Bytes { bytes, read } => {
                // Compressed bytes read (the inflated total is not known).
                analysis.progress(read as u64, blob.size() as u64);
                // Each inflated chunk (about 64 KB) parsed as it is copied in, while in cache.
                for b in &bytes {
                    analysis.feed(copy_in(&Uint8Array::new(b), scratch));
                }
                progress.report(scope, read);
                if analysis.format().is_some_and(|f| f != Format::ChromeJson) {
                    return None;
                }
                if !analysis.wants_more() {
                    break analysis.finish(None);
                }
            }
            Handed::End => break analysis.finish(None),
            Handed::Failed => return None,
        }
    };
    INFLATED_BY_READER.with(|n| n.set(n.get() + 1));
    Some(result)
}

/// Parses a large .json.gz that another worker inflates: None when it is small or a gzip
/// report, or no inflating worker could help (the caller then reads it alone).
pub(super) async fn analyse_in_two_stages(
    scope: &DedicatedWorkerGlobalScope,
    name: &str,
    blob: Blob,
    opts: &crate::analysis::Options,
    scratch: &mut Vec<u8>,
) -> Option<Result<Vec<crate::report::TraceReport>, crate::analysis::TraceError>> {
    if blob.size() < MIN_TWO_STAGE_BYTES {
        return None;
    }
    post(scope, &ToPage::Inflate);
    let port: MessagePort = loop {
        match receive().await {
            Inbox::Page(ToWorker::InflaterLost) => return None,
            // Null: no worker can inflate it.
            Inbox::Page(ToWorker::Inflater { port }) => break port.dyn_into().ok()?,
            _ => {}
        }
    };
    listen(&port, Inbox::Inflater);
    let mut analysis = crate::analysis::Analysis::new(name, opts.clone());
    let result = loop {
        match receive().await {
            Inbox::Inflater(FromInflater::Bytes { bytes }) => {
                send(&port, &ToInflater::Ack, None);
                analysis.feed(copy_in(&bytes, scratch));
                // Another format than a trace (a gzip report) is read the usual way.
                if analysis.format().is_some_and(|f| f != Format::ChromeJson) {
                    break None;
                }
                if !analysis.wants_more() {
                    break Some(analysis.finish(None));
                }
            }
            Inbox::Inflater(FromInflater::End { error }) => {
                let error = error.and_then(|e| serde_json::from_str::<CarriedError>(&e).ok());
                break Some(analysis.finish(error.map(CarriedError::into_error)));
            }
            // The page has been told; the file is read alone.
            Inbox::Page(ToWorker::InflaterLost) | Inbox::StageMalformed => break None,
            Inbox::Page(_) | Inbox::Lead(_) => {}
        }
    };
    send(&port, &ToInflater::Stop, None);
    port.set_onmessage(None);
    port.close();
    result
}

/// Inflates `blob` for the lead worker at the other end of `port`: inflated chunks, at most
/// [`CHUNKS_AHEAD`] not yet taken, then [`FromInflater::End`] with the error, if any. Progress
/// (compressed bytes read) goes to the page as the file's.
pub(super) async fn inflate_for_lead(scope: &DedicatedWorkerGlobalScope, blob: Blob, port: &MessagePort) {
    listen(port, Inbox::Lead);
    let mut stage = InflateStage::new(INFLATED_CHUNK);
    let mut slices = Slices::new(&blob, 0.0, blob.size(), GZ_SLICE);
    let (mut read, mut ended) = (0.0, false);
    let mut progress = Progress::new(0);
    let mut ahead = 0;
    loop {
        match stage.pull() {
            Inflating::Bytes(bytes) => {
                let data = Uint8Array::from(&bytes[..]);
                drop(bytes);
                let buffer = data.buffer();
                send(port, &FromInflater::Bytes { bytes: data }, Some(&buffer));
                ahead += 1;
                // Wait while the parser is behind; stop when it needs no more.
                loop {
                    let said = match try_receive() {
                        Some(said) => said,
                        None if ahead >= CHUNKS_AHEAD => receive().await,
                        None => break,
                    };
                    match said {
                        Inbox::Lead(ToInflater::Stop) | Inbox::StageMalformed => return,
                        Inbox::Lead(ToInflater::Ack) => ahead -= 1,
                        Inbox::Page(_) | Inbox::Inflater(_) => {}
                    }
                }
            }
            Inflating::NeedInput if !ended => match slices.next().await {
                Some(Ok(buffer)) => {
                    let bytes = Uint8Array::new(&buffer).to_vec();
                    read += bytes.len() as f64;
                    stage.push(bytes);
                    progress.report(scope, read);
                }
                Some(Err(e)) => {
                    stage.end(Some(e));
                    ended = true;
                }
                None => {
                    stage.end(None);
                    ended = true;
                }
            },
            Inflating::NeedInput | Inflating::End => {
                send(port, &FromInflater::End { error: None }, None);
                return;
            }
            Inflating::Failed(e) => {
                let error = serde_json::to_string(&e).ok();
                send(port, &FromInflater::End { error }, None);
                return;
            }
        }
    }
}
