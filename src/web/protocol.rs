//! Messages between the page and the worker, one serde enum each way: the page posts
//! [`ToWorker`], the worker answers [`ToPage`], both through serde-wasm-bindgen ([`to_js`],
//! [`from_js`]). The JS values a message carries (the `File`s, whose handles cross by
//! structured clone, not their bytes; ports; part buffers) pass through as they are
//! (`serde_wasm_bindgen::preserve`); 64-bit numbers (trace clock nanoseconds, byte offsets)
//! travel as BigInts, which a JS number would round. A message the worker cannot decode (not
//! a `ToWorker`, or one whose fields have the wrong types) is answered [`ToPage::Malformed`],
//! which the page shows as the worker's error: never read as some default. The channels
//! between workers are typed the same way: an analysis worker and its reader worker
//! ([`ToReader`], [`FromReader`]), the two stages of a .json.gz read by two workers
//! ([`FromInflater`], [`ToInflater`]); a message on them that does not decode is reported
//! to the page as [`ToPage::Malformed`] too.

use crate::analysis::job::split::PartJob;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// `msg` as a JS value (64-bit integers as BigInts, preserved JS values as themselves).
pub fn to_js<T: Serialize>(msg: &T) -> Result<JsValue, serde_wasm_bindgen::Error> {
    msg.serialize(&serde_wasm_bindgen::Serializer::new().serialize_large_number_types_as_bigints(true))
}

/// A message decoded from its JS value, or why it is not one.
pub fn from_js<T: DeserializeOwned>(value: JsValue) -> Result<T, String> {
    serde_wasm_bindgen::from_value(value).map_err(|e| e.to_string())
}

/// What the page tells a worker. Externally tagged (`{"Analyse": {...}}`, `"InflaterLost"`):
/// serde then reads the preserved JS values straight from the message, with no buffering.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToWorker {
    /// Analyse `files` (a JS array of `File`/`Blob`) as `request` and `job` say; `port` is
    /// the channel to the lead for [`Job::Inflate`], null otherwise.
    Analyse {
        #[serde(with = "serde_wasm_bindgen::preserve")]
        files: js_sys::Array,
        request: Request,
        job: Job,
        #[serde(with = "serde_wasm_bindgen::preserve")]
        port: JsValue,
    },
    /// For a lead reading in parts: for every other part in file order, the bytes its worker
    /// sent in [`ToPage::PartDone`] (a Uint8Array) or null.
    Join {
        #[serde(with = "serde_wasm_bindgen::preserve")]
        parts: js_sys::Array,
    },
    /// For a lead that asked [`ToPage::Inflate`]: its end of a channel to the inflating worker
    /// (a MessagePort), or null: no worker can inflate, it reads the file alone.
    Inflater {
        #[serde(with = "serde_wasm_bindgen::preserve")]
        port: JsValue,
    },
    /// The lead's inflating worker died.
    InflaterLost,
}

/// What an analysis worker asks its reader worker (www/reader.js), on the reader's own
/// channel. Externally tagged (`{"Read": {...}}`), as [`ToWorker`]; every message names the
/// request it is about, so that an earlier request's late messages are told apart.
#[derive(Debug, Serialize, Deserialize)]
pub enum ToReader {
    /// Bytes `from..to` of `blob` in slices of up to `slice` bytes (the first ones smaller), at
    /// most `ahead` handed over and not yet taken; inflated (DecompressionStream) and handed
    /// over in batches of about `gunzip` bytes when that is given.
    Read {
        id: u32,
        #[serde(with = "serde_wasm_bindgen::preserve")]
        blob: web_sys::Blob,
        from: f64,
        to: f64,
        slice: f64,
        ahead: u32,
        gunzip: Option<u32>,
    },
    /// One [`FromReader::Bytes`] was taken: room for one more.
    Ack { id: u32 },
    /// No more bytes are wanted (the reader may be ahead).
    Stop { id: u32 },
}

/// What the reader worker answers an analysis worker's [`ToReader::Read`].
#[derive(Debug, Serialize, Deserialize)]
pub enum FromReader {
    /// The next bytes (an ArrayBuffer for a slice, an array of them for a batch of inflated
    /// bytes, transferred), and how many bytes of the blob it has read so far.
    Bytes {
        id: u32,
        #[serde(with = "serde_wasm_bindgen::preserve")]
        bytes: JsValue,
        read: f64,
    },
    /// All bytes were handed over.
    End { id: u32 },
    /// It could not go on (a read or inflate error: DecompressionStream stops on a truncated or
    /// damaged stream and after the first gzip member).
    Error { id: u32, message: String },
}

/// From the inflating worker of a two-stage .json.gz reading ([`Job::Inflate`]) to the worker
/// that leads it, over the MessagePort the page gave them.
#[derive(Debug, Serialize, Deserialize)]
pub enum FromInflater {
    /// The next inflated chunk (its buffer transferred).
    Bytes {
        #[serde(with = "serde_wasm_bindgen::preserve")]
        bytes: js_sys::Uint8Array,
    },
    /// The stream is done: `error` (a `CarriedError` as JSON text) when it ended badly, after
    /// the last bytes it could give.
    End { error: Option<String> },
}

/// From the lead to its inflating worker, over the same port.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum ToInflater {
    /// One chunk was taken: room for one more.
    Ack,
    /// No more bytes are wanted.
    Stop,
}

/// Whose message a worker could not decode (see [`ToPage::Malformed`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sender {
    /// The page's ([`ToWorker`]).
    Page,
    /// Its reader worker's ([`FromReader`]).
    Reader,
    /// The other stage's of a two-stage reading ([`FromInflater`] or [`ToInflater`]).
    Stage,
}

impl Sender {
    /// Who sent it, as the page words the error.
    pub fn describe(self) -> &'static str {
        match self {
            Sender::Page => "the page's message",
            Sender::Reader => "a message from its reader worker",
            Sender::Stage => "a message from the other worker reading the .json.gz",
        }
    }
}

/// How to analyse the posted files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Only GPU time in `[start, end)` on the trace's clock (a timeline selection).
    pub range: Option<(i64, i64)>,
    /// The user's bucket rules (`pattern => bucket` lines), tried before the built-in ones.
    pub rules: String,
    /// The critical path's what-if as typed (`gemm=30%`, as `--what-if`); empty: none.
    pub what_if: String,
}

impl Request {
    /// The analysis options, or why the rules cannot be used.
    pub fn options(&self) -> Result<crate::analysis::Options, String> {
        let rules = crate::analysis::rules::taxonomy::parse_rules(&self.rules)?;
        let window = self.range.map(|(start_ns, end_ns)| crate::Range::Clock { start_ns, end_ns });
        let what_if = match self.what_if.trim() {
            "" => None,
            text => Some(crate::analysis::WhatIfSpec::parse(text).map_err(|e| format!("what-if: {e}"))?),
        };
        Ok(crate::analysis::Options { rules, window, what_if, ..crate::analysis::Options::default() })
    }
}

/// What a worker does with the posted files.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// Reads the files one after another and combines their reports.
    #[default]
    Whole,
    /// Reads one file, in up to `workers` parts when it is large plain JSON: plans the cuts
    /// (answering [`ToPage::Split`]), reads the first part, then waits for [`ToWorker::Join`].
    /// Falls back to reading the file whole when a part is missing or cannot be joined exactly. A large .json.gz is instead parsed as another
    /// worker inflates it (see [`ToPage::Inflate`]).
    Lead { workers: u32 },
    /// Reads one part of a file for the worker that leads it (the page knows which part a
    /// worker reads).
    Part { job: PartJob },
    /// Inflates a .json.gz for the worker that leads it, over the `port` posted with it.
    Inflate,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToPage {
    /// The worker's wasm is loaded: messages posted from now on are not lost. A worker that
    /// warmed up says how many kernels it read doing so (0: it did not), and the message's
    /// `data` property holds its warm-up report as compact JSON (a Uint8Array, transferred),
    /// which the page draws once out of sight.
    Ready { warm_up_kernels: u32 },
    /// Bytes of file `index` consumed so far (compressed bytes for .gz).
    Progress { index: u32, bytes: f64 },
    /// File `index` is finished (`ok` false when it could not be read).
    FileDone { index: u32, ok: bool },
    /// The lead worker reads the file in parts: these are for other workers (part 0, the
    /// lead's own, is not among them).
    Split { parts: Vec<PartJob> },
    /// The lead worker asks for a worker to inflate its .json.gz: the page answers
    /// [`ToWorker::Inflater`], and [`ToWorker::InflaterLost`] if that worker dies.
    Inflate,
    /// The inflating worker is done (the lead has all it needs).
    InflateDone,
    /// A part is read; the message's `data` property holds its encoded bytes (a Uint8Array,
    /// transferred), absent when `ok` is false (the part cannot be joined).
    PartDone { ok: bool },
    /// All files analysed: the message's `data` property holds the combined Report as
    /// `tracesight --json` prints it (compact), in UTF-8, cut into a JS array of Uint8Arrays
    /// of up to [`REPORT_CHUNK`] bytes (transferred); the fields say how the files were read.
    Done(Done),
    /// A message could not be decoded (unknown, or a field of the wrong type): the page's as
    /// a [`ToWorker`] (the worker did nothing with it), its reader's as a [`FromReader`], the
    /// other stage's as a [`FromInflater`] / [`ToInflater`]. The page shows this as the
    /// worker's error.
    Malformed { from: Sender, message: String },
}

/// How a worker read its files: its wasm memory size (its high-water mark: wasm memory never
/// shrinks) and the most pieces a file was read in (1: whole; the parts joined and the rest
/// read on after them count as one piece each), how many slices it read itself
/// rather than through its reader worker (0 when the reader read them all; see
/// `worker::Slices`), and how many files the reader inflated (see `worker::analyse_gunzipped`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Done {
    pub wasm_memory_bytes: f64,
    pub parts: u32,
    pub slices_read_here: u32,
    pub inflated_by_reader: u32,
}

/// The largest piece of a report's JSON a worker hands over. The worker writes the JSON a piece
/// at a time and copies each out of its wasm memory: written whole (94 MB for a 2 GB
/// `gen_trace.py` trace, most of it each step's critical-path pieces) it grew the worker's
/// memory by its size, as no hole the freed analysis left was large enough for it.
pub const REPORT_CHUNK: usize = 1 << 20;

/// The name the page gives its first worker (the one that stays while the page is open): that
/// worker reads a small made-up trace before it says it is ready (see `worker::warm_up`).
pub const WARM_UP_WORKER: &str = "warm-up";
