//! The page's handles on the analysis workers: [`Client`], one worker, and [`WorkerPool`],
//! which reads several files at once, one file per worker. One worker is started at page load
//! (so its script and wasm are fetched before any trace is opened); Cancel terminates them all
//! and starts a fresh one.

use super::protocol::{Request, ToPage};
use js_sys::Array;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, File, MessageEvent, Worker, WorkerOptions, WorkerType};

/// What the worker tells the page.
pub enum WorkerEvent {
    Message(ToPage),
    /// The worker died or could not start: a one-line reason.
    Crashed(String),
}

type Handler = Rc<dyn Fn(WorkerEvent)>;

#[derive(Clone)]
pub struct Client(Rc<RefCell<Inner>>);

struct Inner {
    worker: Option<Worker>,
    ready: bool,
    /// The message posted before the worker said "ready" (a worker drops earlier messages).
    queued: Option<JsValue>,
    on_event: Handler,
    // Kept alive as long as their worker.
    closures: Vec<Closure<dyn FnMut(JsValue)>>,
    /// The previous worker's handlers: `stop` may run inside one of them, so they are
    /// dropped one restart later, never while running.
    retired: Vec<Closure<dyn FnMut(JsValue)>>,
}

impl Client {
    pub fn new(on_event: impl Fn(WorkerEvent) + 'static) -> Self {
        let client = Client(Rc::new(RefCell::new(Inner {
            worker: None,
            ready: false,
            queued: None,
            on_event: Rc::new(on_event),
            closures: Vec::new(),
            retired: Vec::new(),
        })));
        client.spawn();
        client
    }

    /// Analyses `files` (a JS array of `File`/`Blob`) as `request` says, once the worker is
    /// ready.
    pub fn analyse(&self, files: Array, request: &Request) {
        if self.0.borrow().worker.is_none() {
            self.spawn();
        }
        let message = js_sys::Object::new();
        let request = serde_json::to_string(request).unwrap_or_default();
        let _ = js_sys::Reflect::set(&message, &"files".into(), &files);
        let _ = js_sys::Reflect::set(&message, &"request".into(), &request.into());
        let message: JsValue = message.into();
        let mut inner = self.0.borrow_mut();
        match (&inner.worker, inner.ready) {
            (Some(worker), true) => {
                if let Err(e) = worker.post_message(&message) {
                    let handler = inner.on_event.clone();
                    drop(inner);
                    handler(WorkerEvent::Crashed(describe(&e)));
                }
            }
            _ => inner.queued = Some(message),
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
        inner.queued = None;
        inner.retired = std::mem::take(&mut inner.closures);
    }

    fn spawn(&self) {
        let opts = WorkerOptions::new();
        opts.set_type(WorkerType::Module);
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
            match serde_wasm_bindgen::from_value::<ToPage>(data) {
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
            this.crashed(text);
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let mut inner = self.0.borrow_mut();
        inner.worker = Some(worker);
        inner.closures = vec![on_message, on_error];
    }

    fn on_message(&self, msg: ToPage) {
        let handler = {
            let mut inner = self.0.borrow_mut();
            if let ToPage::Ready = msg {
                inner.ready = true;
                if let (Some(message), Some(worker)) = (inner.queued.take(), inner.worker.as_ref()) {
                    let _ = worker.post_message(&message);
                }
            }
            inner.on_event.clone()
        };
        handler(WorkerEvent::Message(msg));
    }

    /// A worker that dies while working is replaced so the next file can still be analysed;
    /// one that never started is not retried in a loop (the next `analyse` tries again).
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

fn describe(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// What the pool tells the page, per file (`file` indexes the files given to `analyse`).
pub enum PoolEvent {
    /// A worker is ready: files can be opened.
    Ready,
    /// Bytes of `file` consumed so far.
    Progress { file: usize, bytes: f64 },
    /// `file` is finished: the Report of that file alone (as `tracesight --json` prints it),
    /// or why its worker stopped; and that worker's wasm memory size.
    Finished { file: usize, outcome: Result<String, String>, wasm_memory_bytes: f64 },
    /// The first worker could not start (nothing is being read).
    Unavailable(String),
}

/// At most this many workers, whatever the machine: each holds its own wasm memory.
pub const MAX_WORKERS: usize = 8;

/// Reads several files at once: one [`Client`] (worker) per file, up to
/// `navigator.hardwareConcurrency` (at most [`MAX_WORKERS`]); each worker takes the next
/// waiting file when it finishes one. Workers beyond the first are terminated once no file
/// waits, so an idle page holds one worker's memory.
#[derive(Clone)]
pub struct WorkerPool(Rc<RefCell<Pool>>);

struct Pool {
    slots: Vec<Slot>,
    /// How every file of the running batch is analysed.
    request: Request,
    waiting: VecDeque<(usize, File)>,
    on_event: Rc<dyn Fn(PoolEvent)>,
}

struct Slot {
    client: Client,
    /// The file this worker is reading.
    file: Option<usize>,
}

impl WorkerPool {
    pub fn new(on_event: impl Fn(PoolEvent) + 'static) -> Self {
        let pool = WorkerPool(Rc::new(RefCell::new(Pool {
            slots: Vec::new(),
            request: Request::default(),
            waiting: VecDeque::new(),
            on_event: Rc::new(on_event),
        })));
        pool.add_slot();
        pool
    }

    /// How many workers read `files` files at once.
    pub fn width(files: usize) -> usize {
        let cores = leptos::prelude::window().navigator().hardware_concurrency() as usize;
        cores.clamp(1, MAX_WORKERS).min(files.max(1))
    }

    /// Reads `files` as `request` says, each in a worker of its own, `width` at a time.
    pub fn analyse(&self, files: Vec<File>, request: Request) {
        let width = Self::width(files.len());
        {
            let mut pool = self.0.borrow_mut();
            pool.waiting = files.into_iter().enumerate().collect();
            pool.request = request;
        }
        while self.0.borrow().slots.len() < width {
            self.add_slot();
        }
        for slot in 0..width {
            self.feed(slot);
        }
    }

    /// Stops every worker at once; one fresh worker gets ready for the next files.
    pub fn cancel(&self) {
        let clients: Vec<Client> = {
            let mut pool = self.0.borrow_mut();
            pool.waiting.clear();
            pool.slots
                .iter_mut()
                .map(|s| {
                    s.file = None;
                    s.client.clone()
                })
                .collect()
        };
        for (i, c) in clients.iter().enumerate() {
            if i == 0 {
                c.cancel();
            } else {
                c.release();
            }
        }
    }

    fn add_slot(&self) {
        let slot = self.0.borrow().slots.len();
        let pool = Rc::downgrade(&self.0);
        let client = Client::new(move |ev| on_client_event(&pool, slot, ev));
        self.0.borrow_mut().slots.push(Slot { client, file: None });
    }

    /// Gives worker `slot` the next waiting file, or lets it go when none waits (the first
    /// worker stays, ready for the next files).
    fn feed(&self, slot: usize) {
        let next = {
            let mut pool = self.0.borrow_mut();
            if pool.slots[slot].file.is_some() {
                return;
            }
            let next = pool.waiting.pop_front();
            pool.slots[slot].file = next.as_ref().map(|(i, _)| *i);
            (pool.slots[slot].client.clone(), next, pool.request.clone())
        };
        // Outside the borrow: a worker that cannot start reports back at once.
        match next {
            (client, Some((_, file)), request) => client.analyse(Array::of1(&file), &request),
            (client, None, _) if slot > 0 => client.release(),
            _ => {}
        }
    }
}

fn on_client_event(pool: &Weak<RefCell<Pool>>, slot: usize, ev: WorkerEvent) {
    let Some(pool) = pool.upgrade().map(WorkerPool) else { return };
    let (file, handler) = {
        let p = pool.0.borrow();
        (p.slots.get(slot).and_then(|s| s.file), p.on_event.clone())
    };
    let finished = |p: &WorkerPool| {
        if let Some(s) = p.0.borrow_mut().slots.get_mut(slot) {
            s.file = None;
        }
    };
    match (ev, file) {
        (WorkerEvent::Message(ToPage::Ready), _) => handler(PoolEvent::Ready),
        (WorkerEvent::Message(ToPage::Progress { bytes, .. }), Some(file)) => {
            handler(PoolEvent::Progress { file, bytes })
        }
        (WorkerEvent::Message(ToPage::Done { json, wasm_memory_bytes }), Some(file)) => {
            finished(&pool);
            handler(PoolEvent::Finished { file, outcome: Ok(json), wasm_memory_bytes });
            pool.feed(slot);
        }
        // The worker died on this file: the file failed, the others go on (the client has
        // started a fresh worker, or will when given the next file).
        (WorkerEvent::Crashed(text), Some(file)) => {
            finished(&pool);
            handler(PoolEvent::Finished { file, outcome: Err(text), wasm_memory_bytes: 0.0 });
            pool.feed(slot);
        }
        (WorkerEvent::Crashed(text), None) if slot == 0 => handler(PoolEvent::Unavailable(text)),
        // Per-file completion arrives as Done; messages of a cancelled file are dropped.
        _ => {}
    }
}
