//! The worker side: reads each posted `File` with asynchronous `Blob.slice().arrayBuffer()`
//! reads, a few slices ahead of the parser, and pushes the bytes into [`crate::Analysis`].
//! The browser reads the next slices while wasm parses this one; memory stays bounded: the
//! slices in flight (outside wasm memory) and one slice copied into wasm memory, never the
//! whole file.

use super::protocol::{Request, ToPage};
use js_sys::{Array, ArrayBuffer, Uint8Array};
use std::collections::VecDeque;
use std::io;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, DedicatedWorkerGlobalScope, File, MessageEvent};

/// Bytes per `Blob.slice` read: large enough to amortise the JS call and the promise, small
/// enough to keep memory flat.
const SLICE: f64 = (16 << 20) as f64;

/// Slice reads in flight while one is parsed: enough that the next slice is ready when the
/// parser wants it.
const AHEAD: usize = 2;

/// Bytes parsed between two progress messages.
const PROGRESS_STEP: usize = 4 << 20;

pub fn run() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let data = ev.data();
        let field = |name: &str| js_sys::Reflect::get(&data, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
        let files: Array = field("files").dyn_into().unwrap_or_default();
        let request = field("request").as_string().unwrap_or_default();
        let request: Request = serde_json::from_str(&request).unwrap_or_default();
        wasm_bindgen_futures::spawn_local(analyse_all(reply.clone(), files, request));
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    post(&scope, &ToPage::Ready);
}

fn post(scope: &DedicatedWorkerGlobalScope, msg: &ToPage) {
    if let Ok(value) = serde_wasm_bindgen::to_value(msg) {
        let _ = scope.post_message(&value);
    }
}

async fn analyse_all(scope: DedicatedWorkerGlobalScope, files: Array, request: Request) {
    // The page checks the rules before sending them; ones that still fail are not applied.
    let opts = request.options().unwrap_or_default();
    let mut results = Vec::with_capacity(files.length() as usize);
    // One buffer in wasm memory, reused for every slice.
    let mut scratch = Vec::new();
    for (index, value) in files.iter().enumerate() {
        let index = index as u32;
        let file: File = value.unchecked_into();
        let name = file.name();
        let result = analyse_file(&scope, index, &name, file.into(), &opts, &mut scratch).await;
        post(&scope, &ToPage::FileDone { index, ok: result.is_ok() });
        results.push(result);
    }
    let report = crate::combine_all(results);
    // Same serialisation as the CLI's --json, trailing newline included.
    let json = match serde_json::to_string_pretty(&report) {
        Ok(s) => s + "\n",
        Err(e) => format!("{{\"error\": \"{e}\"}}\n"),
    };
    let wasm_memory_bytes = wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64;
    post(&scope, &ToPage::Done { json, wasm_memory_bytes });
}

/// Reads `blob` slice by slice, `AHEAD` reads in flight, into a push analysis.
async fn analyse_file(
    scope: &DedicatedWorkerGlobalScope,
    index: u32,
    name: &str,
    blob: Blob,
    opts: &crate::Options,
    scratch: &mut Vec<u8>,
) -> Result<Vec<crate::TraceReport>, crate::TraceError> {
    let size = blob.size();
    let mut analysis = crate::Analysis::new(name, opts.clone());
    let mut next = 0.0;
    let mut pending: VecDeque<JsFuture> = VecDeque::new();
    let mut read = 0.0;
    loop {
        // Keep the browser reading ahead while this slice is parsed.
        while pending.len() < AHEAD && next < size {
            let end = (next + SLICE).min(size);
            match blob.slice_with_f64_and_f64(next, end) {
                Ok(slice) => pending.push_back(JsFuture::from(slice.array_buffer())),
                Err(e) => return analysis.finish(Some(js_err(e))),
            }
            next = end;
        }
        let Some(ahead) = pending.pop_front() else { break };
        let buffer: ArrayBuffer = match ahead.await {
            Ok(b) => b.unchecked_into(),
            Err(e) => return analysis.finish(Some(js_err(e))),
        };
        // The one copy: from the browser's buffer into wasm memory, parsed in place there.
        let bytes = Uint8Array::new(&buffer);
        let n = bytes.length() as usize;
        // (Resizing a buffer that already held a slice writes no bytes.)
        scratch.resize(n, 0);
        bytes.copy_to(scratch);
        // Progress every few MB, not only per slice, so the page moves smoothly.
        for piece in scratch.chunks(PROGRESS_STEP) {
            analysis.feed(piece);
            read += piece.len() as f64;
            post(scope, &ToPage::Progress { index, bytes: read });
            if !analysis.wants_more() {
                break;
            }
        }
        if !analysis.wants_more() {
            break;
        }
    }
    analysis.finish(None)
}

fn js_err(e: JsValue) -> io::Error {
    let text = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the browser could not read the file".into());
    io::Error::other(text)
}
