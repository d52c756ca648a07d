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

mod files;
mod mailbox;
mod parts;
mod progress;
mod reader;
mod warm_up;

use super::protocol::{from_js, Job, Request, Sender, ToPage, ToWorker, WARM_UP_WORKER};
use files::*;
use js_sys::{Array, Uint8Array};
use mailbox::*;
use parts::read_part;
use progress::{post, post_with_data};
use reader::start_reader;
use warm_up::warm_up;
use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, File, MessageEvent, MessagePort};

pub fn run() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        match from_js::<ToWorker>(ev.data()) {
            Ok(ToWorker::Analyse { files, request, job, port }) => {
                MAILBOX.with(Mailbox::clear);
                let port = port.dyn_into::<MessagePort>().ok();
                wasm_bindgen_futures::spawn_local(analyse_all(reply.clone(), files, request, job, port));
            }
            // For the running analysis.
            Ok(msg) => deliver(Inbox::Page(msg)),
            Err(message) => post(&reply, &ToPage::Malformed { from: Sender::Page, message }),
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    start_reader();
    match (scope.name() == WARM_UP_WORKER).then(warm_up) {
        Some((warm_up_kernels, json)) if !json.is_empty() => {
            let bytes = Uint8Array::from(&json[..]);
            let transfer = Array::of1(&bytes.buffer());
            post_with_data(&scope, &ToPage::Ready { warm_up_kernels }, &bytes, &transfer);
        }
        warm => post(&scope, &ToPage::Ready { warm_up_kernels: warm.map_or(0, |w| w.0) }),
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
            let transfer: Array = data.iter().map(|d| d.buffer()).collect();
            let msg = ToPage::PartDone { ok: data.is_some() };
            post_with_data(&scope, &msg, &data.map_or(JsValue::UNDEFINED, JsValue::from), &transfer);
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
