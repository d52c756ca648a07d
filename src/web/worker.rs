//! The worker side: reads each posted `File` in `Blob.slice().arrayBuffer()` slices, a few
//! ahead of the parser, and pushes the bytes into [`crate::Analysis`]. A small reader worker
//! of its own (www/reader.js) does the reads and hands the slices over, so that the browser
//! reads the next slices while wasm parses this one (see [`Slices`]); memory stays bounded:
//! the slices read ahead (outside wasm memory) and one slice copied into wasm memory, never
//! the whole file. A .json.gz is inflated by the reader too, with the browser's
//! DecompressionStream ([`analyse_gunzipped`]). A large plain-JSON file can be read in parts
//! by several workers ([`Job::Lead`], [`Job::Part`]); the lead joins the parts the others
//! encode. Without a reader (or where DecompressionStream stops), a large .json.gz is read in
//! two stages: another worker inflates it ([`Job::Inflate`]) and hands the lead the inflated
//! chunks over a `MessagePort`, a few chunks ahead of the parser.

use super::protocol::{object, Job, Request, ToPage, WARM_UP_WORKER};
use crate::analysis::split::{self, Joined, Part, PartJob, PartReader};
use crate::input::{CarriedError, InflateStage, Inflating, GZIP_MAGIC};
use js_sys::{Array, ArrayBuffer, Promise, Reflect, Uint8Array};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io;
use std::thread::LocalKey;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, DedicatedWorkerGlobalScope, File, MessageChannel, MessageEvent, MessagePort, Worker};

/// Bytes per `Blob.slice` read: large enough to amortise the JS call and the promise, small
/// enough to keep memory flat.
const SLICE: f64 = (16 << 20) as f64;

/// Slices read ahead while one is parsed: enough that the next slice is ready when the parser
/// wants it.
const AHEAD: usize = 2;

/// Bytes parsed between two looks at the progress (and at whether to go on).
const PROGRESS_STEP: usize = 4 << 20;

/// Milliseconds between two progress messages: each is a serialisation and a `postMessage`
/// (about a millisecond of the worker's time), and the page shows no finer steps.
const PROGRESS_MS: f64 = 50.0;

/// Compressed bytes per read of the inflating worker: small, as they inflate ~10x.
const GZ_SLICE: f64 = (1 << 20) as f64;

/// Inflated bytes per chunk handed to the parsing worker.
const INFLATED_CHUNK: usize = 4 << 20;

/// Chunks the inflating worker sends before the parser has taken them: bounds the memory
/// between the stages while keeping both busy.
const CHUNKS_AHEAD: u32 = 4;

/// A .json.gz smaller than this is inflated and parsed by one worker.
const MIN_TWO_STAGE_BYTES: f64 = (4 << 20) as f64;

/// Messages that something waits for, in arrival order, and the waker of the one waiting.
struct Mailbox {
    queue: RefCell<VecDeque<JsValue>>,
    wake: RefCell<Option<js_sys::Function>>,
}

impl Mailbox {
    const fn new() -> Self {
        Mailbox { queue: RefCell::new(VecDeque::new()), wake: RefCell::new(None) }
    }

    fn pop(&self) -> Option<JsValue> {
        self.queue.borrow_mut().pop_front()
    }

    /// Drops the messages of an earlier reading.
    fn clear(&self) {
        self.queue.borrow_mut().clear();
    }
}

thread_local! {
    /// For the running analysis: the page's `{join}`, `{port}`, `{inflater_lost}`; the other
    /// stage's messages on its port.
    static MAILBOX: Mailbox = const { Mailbox::new() };
    /// The reader worker's messages for the slices being read (see [`Slices`]).
    static READS: Mailbox = const { Mailbox::new() };
    /// The reader worker, once started; None when it could not start or failed.
    static READER: RefCell<Option<Worker>> = const { RefCell::new(None) };
    /// Slices read by this worker itself (not by the reader) in the running analysis.
    static SLICES_READ_HERE: Cell<u32> = const { Cell::new(0) };
    /// Files the reader inflated in the running analysis.
    static INFLATED_BY_READER: Cell<u32> = const { Cell::new(0) };
}

fn deliver_to(mailbox: &'static LocalKey<Mailbox>, message: JsValue) {
    let wake = mailbox.with(|m| {
        m.queue.borrow_mut().push_back(message);
        m.wake.borrow_mut().take()
    });
    if let Some(wake) = wake {
        let _ = wake.call0(&JsValue::NULL);
    }
}

/// The next message in `mailbox`, waiting for it.
async fn receive_from(mailbox: &'static LocalKey<Mailbox>) -> JsValue {
    loop {
        if let Some(m) = mailbox.with(Mailbox::pop) {
            return m;
        }
        let woken = Promise::new(&mut |resolve, _| mailbox.with(|m| *m.wake.borrow_mut() = Some(resolve)));
        let _ = JsFuture::from(woken).await;
    }
}

fn deliver(message: JsValue) {
    deliver_to(&MAILBOX, message);
}

/// The next message for the running analysis, waiting for it.
async fn receive() -> JsValue {
    receive_from(&MAILBOX).await
}

/// The next message for the running analysis, if one is there.
fn try_receive() -> Option<JsValue> {
    MAILBOX.with(Mailbox::pop)
}

/// The message's `name` property, when it has one.
fn get(message: &JsValue, name: &str) -> Option<JsValue> {
    Reflect::get(message, &JsValue::from_str(name)).ok().filter(|v| !v.is_undefined())
}

/// Sends `fields` as one object over `port`, transferring `transfer`.
fn send(port: &MessagePort, fields: &[(&str, &JsValue)], transfer: Option<&JsValue>) {
    let message = object(fields);
    let _ = match transfer {
        Some(t) => port.post_message_with_transferable(&message, &Array::of1(t)),
        None => port.post_message(&message),
    };
}

/// Copies `bytes` into `scratch` (wasm memory, reused) and returns them there: the one copy
/// from the browser's buffer, parsed in place after. (Resizing a buffer that already held as
/// many bytes writes none.)
fn copy_in<'a>(bytes: &Uint8Array, scratch: &'a mut Vec<u8>) -> &'a [u8] {
    scratch.resize(bytes.length() as usize, 0);
    bytes.copy_to(scratch);
    scratch
}

/// Copies the buffers one after another into `scratch` (as [`copy_in`]) and returns them there.
fn copy_all_in<'a>(buffers: &[ArrayBuffer], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    let len = buffers.iter().map(|b| b.byte_length() as usize).sum();
    scratch.resize(len, 0);
    let mut at = 0;
    for b in buffers {
        let n = b.byte_length() as usize;
        Uint8Array::new(b).copy_to(&mut scratch[at..at + n]);
        at += n;
    }
    scratch
}

/// A port's message handler.
type OnMessage = Closure<dyn FnMut(MessageEvent)>;

/// Hands the port's messages to [`receive`].
fn listen(port: &MessagePort) {
    let on_message = OnMessage::new(|ev: MessageEvent| deliver(ev.data()));
    port.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // One small handler per two-stage reading, kept for the worker's life.
    on_message.forget();
}

pub fn run() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let data = ev.data();
        let Some(files) = get(&data, "files").and_then(|f| f.dyn_into::<Array>().ok()) else {
            // For the running analysis.
            deliver(data);
            return;
        };
        MAILBOX.with(Mailbox::clear);
        let text = |name: &str| get(&data, name).and_then(|v| v.as_string()).unwrap_or_default();
        let request: Request = serde_json::from_str(&text("request")).unwrap_or_default();
        let job: Job = serde_json::from_str(&text("job")).unwrap_or_default();
        let port = get(&data, "port").and_then(|p| p.dyn_into::<MessagePort>().ok());
        wasm_bindgen_futures::spawn_local(analyse_all(reply.clone(), files, request, job, port));
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    start_reader();
    let warm_up_kernels = if scope.name() == WARM_UP_WORKER { warm_up() } else { 0 };
    post(&scope, &ToPage::Ready { warm_up_kernels });
}

/// Reads a made-up trace of about 1.7 MB and drops the report; returns how many kernels it
/// read. V8 first runs wasm on its baseline compiler and recompiles a function with its
/// optimising one, in the background, only once that function has run a while: without this,
/// the user's first trace would be read by the slower code for its first second or so, with
/// the recompiling beside it on the other core (V8 keeps one compiled module per process, so a
/// worker started later for a part should find the optimised code too).
fn warm_up() -> u32 {
    use std::fmt::Write;
    const KERNELS: [&str; 4] = [
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t> >(flash::Flash_fwd_params)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    ];
    const OPS: [&str; 4] = ["aten::linear", "aten::add", "aten::_flash_attention_forward", "nccl:all_reduce"];
    let mut text = String::with_capacity(3 << 20);
    text.push_str(r#"{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0}],"traceEvents":["#);
    for i in 0..2000u64 {
        let (k, ts) = ((i % 4) as usize, 1_000_000 + i * 20);
        if i % 1000 == 0 {
            let _ = write!(
                text,
                r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{ts},"dur":20000}},"#,
                i / 1000
            );
        }
        let _ = write!(
            text,
            r#"{{"ph":"X","cat":"cpu_op","name":"{}","pid":1,"tid":1,"ts":{ts}.5,"dur":10,"args":{{"External id":{i},"Sequence number":{i},"Fwd thread id":0,"Input Dims":[[4096,4096],[4096]],"Input type":["c10::BFloat16","c10::BFloat16"]}}}},"#,
            OPS[k]
        );
        let _ = write!(
            text,
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":4,"args":{{"External id":{i},"cbid":211,"correlation":{i}}}}},"#,
            ts + 2
        );
        let _ = write!(
            text,
            r#"{{"ph":"X","cat":"kernel","name":"{}","pid":0,"tid":7,"ts":{},"dur":12.25,"args":{{"External id":{i},"queued":0,"device":0,"context":1,"stream":7,"correlation":{i},"registers per thread":128,"shared memory":0,"blocks per SM":1.5,"warps per SM":8,"grid":[132,1,1],"block":[384,1,1],"est. achieved occupancy %":12}}}},"#,
            KERNELS[k],
            ts + 8
        );
    }
    text.push_str(r#"{"ph":"i","cat":"global","name":"end","pid":1,"tid":1,"ts":1000000,"s":"g"}]}"#);
    let mut analysis = crate::analysis::Analysis::new("warm-up", crate::analysis::Options::default());
    for piece in text.as_bytes().chunks(1 << 20) {
        analysis.feed(piece);
    }
    let Ok(reports) = analysis.finish(None) else { return 0 };
    let kernels = reports.iter().map(|r| r.launch.launched_kernels).sum::<u64>();
    let _ = serde_json::to_string(&crate::combine_all(vec![Ok(reports)]));
    kernels as u32
}

fn post(scope: &DedicatedWorkerGlobalScope, msg: &ToPage) {
    if let Ok(value) = serde_wasm_bindgen::to_value(msg) {
        let _ = scope.post_message(&value);
    }
}

/// A file's progress, posted at most every [`PROGRESS_MS`].
struct Progress {
    index: u32,
    posted_ms: f64,
}

impl Progress {
    fn new(index: u32) -> Self {
        Progress { index, posted_ms: f64::NEG_INFINITY }
    }

    fn report(&mut self, scope: &DedicatedWorkerGlobalScope, bytes: f64) {
        let now = js_sys::Date::now();
        if now - self.posted_ms >= PROGRESS_MS {
            self.posted_ms = now;
            post(scope, &ToPage::Progress { index: self.index, bytes });
        }
    }
}

async fn analyse_all(
    scope: DedicatedWorkerGlobalScope,
    files: Array,
    request: Request,
    job: Job,
    port: Option<MessagePort>,
) {
    // One buffer in wasm memory, reused for every slice.
    let mut scratch = Vec::new();
    let first = files.get(0).dyn_into::<File>().ok();
    match (job, first) {
        (Job::Part { job }, Some(file)) => {
            let encoded = read_part(&scope, file.into(), job, &mut scratch).await;
            let data = encoded.map(|bytes| Uint8Array::from(&bytes[..]));
            if let Ok(msg) = serde_wasm_bindgen::to_value(&ToPage::PartDone { ok: data.is_some() }) {
                let transfer = Array::new();
                if let Some(data) = &data {
                    let _ = Reflect::set(&msg, &"data".into(), data);
                    transfer.push(&data.buffer());
                }
                let _ = scope.post_message_with_transfer(&msg, &transfer);
            }
        }
        (Job::Inflate, Some(file)) => {
            if let Some(port) = port {
                inflate_for_lead(&scope, file.into(), &port).await;
            }
            post(&scope, &ToPage::InflateDone);
        }
        (Job::Part { .. } | Job::Inflate, None) => {}
        (Job::Whole | Job::Lead { .. }, _) => analyse_files(&scope, files, request, job, &mut scratch).await,
    }
}

/// Reads `files` one after another (leading the reading of a lone file by several workers)
/// and posts the combined report.
async fn analyse_files(
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
        let gzip = read_bytes(&file, 0, 2, file.size() as u64).await.is_ok_and(|b| b.starts_with(&GZIP_MAGIC));
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
    let json = match serde_json::to_string(&report) {
        Ok(s) => s,
        Err(e) => format!("{{\"error\": \"{e}\"}}"),
    };
    let wasm_memory_bytes = wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64;
    let slices_read_here = SLICES_READ_HERE.with(|n| n.replace(0));
    let inflated_by_reader = INFLATED_BY_READER.with(|n| n.replace(0));
    post(scope, &ToPage::Done { json, wasm_memory_bytes, parts: most_parts, slices_read_here, inflated_by_reader });
}

/// Reads `blob` whole into a push analysis.
async fn analyse_file(
    scope: &DedicatedWorkerGlobalScope,
    index: u32,
    name: &str,
    blob: Blob,
    opts: &crate::analysis::Options,
    scratch: &mut Vec<u8>,
) -> Result<Vec<crate::report::TraceReport>, crate::analysis::TraceError> {
    let mut analysis = crate::analysis::Analysis::new(name, opts.clone());
    let size = blob.size();
    let read = read_range(scope, index, &blob, 0.0, size, scratch, &mut |piece| {
        analysis.feed(piece);
        analysis.wants_more()
    })
    .await;
    analysis.finish(read.err())
}

/// Leads the reading of a large plain-JSON file in `workers` parts: the result and the number
/// of parts, or None when the file is not one to split or its parts could not be joined
/// exactly (the caller then reads it whole).
async fn analyse_in_parts(
    scope: &DedicatedWorkerGlobalScope,
    name: &str,
    blob: Blob,
    workers: u32,
    opts: &crate::analysis::Options,
    scratch: &mut Vec<u8>,
) -> Option<(Result<Vec<crate::report::TraceReport>, crate::analysis::TraceError>, u32)> {
    let size = blob.size() as u64;
    if workers < 2 || size < split::MIN_SPLIT_BYTES {
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
    let mut reader = PartReader::new(jobs[0]);
    let read = read_range(scope, 0, &blob, jobs[0].from as f64, jobs[0].to as f64, scratch, &mut |piece| {
        reader.feed(piece);
        reader.wants_more()
    })
    .await;
    let first = read.ok().and_then(|_| reader.finish())?;
    let others: Array = loop {
        if let Some(join) = get(&receive().await, "join") {
            break join.dyn_into().ok()?;
        }
    };
    if others.length() as usize + 1 != jobs.len() {
        return None;
    }
    let mut joined = Joined::default();
    joined.push(first).ok()?;
    for data in others.iter() {
        let bytes = data.dyn_into::<Uint8Array>().ok()?.to_vec();
        joined.push(Part::decode(&bytes)?).ok()?;
    }
    let (collector, outcome) = joined.finish()?;
    let report = crate::analysis::report_of_parts(name, collector, Ok(outcome), opts);
    Some((report.map(|t| vec![t]), jobs.len() as u32))
}

/// Reads a .json.gz that the reader worker inflates with the browser's own
/// DecompressionStream, on its thread, beside the parsing here: None when there is no reader,
/// or the reader stopped (DecompressionStream stops on a truncated or
/// damaged stream and after the first gzip member), or the file holds a report: the caller
/// then reads the file the usual way, whose diagnostics are the CLI's.
async fn analyse_gunzipped(
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
            FromReader::Bytes { bytes, read } => {
                analysis.feed(copy_all_in(&bytes, scratch));
                progress.report(scope, read);
                if analysis.is_report() {
                    return None;
                }
                if !analysis.wants_more() {
                    break analysis.finish(None);
                }
            }
            FromReader::End => break analysis.finish(None),
            FromReader::Failed => return None,
        }
    };
    INFLATED_BY_READER.with(|n| n.set(n.get() + 1));
    Some(result)
}

/// Parses a large .json.gz that another worker inflates: None when it is small or a gzip
/// report, or no inflating worker could help (the caller then reads it alone).
async fn analyse_in_two_stages(
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
        let m = receive().await;
        if get(&m, "inflater_lost").is_some() {
            return None;
        }
        if let Some(port) = get(&m, "port") {
            break port.dyn_into().ok()?;
        }
    };
    listen(&port);
    let mut analysis = crate::analysis::Analysis::new(name, opts.clone());
    let result = loop {
        let m = receive().await;
        if let Some(bytes) = get(&m, "bytes").and_then(|b| b.dyn_into::<Uint8Array>().ok()) {
            send(&port, &[("ack", &JsValue::TRUE)], None);
            analysis.feed(copy_in(&bytes, scratch));
            // A gzip report is read the usual way.
            if analysis.is_report() {
                break None;
            }
            if !analysis.wants_more() {
                break Some(analysis.finish(None));
            }
        } else if get(&m, "end").is_some() {
            let error = get(&m, "error").and_then(|e| e.as_string());
            let error = error.and_then(|e| serde_json::from_str::<CarriedError>(&e).ok());
            break Some(analysis.finish(error.map(CarriedError::into_error)));
        } else if get(&m, "inflater_lost").is_some() {
            break None;
        }
    };
    send(&port, &[("stop", &JsValue::TRUE)], None);
    port.set_onmessage(None);
    port.close();
    result
}

/// Inflates `blob` for the lead worker at the other end of `port`: inflated chunks, at most
/// [`CHUNKS_AHEAD`] not yet taken, then `{end}` with the error after them, if any. Progress
/// (compressed bytes read) goes to the page as the file's.
async fn inflate_for_lead(scope: &DedicatedWorkerGlobalScope, blob: Blob, port: &MessagePort) {
    listen(port);
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
                send(port, &[("bytes", &data)], Some(&data.buffer()));
                ahead += 1;
                // Wait while the parser is behind; stop when it needs no more.
                loop {
                    let m = match try_receive() {
                        Some(m) => m,
                        None if ahead >= CHUNKS_AHEAD => receive().await,
                        None => break,
                    };
                    if get(&m, "stop").is_some() {
                        return;
                    }
                    if get(&m, "ack").is_some() {
                        ahead -= 1;
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
                send(port, &[("end", &JsValue::TRUE)], None);
                return;
            }
            Inflating::Failed(e) => {
                let error = serde_json::to_string(&e).unwrap_or_default();
                send(port, &[("end", &JsValue::TRUE), ("error", &error.into())], None);
                return;
            }
        }
    }
}

/// Reads one part for the lead worker: its encoded form, or None when it cannot be joined.
async fn read_part(
    scope: &DedicatedWorkerGlobalScope,
    blob: Blob,
    job: PartJob,
    scratch: &mut Vec<u8>,
) -> Option<Vec<u8>> {
    let mut reader = PartReader::new(job);
    read_range(scope, 0, &blob, job.from as f64, job.to as f64, scratch, &mut |piece| {
        reader.feed(piece);
        reader.wants_more()
    })
    .await
    .ok()?;
    Some(reader.finish()?.encode())
}

/// Bytes `at..at + len` of `blob` (fewer at its end), in one read.
async fn read_bytes(blob: &Blob, at: u64, len: u64, size: u64) -> Result<Vec<u8>, io::Error> {
    let slice = blob.slice_with_f64_and_f64(at as f64, (at + len).min(size) as f64).map_err(js_err)?;
    let buffer: ArrayBuffer = JsFuture::from(slice.array_buffer()).await.map_err(js_err)?.unchecked_into();
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// Starts the reader worker (www/reader.js), which reads blob slices for this one. Without
/// it (a browser without nested workers, or its script failed), slices are read here.
fn start_reader() {
    let Ok(reader) = Worker::new("./reader.js") else { return };
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(|ev: web_sys::Event| {
        // Not the page's error: the slices being read are read here instead.
        ev.prevent_default();
        READER.with(|r| r.borrow_mut().take());
        deliver_to(&READS, object(&[("failed", &JsValue::TRUE)]).into());
    });
    reader.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_error.forget();
    READER.with(|r| *r.borrow_mut() = Some(reader));
}

/// One request to the reader worker (www/reader.js): bytes `from..to` of a blob, as read or
/// inflated, and this worker's end of the channel they come on. Dropping it tells the reader
/// to stop (it may be ahead) and closes the channel.
struct ReaderChannel {
    port: MessagePort,
    _on_message: OnMessage,
}

/// What the reader says next.
enum FromReader {
    /// The next bytes (one buffer for a slice, a batch of them for inflated bytes), and how
    /// many bytes of the blob it has read so far.
    Bytes { bytes: Vec<ArrayBuffer>, read: f64 },
    /// All bytes were handed over.
    End,
    /// It could not go on: a read or inflate error, or its script failed.
    Failed,
}

impl ReaderChannel {
    /// Asks the reader, if there is one, for bytes `from..to` of `blob` in slices of up to `slice`
    /// bytes, inflated into chunks of `gunzip` bytes when that is given.
    fn ask(blob: &Blob, from: f64, to: f64, slice: f64, gunzip: Option<usize>) -> Option<ReaderChannel> {
        let reader = READER.with(|r| r.borrow().clone())?;
        let channel = MessageChannel::new().ok()?;
        READS.with(Mailbox::clear);
        let gunzip = gunzip.map_or(JsValue::FALSE, |chunk| (chunk as f64).into());
        let request = object(&[
            ("blob", blob),
            ("from", &from.into()),
            ("to", &to.into()),
            ("slice", &slice.into()),
            ("ahead", &(AHEAD as f64).into()),
            ("gunzip", &gunzip),
            ("port", &channel.port2()),
        ]);
        reader.post_message_with_transfer(&request, &Array::of1(&channel.port2())).ok()?;
        let port = channel.port1();
        let on_message = OnMessage::new(|ev: MessageEvent| deliver_to(&READS, ev.data()));
        port.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        Some(ReaderChannel { port, _on_message: on_message })
    }

    /// The reader's next message (bytes are acknowledged as they are taken).
    async fn next(&self) -> FromReader {
        let m = receive_from(&READS).await;
        let bytes = get(&m, "bytes").and_then(|b| match b.dyn_into::<Array>() {
            Ok(batch) => batch.iter().map(|b| b.dyn_into::<ArrayBuffer>().ok()).collect(),
            Err(b) => b.dyn_into::<ArrayBuffer>().ok().map(|b| vec![b]),
        });
        if let Some(bytes) = bytes {
            send(&self.port, &[("ack", &JsValue::TRUE)], None);
            let read = get(&m, "read").and_then(|r| r.as_f64()).unwrap_or(0.0);
            FromReader::Bytes { bytes, read }
        } else if get(&m, "end").is_some() {
            FromReader::End
        } else {
            FromReader::Failed
        }
    }
}

impl Drop for ReaderChannel {
    fn drop(&mut self) {
        send(&self.port, &[("stop", &JsValue::TRUE)], None);
        self.port.set_onmessage(None);
        self.port.close();
    }
}

/// Bytes `from..to` of a blob in slices of `slice` bytes, up to [`AHEAD`] of them read before
/// they are wanted: by the reader worker when there is one, else here. Should the reader fail,
/// the rest is read here. Chromium finishes a Blob read on the thread that asked for it, so
/// reads asked for here made progress only between two parsed slices: in a test page, reading
/// 500 MB beside a stand-in parser busy for 1.43 s took 1.9-2.0 s, and 1.50-1.56 s through a
/// reader worker.
struct Slices<'a> {
    blob: &'a Blob,
    /// The end of the bytes asked for here or handed out by the reader.
    asked: f64,
    to: f64,
    slice: f64,
    reader: Option<ReaderChannel>,
    /// Reads in flight here.
    pending: VecDeque<JsFuture>,
}

impl<'a> Slices<'a> {
    fn new(blob: &'a Blob, from: f64, to: f64, slice: f64) -> Self {
        let reader = ReaderChannel::ask(blob, from, to, slice, None);
        Slices { blob, asked: from, to, slice, reader, pending: VecDeque::new() }
    }

    /// The next slice, None after the last.
    async fn next(&mut self) -> Option<Result<ArrayBuffer, io::Error>> {
        if let Some(reader) = &self.reader {
            match reader.next().await {
                FromReader::Bytes { bytes, .. } if bytes.len() == 1 => {
                    let bytes = bytes.into_iter().next()?;
                    self.asked += bytes.byte_length() as f64;
                    return Some(Ok(bytes));
                }
                FromReader::End => {
                    self.reader = None;
                    return None;
                }
                // The rest is read here, where a lasting error shows again and is reported.
                FromReader::Bytes { .. } | FromReader::Failed => self.reader = None,
            }
        }
        while self.pending.len() < AHEAD && self.asked < self.to {
            let end = (self.asked + self.slice).min(self.to);
            match self.blob.slice_with_f64_and_f64(self.asked, end) {
                Ok(slice) => self.pending.push_back(JsFuture::from(slice.array_buffer())),
                Err(e) => return Some(Err(js_err(e))),
            }
            self.asked = end;
        }
        let read = self.pending.pop_front()?.await;
        SLICES_READ_HERE.with(|n| n.set(n.get() + 1));
        Some(read.map(JsValue::unchecked_into).map_err(js_err))
    }
}

/// Reads bytes `from..to` of `blob` slice by slice, handing each piece to `feed` until it
/// wants no more; progress (bytes read of the range) goes to the page as file `index`'s.
async fn read_range(
    scope: &DedicatedWorkerGlobalScope,
    index: u32,
    blob: &Blob,
    from: f64,
    to: f64,
    scratch: &mut Vec<u8>,
    feed: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<(), io::Error> {
    let mut slices = Slices::new(blob, from, to, SLICE);
    let mut read = 0.0;
    let mut progress = Progress::new(index);
    while let Some(buffer) = slices.next().await {
        let buffer = buffer?;
        let bytes = copy_in(&Uint8Array::new(&buffer), scratch);
        // A look at the progress every few MB, not only per slice, so the page moves smoothly.
        for piece in bytes.chunks(PROGRESS_STEP) {
            let more = feed(piece);
            read += piece.len() as f64;
            progress.report(scope, read);
            if !more {
                return Ok(());
            }
        }
    }
    Ok(())
}
fn js_err(e: JsValue) -> io::Error {
    let text = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the browser could not read the file".into());
    io::Error::other(text)
}
