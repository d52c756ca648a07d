//! The input formats, one folder each. A format is an [`Importer`] and a test on the first
//! decoded bytes; adding one is a folder here and a line in [`Format`].

use super::importer::Importer;
use crate::trace::Sink;

pub mod chrome_json;
pub mod report;

/// The formats, in the order their tests are tried; the last takes whatever the others do
/// not claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A report that `tracesight --json` wrote.
    Report,
    /// A Chrome-trace JSON file (PyTorch profiler, Kineto).
    ChromeJson,
}

impl Format {
    /// The format whose first decoded bytes these are (at least a few hundred of them, when
    /// the input has that many).
    pub fn of(prefix: &[u8]) -> Format {
        if report::claims(prefix) {
            Format::Report
        } else {
            Format::ChromeJson
        }
    }

    /// A fresh importer of the format.
    pub fn importer<S: Sink>(self) -> Box<dyn Importer<S>> {
        match self {
            Format::Report => Box::new(report::ReportImporter::default()),
            Format::ChromeJson => Box::new(chrome_json::ChromeJson::new()),
        }
    }
}
