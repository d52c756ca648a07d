//! The page's handle on the analysis worker. One worker is started at page load (so its
//! script and wasm are fetched before any trace is opened) and reused for every analysis;
//! Cancel terminates it and starts a fresh one.

use super::protocol::{Request, ToPage};
use js_sys::Array;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker, WorkerOptions, WorkerType};

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
