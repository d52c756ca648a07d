//! A report that `tracesight --json` wrote, read back (so that per-rank reports made
//! elsewhere combine like the traces themselves). Small: kept whole and read at the end.

use crate::input::gzip::{classify, describe};
use crate::input::importer::{ImportError, Imported, Importer};
use crate::report::Report;
use crate::trace::{Ending, Sink};

/// Whether the first decoded bytes are those of a report: our serializer writes
/// `tool_version` first, after optional whitespace.
pub fn claims(prefix: &[u8]) -> bool {
    let t = prefix.trim_ascii_start();
    let Some(rest) = t.strip_prefix(b"{") else { return false };
    rest.trim_ascii_start().starts_with(b"\"tool_version\"")
}

/// The report's bytes, kept until the input ends.
#[derive(Default)]
pub struct ReportImporter {
    json: Vec<u8>,
}

impl<S: Sink> Importer<S> for ReportImporter {
    fn push(&mut self, bytes: &[u8], _sink: &mut S) {
        self.json.extend_from_slice(bytes);
    }

    fn wants_more(&self) -> bool {
        true
    }

    fn finish(self: Box<Self>, _sink: &mut S, ending: Ending) -> Imported {
        Imported::Report(match ending {
            Ending::Failed(e) => Err(ImportError::Stream(classify(&e), describe(&e))),
            Ending::Cancelled => Err(ImportError::Cancelled),
            Ending::Eof => read_report(&self.json)
                .map_err(|e| ImportError::Unreadable(format!("a tracesight report that cannot be read: {e}"))),
        })
    }
}

/// The report in `json`, or one of an earlier version, whose critical-path pieces were named
/// in full: read once their names are indexed (what is wrong with it then is the error).
fn read_report(json: &[u8]) -> Result<Report, serde_json::Error> {
    serde_json::from_slice::<Report>(json).or_else(|e| {
        let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(json) else { return Err(e) };
        if !crate::report::index_piece_names(&mut value) {
            return Err(e);
        }
        serde_json::from_value(value)
    })
}
