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
mod importer;
mod push;
mod scan;
mod sink;
mod structural;

pub use edge::Neutral;
pub use importer::ChromeJson;
pub use push::PushReader;
pub use sink::JsonSink;

/// The hand-written event scanner, for the differential fuzz target (not a stable API).
#[doc(hidden)]
pub use scan::{event as scan_event, Miss as ScanMiss};
/// The vectorised container scan and its scalar reference, for their differential fuzz target.
#[doc(hidden)]
pub use structural::{container_end as structural_end, container_end_scalar as structural_end_scalar};

use crate::trace::{Ending, Fatal, Outcome};
pub use event::RawEvent;
use std::io::Read;
// The reader's tests speak of the JSON sink as `Sink`, and of the values by their names.
#[cfg(test)]
use crate::trace::*;
#[cfg(test)]
use JsonSink as Sink;

/// Default chunk size: big enough that refills are rare, small enough to stay cache-friendly
/// and bounded in the browser.
pub const CHUNK: usize = 4 << 20;

/// Reads a whole trace from `reader` into `sink`. `progress` is called after every refill with
/// the number of decoded bytes read so far; returning `false` stops the read.
pub fn read_trace<R: Read, S: JsonSink>(
    reader: R,
    sink: &mut S,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<Outcome, Fatal> {
    read_trace_chunked(reader, sink, progress, CHUNK)
}

/// [`read_trace`] with an explicit chunk size (tests use tiny chunks): a thin loop that pulls
/// chunks from `reader` and pushes them into a [`PushReader`].
pub fn read_trace_chunked<R: Read, S: JsonSink>(
    mut reader: R,
    sink: &mut S,
    progress: &mut dyn FnMut(u64) -> bool,
    chunk: usize,
) -> Result<Outcome, Fatal> {
    let mut push = PushReader::new();
    let mut buf = vec![0; chunk.max(16)];
    let mut total = 0u64;
    let ending = loop {
        // Fill the buffer at least half, so tiny reads (a reader handing out 7 bytes at a
        // time) do not turn into one parse attempt per read.
        let (n, failed) = crate::input::gzip::fill_half(&mut reader, &mut buf);
        if n > 0 {
            total += n as u64;
            if !progress(total) {
                break Ending::Cancelled;
            }
            push.feed(&buf[..n], sink);
        }
        if let Some(e) = failed {
            break Ending::Failed(e);
        }
        if n == 0 || !push.wants_more() {
            break Ending::Eof;
        }
    };
    push.finish(sink, ending)
}

#[cfg(test)]
mod scan_tests;
#[cfg(test)]
mod tests;
