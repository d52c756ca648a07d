//! The importer interface: what every input format implements.

use crate::report::Report;
use crate::trace::{Ending, Failure, Fatal, Outcome, Sink};

/// One input format: fed the decoded bytes in chunks of any size, then told how the input
/// ended. A trace format pushes its events into the sink as they are read.
pub trait Importer<S: Sink> {
    /// The next decoded bytes.
    fn push(&mut self, bytes: &[u8], sink: &mut S);
    /// Whether more bytes can change the result (false once the input is known to be bad).
    fn wants_more(&self) -> bool;
    /// The input ended, as `ending` says: what was read.
    fn finish(self: Box<Self>, sink: &mut S, ending: Ending) -> Imported;
}

/// What an importer read.
#[derive(Debug)]
pub enum Imported {
    /// A trace: its events went to the sink; how reading ended, or why nothing could be read.
    Reading(Result<Outcome, Fatal>),
    /// A finished report.
    Report(Result<Report, ImportError>),
}

/// Why a report could not be read.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportError {
    /// The byte stream failed: how, and a one-line explanation.
    Stream(Failure, String),
    /// The bytes are not a report this version reads.
    Unreadable(String),
    Cancelled,
}
