//! The Chrome-trace JSON format (what PyTorch's profiler writes): a streaming reader that
//! visits `traceEvents` one event at a time, never holding more than one chunk of the
//! decompressed JSON (plus the event that straddles its end), and the edge ([`Neutral`]) that
//! turns each of its events into the format-neutral [`crate::trace::Event`].
//!
//! The top level is walked by hand (an object with metadata keys in any order around
//! `traceEvents`, or a bare array of events); each event by a hand-written scanner (serde_json
//! as reference and fallback), borrowing strings from the chunk. An event cut by the chunk's
//! end is parsed again once the chunk is refilled.

mod blocks;
mod edge;
pub mod event;
mod flow;
mod importer;
mod push;
mod runs;
mod scan;
mod sink;
mod structural;

pub use edge::Neutral;
pub use importer::ChromeJson;
pub use push::PushReader;
pub use sink::JsonSink;

/// The flow events' reader, for the differential fuzz target (not a stable API).
#[doc(hidden)]
pub use flow::flow as scan_flow;
/// The hand-written event scanner, for the differential fuzz target (not a stable API).
#[doc(hidden)]
pub use scan::{event as scan_event, Miss as ScanMiss};
/// The structural scan alone, for the limit probe (`examples/probe.rs structural`).
#[doc(hidden)]
pub use structural::Structure;
/// The vectorised container scan and its scalar reference, for their differential fuzz target.
#[doc(hidden)]
pub use structural::{container_end as structural_end, container_end_scalar as structural_end_scalar};

pub use event::RawEvent;
// The reader's tests speak of the JSON sink as `Sink`, and of the values by their names.
#[cfg(test)]
use crate::trace::*;
#[cfg(test)]
use JsonSink as Sink;

/// Default chunk size: big enough that refills are rare, small enough to stay cache-friendly
/// and bounded in the browser.
pub const CHUNK: usize = 4 << 20;

#[cfg(test)]
mod scan_tests;
#[cfg(test)]
mod tests;
