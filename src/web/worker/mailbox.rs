//! Messages that something waits for (the page's, the other stage's, the reader's), and the
//! worker's few thread-local handles.

use super::progress::post;
use crate::web::protocol::{from_js, to_js, FromInflater, FromReader, Sender, ToInflater, ToPage, ToWorker};
use js_sys::{Array, Promise, Uint8Array};
use serde::{de::DeserializeOwned, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::thread::LocalKey;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, MessagePort, Worker};

/// Messages that something waits for, in arrival order, and the waker of the one waiting.
pub(super) struct Mailbox<T> {
    queue: RefCell<VecDeque<T>>,
    wake: RefCell<Option<js_sys::Function>>,
}

impl<T> Mailbox<T> {
    pub(super) const fn new() -> Self {
        Mailbox { queue: RefCell::new(VecDeque::new()), wake: RefCell::new(None) }
    }

    pub(super) fn pop(&self) -> Option<T> {
        self.queue.borrow_mut().pop_front()
    }

    /// Drops the messages of an earlier reading.
    pub(super) fn clear(&self) {
        self.queue.borrow_mut().clear();
    }
}

/// A message for the running analysis.
pub(super) enum Inbox {
    /// From the page (decoded where it arrives: one that is not a [`ToWorker`] never gets here).
    Page(ToWorker),
    /// From the inflating worker, to the lead of a two-stage reading (on their port).
    Inflater(FromInflater),
    /// From the lead, to the worker that inflates for it (on their port).
    Lead(ToInflater),
    /// A message on that port that did not decode (the page is told: see [`malformed`]).
    StageMalformed,
}

/// What the reader worker did, for the slices being read.
pub(super) enum ReaderEvent {
    /// It said this.
    Said(FromReader),
    /// Its script failed, or it sent what is not a [`FromReader`]: the rest is read here.
    Failed,
}

thread_local! {
    /// For the running analysis: the page's messages after the first, and the other stage's.
    pub(super) static MAILBOX: Mailbox<Inbox> = const { Mailbox::new() };
    /// The reader worker's messages for the slices being read (see [`Slices`]).
    pub(super) static READS: Mailbox<ReaderEvent> = const { Mailbox::new() };
    /// The reader worker, once started; None when it could not start or failed.
    pub(super) static READER: RefCell<Option<Worker>> = const { RefCell::new(None) };
    /// The id of the last request to the reader worker.
    pub(super) static READ_ID: Cell<u32> = const { Cell::new(0) };
    /// Slices read by this worker itself (not by the reader) in the running analysis.
    pub(super) static SLICES_READ_HERE: Cell<u32> = const { Cell::new(0) };
    /// Files the reader inflated in the running analysis.
    pub(super) static INFLATED_BY_READER: Cell<u32> = const { Cell::new(0) };
}

pub(super) fn deliver_to<T: 'static>(mailbox: &'static LocalKey<Mailbox<T>>, message: T) {
    let wake = mailbox.with(|m| {
        m.queue.borrow_mut().push_back(message);
        m.wake.borrow_mut().take()
    });
    if let Some(wake) = wake {
        let _ = wake.call0(&JsValue::NULL);
    }
}

/// The next message in `mailbox`, waiting for it.
pub(super) async fn receive_from<T: 'static>(mailbox: &'static LocalKey<Mailbox<T>>) -> T {
    loop {
        if let Some(m) = mailbox.with(Mailbox::pop) {
            return m;
        }
        let woken = Promise::new(&mut |resolve, _| mailbox.with(|m| *m.wake.borrow_mut() = Some(resolve)));
        let _ = JsFuture::from(woken).await;
    }
}

pub(super) fn deliver(message: Inbox) {
    deliver_to(&MAILBOX, message);
}

/// The next message for the running analysis, waiting for it.
pub(super) async fn receive() -> Inbox {
    receive_from(&MAILBOX).await
}

/// The next message for the running analysis, if one is there.
pub(super) fn try_receive() -> Option<Inbox> {
    MAILBOX.with(Mailbox::pop)
}

/// Tells the page that a message from `from` did not decode: it shows that as the worker's
/// error (as it does for its own messages), so a broken channel never passes silently.
pub(super) fn malformed(from: Sender, message: String) {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    post(&scope, &ToPage::Malformed { from, message });
}

/// Sends `message` over `port`, transferring `transfer`.
pub(super) fn send<T: Serialize>(port: &MessagePort, message: &T, transfer: Option<&JsValue>) {
    let Ok(message) = to_js(message) else { return };
    let _ = match transfer {
        Some(t) => port.post_message_with_transferable(&message, &Array::of1(t)),
        None => port.post_message(&message),
    };
}

/// Copies `bytes` into `scratch` (wasm memory, reused) and returns them there: the one copy
/// from the browser's buffer, parsed in place after. (Resizing a buffer that already held as
/// many bytes writes none.)
pub(super) fn copy_in<'a>(bytes: &Uint8Array, scratch: &'a mut Vec<u8>) -> &'a [u8] {
    scratch.resize(bytes.length() as usize, 0);
    bytes.copy_to(scratch);
    scratch
}

/// A port's message handler.
pub(super) type OnMessage = Closure<dyn FnMut(MessageEvent)>;

/// Hands the port's messages (the other stage's, decoded as `T`) to [`receive`]; one that
/// does not decode is reported to the page and delivered as [`Inbox::StageMalformed`].
pub(super) fn listen<T: DeserializeOwned + 'static>(port: &MessagePort, wrap: fn(T) -> Inbox) {
    let on_message = OnMessage::new(move |ev: MessageEvent| {
        deliver(match from_js::<T>(ev.data()) {
            Ok(message) => wrap(message),
            Err(message) => {
                malformed(Sender::Stage, message);
                Inbox::StageMalformed
            }
        })
    });
    port.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // One small handler per two-stage reading, kept for the worker's life.
    on_message.forget();
}
