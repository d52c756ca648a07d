//! The page's handles on the analysis workers: [`Client`], one worker, and [`WorkerPool`],
//! which reads several files at once, one file per worker, or one large file in parts, one
//! part per worker. One worker is started at page load (so its script and wasm are fetched
//! before any trace is opened); Cancel terminates them all and starts a fresh one.

use super::protocol::{to_js, Done, Job, Request, ToPage, ToWorker};
use js_sys::{Array, Uint8Array};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, MessagePort, Worker, WorkerOptions, WorkerType};

/// What the worker tells the page.
pub enum WorkerEvent {
    Message(ToPage),
    /// The worker's part is read: its encoded bytes (a Uint8Array), None when it cannot be
    /// joined.
    PartDone {
        data: Option<JsValue>,
    },
    /// All files analysed: how they were read, and the report's JSON gathered from the
    /// message's pieces (or why it could not be).
    Done {
        done: Done,
        json: Result<Vec<u8>, String>,
    },
    /// The worker died or could not start: a one-line reason.
    Crashed(String),
    /// The first worker's warm-up report (compact JSON), sent with its `Ready`.
    WarmUpReport(Vec<u8>),
}

/// The bytes of a JS array of Uint8Arrays, one after another (the report's JSON, as the worker
/// hands it over in pieces).
fn joined_bytes(data: Option<JsValue>) -> Result<Vec<u8>, String> {
    let pieces: Array = data.and_then(|d| d.dyn_into().ok()).ok_or("the analysis worker sent no report")?;
    let pieces: Vec<Uint8Array> = pieces
        .iter()
        .map(|p| p.dyn_into::<Uint8Array>().map_err(|_| "the analysis worker's report is not bytes".to_string()))
        .collect::<Result<_, _>>()?;
    let mut out = vec![0; pieces.iter().map(|p| p.length() as usize).sum()];
    let mut at = 0;
    for p in &pieces {
        let n = p.length() as usize;
        p.copy_to(&mut out[at..at + n]);
        at += n;
    }
    Ok(out)
}

type Handler = Rc<dyn Fn(WorkerEvent)>;

/// How long a new worker may take to say "ready" before it is started again, doubled at each
/// restart. In Firefox ESR 153 on a loaded 2-core machine a worker's module sometimes never ran
/// (about one start in 60: its script and wasm fetched, then nothing, not even an error), which
/// left the page waiting for ever.
const READY_WAIT_MS: i32 = 15_000;
/// Restarts of a worker that has not said "ready" (it did not start in time, or failed while
/// starting) before the page is told it could not start.
const START_RETRIES: u32 = 2;

#[derive(Clone)]
pub struct Client(Rc<RefCell<Inner>>);

struct Inner {
    worker: Option<Worker>,
    ready: bool,
    /// Messages (and what they transfer) posted before the worker said "ready" (a worker
    /// drops earlier messages).
    queued: Vec<(JsValue, Option<Array>)>,
    on_event: Handler,
    // Kept alive as long as their worker.
    closures: Vec<Closure<dyn FnMut(JsValue)>>,
    /// The previous worker's handlers: `stop` may run inside one of them, so they are
    /// dropped one restart later, never while running.
    retired: Vec<Closure<dyn FnMut(JsValue)>>,
    /// Whether its workers warm up when they start (the page's first worker, which waits for
    /// files; workers started for a file go straight to it).
    warm_up: bool,
    /// Restarts since a worker last said "ready".
    retries: u32,
}

impl Client {
    pub fn new(on_event: impl Fn(WorkerEvent) + 'static, warm_up: bool) -> Self {
        let client = Client(Rc::new(RefCell::new(Inner {
            worker: None,
            ready: false,
            queued: Vec::new(),
            on_event: Rc::new(on_event),
            closures: Vec::new(),
            retired: Vec::new(),
            warm_up,
            retries: 0,
        })));
        client.spawn();
        client
    }

    /// Analyses `files` (a JS array of `File`/`Blob`) as `request` and `job` say, once the
    /// worker is ready; `port` goes with it (transferred), for [`Job::Inflate`].
    pub fn analyse(&self, files: Array, request: &Request, job: &Job, port: Option<MessagePort>) {
        if self.0.borrow().worker.is_none() {
            self.spawn();
        }
        let port: JsValue = port.map_or(JsValue::NULL, Into::into);
        let transfer = (!port.is_null()).then(|| Array::of1(&port));
        self.post(&ToWorker::Analyse { files, request: request.clone(), job: *job, port }, transfer);
    }

    /// Tells the lead worker of a .json.gz where the inflated bytes come from: `port` (its
    /// end of a channel to the inflating worker), or none (null: it reads the file alone).
    pub fn inflater(&self, port: Option<MessagePort>) {
        let port: JsValue = port.map_or(JsValue::NULL, Into::into);
        let transfer = (!port.is_null()).then(|| Array::of1(&port));
        self.post(&ToWorker::Inflater { port }, transfer);
    }

    /// Tells the lead worker of a .json.gz that its inflating worker died.
    pub fn inflater_lost(&self) {
        self.post(&ToWorker::InflaterLost, None);
    }

    /// Hands a lead worker the other parts of its file, their buffers transferred.
    pub fn join(&self, parts: Array) {
        let transfer = Array::new();
        for data in parts.iter().filter_map(|d| d.dyn_into::<js_sys::Uint8Array>().ok()) {
            transfer.push(&data.buffer());
        }
        self.post(&ToWorker::Join { parts }, Some(transfer));
    }

    fn post(&self, message: &ToWorker, transfer: Option<Array>) {
        let message = match to_js(message) {
            Ok(message) => message,
            Err(e) => return self.crashed(format!("could not encode the message to the analysis worker: {e}")),
        };
        let mut inner = self.0.borrow_mut();
        match (&inner.worker, inner.ready) {
            (Some(worker), true) => {
                if let Err(e) = post_to(worker, &message, transfer.as_ref()) {
                    let handler = inner.on_event.clone();
                    drop(inner);
                    handler(WorkerEvent::Crashed(describe(&e)));
                }
            }
            _ => inner.queued.push((message, transfer)),
        }
    }

    /// Stops the running analysis at once and gets a fresh worker ready for the next one.
    pub fn cancel(&self) {
        self.stop();
        self.spawn();
    }

    /// Terminates the worker (freeing its memory); the next `analyse` starts a fresh one.
    pub fn release(&self) {
        self.stop();
    }

    fn stop(&self) {
        let mut inner = self.0.borrow_mut();
        if let Some(worker) = inner.worker.take() {
            worker.set_onmessage(None);
            worker.set_onerror(None);
            worker.terminate();
        }
        inner.ready = false;
        inner.queued.clear();
        inner.retired = std::mem::take(&mut inner.closures);
    }

    fn spawn(&self) {
        let opts = WorkerOptions::new();
        opts.set_type(WorkerType::Module);
        if self.0.borrow().warm_up {
            opts.set_name(super::protocol::WARM_UP_WORKER);
        }
        // Relative URL: the site works from any sub-path.
        let worker = match Worker::new_with_options("./worker.js", &opts) {
            Ok(w) => w,
            Err(e) => {
                let handler = self.0.borrow().on_event.clone();
                handler(WorkerEvent::Crashed(format!("could not start the analysis worker: {}", describe(&e))));
                return;
            }
        };
        let this = self.clone();
        let on_message = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            let data = ev.unchecked_into::<MessageEvent>().data();
            // A part's bytes stay a JS buffer, handed on to the lead as they are; a report's
            // pieces are gathered into this page's memory.
            let bytes = js_sys::Reflect::get(&data, &"data".into()).ok().filter(|d| !d.is_undefined());
            match serde_wasm_bindgen::from_value::<ToPage>(data) {
                Ok(ToPage::PartDone { ok }) => {
                    let handler = this.0.borrow().on_event.clone();
                    handler(WorkerEvent::PartDone { data: bytes.filter(|_| ok) })
                }
                Ok(ToPage::Done(done)) => {
                    let handler = this.0.borrow().on_event.clone();
                    handler(WorkerEvent::Done { done, json: joined_bytes(bytes) })
                }
                Ok(ToPage::Malformed { from, message }) => {
                    this.crashed(format!("the analysis worker could not read {} ({message})", from.describe()))
                }
                Ok(msg @ ToPage::Ready { .. }) => {
                    this.on_message(msg);
                    if let Some(json) = bytes.and_then(|b| b.dyn_into::<Uint8Array>().ok()) {
                        let handler = this.0.borrow().on_event.clone();
                        handler(WorkerEvent::WarmUpReport(json.to_vec()))
                    }
                }
                Ok(msg) => this.on_message(msg),
                Err(e) => this.crashed(format!("unexpected message from the worker: {e}")),
            }
        });
        let this = self.clone();
        let on_error = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            let text = ev
                .dyn_ref::<ErrorEvent>()
                .map(|e| e.message())
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "the analysis worker stopped unexpectedly".into());
            this.failed(text);
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let wait_ms = {
            let mut inner = self.0.borrow_mut();
            inner.worker = Some(worker.clone());
            inner.closures = vec![on_message, on_error];
            READY_WAIT_MS << inner.retries
        };
        let this = self.clone();
        let check = Closure::once_into_js(move || this.not_ready_after(&worker, wait_ms));
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(check.unchecked_ref(), wait_ms);
        }
    }

    /// The watchdog of `worker`'s start: if it is still the one running and has not said
    /// "ready", it has failed to start.
    fn not_ready_after(&self, worker: &Worker, waited_ms: i32) {
        let stuck = {
            let inner = self.0.borrow();
            inner.worker.as_ref() == Some(worker) && !inner.ready
        };
        if stuck {
            self.failed(format!("the analysis worker did not start in {} s", waited_ms / 1000));
        }
    }

    /// The worker failed (its error event, or no "ready" in time): while it is starting, it is
    /// started again up to [`START_RETRIES`] times; otherwise, or after them, it crashed.
    fn failed(&self, text: String) {
        let starting = {
            let inner = self.0.borrow();
            inner.worker.is_some() && !inner.ready
        };
        if !(starting && self.retry_start()) {
            self.crashed(text);
        }
    }

    /// Starts a worker that has not said "ready" again, keeping the messages waiting for it;
    /// false when it has been retried enough (the count then starts over, for the next
    /// `analyse`).
    fn retry_start(&self) -> bool {
        let queued = {
            let mut inner = self.0.borrow_mut();
            if inner.retries >= START_RETRIES {
                inner.retries = 0;
                return false;
            }
            inner.retries += 1;
            std::mem::take(&mut inner.queued)
        };
        self.stop();
        self.0.borrow_mut().queued = queued;
        self.spawn();
        true
    }

    fn on_message(&self, msg: ToPage) {
        let handler = {
            let mut inner = self.0.borrow_mut();
            if let ToPage::Ready { .. } = msg {
                inner.ready = true;
                inner.retries = 0;
                let queued = std::mem::take(&mut inner.queued);
                if let Some(worker) = inner.worker.as_ref() {
                    for (message, transfer) in queued {
                        let _ = post_to(worker, &message, transfer.as_ref());
                    }
                }
            }
            inner.on_event.clone()
        };
        handler(WorkerEvent::Message(msg));
    }

    /// A worker that dies while working is replaced so the next file can still be analysed;
    /// one that never started (after its retries) is not retried in a loop (the next `analyse`
    /// tries again).
    fn crashed(&self, text: String) {
        let (handler, was_ready) = {
            let inner = self.0.borrow();
            (inner.on_event.clone(), inner.ready)
        };
        self.stop();
        if was_ready {
            self.spawn();
        }
        handler(WorkerEvent::Crashed(text));
    }
}

fn post_to(worker: &Worker, message: &JsValue, transfer: Option<&Array>) -> Result<(), JsValue> {
    match transfer {
        Some(t) => worker.post_message_with_transfer(message, t),
        None => worker.post_message(message),
    }
}

fn describe(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
