//! What the JSON reader hands on: its own events, before the edge makes them neutral.

use super::event::RawEvent;
use serde_json::value::RawValue;

/// Receives what the reader finds, as JSON: [`Neutral`] hands it on as neutral events.
pub trait JsonSink {
    /// One well-formed event object. `offset` is its byte position in the decoded stream.
    fn event(&mut self, ev: &RawEvent<'_>, offset: u64);
    /// A top-level key other than `traceEvents`, with its raw JSON value.
    fn metadata(&mut self, key: &str, value: &RawValue);
    /// An element of `traceEvents` that is valid JSON but not a readable event.
    fn malformed(&mut self, offset: u64, why: &str);
}
