//! Reading a file's bytes in slices, a few ahead of the parser, by the reader worker when it
//! runs (www/reader.js), else by this worker.

use super::mailbox::*;
use super::progress::*;
use crate::web::protocol::{from_js, to_js, FromReader, Sender, ToReader};
use js_sys::{Array, ArrayBuffer, Uint8Array};
use std::collections::VecDeque;
use std::io;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, DedicatedWorkerGlobalScope, MessageEvent, Worker};

/// Bytes per `Blob.slice` read: large enough to amortise the JS call and the promise, small
/// enough to keep memory flat.
pub(super) const SLICE: f64 = (16 << 20) as f64;

/// Slices read ahead while one is parsed: enough that the next slice is ready when the parser
/// wants it.
pub(super) const AHEAD: usize = 2;

/// Bytes copied into wasm memory and parsed at a time, between two looks at the progress (and
/// at whether to go on). Small, so that each piece is parsed while in the core's cache and the
/// reused buffer stays small (docs/performance.md, the page's memory).
pub(super) const PIECE: usize = 256 << 10;

/// Bytes `at..at + len` of `blob` (fewer at its end), in one read.
pub(super) async fn read_bytes(blob: &Blob, at: u64, len: u64, size: u64) -> Result<Vec<u8>, io::Error> {
    let slice = blob.slice_with_f64_and_f64(at as f64, (at + len).min(size) as f64).map_err(js_err)?;
    let buffer: ArrayBuffer = JsFuture::from(slice.array_buffer()).await.map_err(js_err)?.unchecked_into();
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// Starts the reader worker (www/reader.js), which reads blob slices for this one. Without
/// it (a browser without nested workers, or its script failed), slices are read here.
pub(super) fn start_reader() {
    let Ok(reader) = Worker::new("./reader.js") else { return };
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(|ev: web_sys::Event| {
        // Not the page's error: the slices being read are read here instead.
        ev.prevent_default();
        READER.with(|r| r.borrow_mut().take());
        deliver_to(&READS, ReaderEvent::Failed);
    });
    reader.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    // Its bytes come on its own channel (see www/reader.js for why not a MessagePort).
    let on_message = OnMessage::new(|ev: MessageEvent| {
        let event = match from_js::<FromReader>(ev.data()) {
            Ok(said) => ReaderEvent::Said(said),
            Err(message) => {
                // The page shows it as this worker's error; meanwhile the rest is read here.
                malformed(Sender::Reader, message);
                READER.with(|r| r.borrow_mut().take());
                ReaderEvent::Failed
            }
        };
        deliver_to(&READS, event);
    });
    reader.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handlers live as long as the worker.
    on_error.forget();
    on_message.forget();
    READER.with(|r| *r.borrow_mut() = Some(reader));
}

/// One request to the reader worker (www/reader.js): bytes `from..to` of a blob, as read or
/// inflated, told apart from an earlier request's by its id. Dropping it tells the reader to
/// stop (it may be ahead).
pub(super) struct ReaderChannel {
    reader: Worker,
    id: u32,
}

/// What the reader says next.
pub(super) enum Handed {
    /// The next bytes (one buffer for a slice, a batch of them for inflated bytes), and how
    /// many bytes of the blob it has read so far.
    Bytes { bytes: Vec<ArrayBuffer>, read: f64 },
    /// All bytes were handed over.
    End,
    /// It could not go on: a read or inflate error, its script failed, or it said what this
    /// worker could not read.
    Failed,
}

impl ReaderChannel {
    /// Asks the reader, if there is one, for bytes `from..to` of `blob` in slices of up to `slice`
    /// bytes, inflated into chunks of `gunzip` bytes when that is given.
    pub(super) fn ask(blob: &Blob, from: f64, to: f64, slice: f64, gunzip: Option<usize>) -> Option<ReaderChannel> {
        let reader = READER.with(|r| r.borrow().clone())?;
        READS.with(Mailbox::clear);
        let id = READ_ID.with(|n| {
            n.set(n.get().wrapping_add(1));
            n.get()
        });
        let gunzip = gunzip.map(|chunk| chunk as u32);
        let request = ToReader::Read { id, blob: blob.clone(), from, to, slice, ahead: AHEAD as u32, gunzip };
        reader.post_message(&to_js(&request).ok()?).ok()?;
        Some(ReaderChannel { reader, id })
    }

    /// Tells the reader `what` about this request.
    fn tell(&self, what: &ToReader) {
        if let Ok(message) = to_js(what) {
            let _ = self.reader.post_message(&message);
        }
    }

    /// The reader's next message for this request (bytes are acknowledged as they are taken;
    /// an earlier request's late messages are dropped).
    pub(super) async fn next(&self) -> Handed {
        let id = self.id;
        loop {
            let said = match receive_from(&READS).await {
                ReaderEvent::Said(said) => said,
                ReaderEvent::Failed => return Handed::Failed,
            };
            match said {
                FromReader::Bytes { id: of, bytes, read } if of == id => {
                    self.tell(&ToReader::Ack { id });
                    return match buffers(bytes) {
                        Some(bytes) => Handed::Bytes { bytes, read },
                        None => {
                            malformed(
                                Sender::Reader,
                                "bytes that are neither an ArrayBuffer nor an array of them".into(),
                            );
                            Handed::Failed
                        }
                    };
                }
                FromReader::End { id: of } if of == id => return Handed::End,
                FromReader::Error { id: of, .. } if of == id => return Handed::Failed,
                // An earlier request's.
                _ => continue,
            }
        }
    }
}

/// The buffers of a [`FromReader::Bytes`]: one ArrayBuffer or an array of them.
fn buffers(bytes: JsValue) -> Option<Vec<ArrayBuffer>> {
    match bytes.dyn_into::<Array>() {
        Ok(batch) => batch.iter().map(|b| b.dyn_into::<ArrayBuffer>().ok()).collect(),
        Err(b) => b.dyn_into::<ArrayBuffer>().ok().map(|b| vec![b]),
    }
}

impl Drop for ReaderChannel {
    fn drop(&mut self) {
        self.tell(&ToReader::Stop { id: self.id });
    }
}

/// Bytes `from..to` of a blob in slices of `slice` bytes, up to [`AHEAD`] of them read before
/// they are wanted: by the reader worker when there is one, else here. Should the reader fail,
/// the rest is read here. Chromium finishes a Blob read on the thread that asked for it, so
/// reads asked for here made progress only between two parsed slices: in a test page, reading
/// 500 MB beside a stand-in parser busy for 1.43 s took 1.9-2.0 s, and 1.50-1.56 s through a
/// reader worker.
pub(super) struct Slices<'a> {
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
    pub(super) fn new(blob: &'a Blob, from: f64, to: f64, slice: f64) -> Self {
        let reader = ReaderChannel::ask(blob, from, to, slice, None);
        Slices { blob, asked: from, to, slice, reader, pending: VecDeque::new() }
    }

    /// The next slice, None after the last.
    pub(super) async fn next(&mut self) -> Option<Result<ArrayBuffer, io::Error>> {
        if let Some(reader) = &self.reader {
            match reader.next().await {
                Handed::Bytes { bytes, .. } if bytes.len() == 1 => {
                    let bytes = bytes.into_iter().next()?;
                    self.asked += bytes.byte_length() as f64;
                    return Some(Ok(bytes));
                }
                Handed::End => {
                    self.reader = None;
                    return None;
                }
                // The rest is read here, where a lasting error shows again and is reported.
                Handed::Bytes { .. } | Handed::Failed => self.reader = None,
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

/// Reads bytes `from..to` of `blob` slice by slice, handing each piece to `feed` with the bytes
/// of the range read so far (the piece included) until it wants no more; that progress goes to
/// the page through `progress`.
pub(super) async fn read_range(
    scope: &DedicatedWorkerGlobalScope,
    mut progress: Progress,
    blob: &Blob,
    from: f64,
    to: f64,
    scratch: &mut Vec<u8>,
    feed: &mut dyn FnMut(&[u8], u64) -> bool,
) -> Result<(), io::Error> {
    let mut slices = Slices::new(blob, from, to, SLICE);
    let mut read = 0;
    while let Some(buffer) = slices.next().await {
        let buffer = Uint8Array::new(&buffer?.into());
        // Copied into wasm memory a piece at a time (a slice copied whole made the worker's
        // memory 16 MB larger, and its peak more: 500 MB trace 97 -> 69 MiB as read, emulated
        // by examples/wasm_heap.rs), with a look at the progress after each, so that the page
        // moves smoothly.
        let len = buffer.length();
        for at in (0..len).step_by(PIECE) {
            let end = (at + PIECE as u32).min(len);
            let piece = copy_in(&buffer.subarray(at, end), scratch);
            read += piece.len() as u64;
            let more = feed(piece, read);
            progress.report(scope, read as f64);
            if !more {
                return Ok(());
            }
        }
    }
    Ok(())
}

pub(super) fn js_err(e: JsValue) -> io::Error {
    let text = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "the browser could not read the file".into());
    io::Error::other(text)
}
