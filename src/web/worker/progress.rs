//! Progress messages to the page, at most every [`PROGRESS_MS`].

use crate::web::protocol::ToPage;
use js_sys::{Array, Reflect};
use wasm_bindgen::JsValue;
use web_sys::DedicatedWorkerGlobalScope;

/// Milliseconds between two progress messages: each is a serialisation and a `postMessage`
/// (about a millisecond of the worker's time), and the page shows no finer steps.
pub(super) const PROGRESS_MS: f64 = 50.0;

pub(super) fn post(scope: &DedicatedWorkerGlobalScope, msg: &ToPage) {
    if let Ok(value) = serde_wasm_bindgen::to_value(msg) {
        let _ = scope.post_message(&value);
    }
}

/// Posts `msg` with `data` (bytes the serde form does not carry) as its `data` property,
/// transferring the buffers in `transfer`.
pub(super) fn post_with_data(scope: &DedicatedWorkerGlobalScope, msg: &ToPage, data: &JsValue, transfer: &Array) {
    if let Ok(value) = serde_wasm_bindgen::to_value(msg) {
        let _ = Reflect::set(&value, &"data".into(), data);
        let _ = scope.post_message_with_transfer(&value, transfer);
    }
}

/// A file's progress, posted at most every [`PROGRESS_MS`].
pub(super) struct Progress {
    index: u32,
    /// Bytes counted before this reading's (a reading on from where joined parts end).
    base: f64,
    posted_ms: f64,
}

impl Progress {
    pub(super) fn new(index: u32) -> Self {
        Progress { index, base: 0.0, posted_ms: f64::NEG_INFINITY }
    }

    /// The lead's progress reading on from `from`: its count goes back to 0 first, which tells
    /// the page that the parts' counts no longer count (`pool.rs`), then on from `from`.
    pub(super) fn read_on(scope: &DedicatedWorkerGlobalScope, index: u32, from: f64) -> Self {
        post(scope, &ToPage::Progress { index, bytes: 0.0 });
        post(scope, &ToPage::Progress { index, bytes: from });
        Progress { index, base: from, posted_ms: js_sys::Date::now() }
    }

    pub(super) fn report(&mut self, scope: &DedicatedWorkerGlobalScope, bytes: f64) {
        let now = js_sys::Date::now();
        if now - self.posted_ms >= PROGRESS_MS {
            self.posted_ms = now;
            post(scope, &ToPage::Progress { index: self.index, bytes: self.base + bytes });
        }
    }
}
