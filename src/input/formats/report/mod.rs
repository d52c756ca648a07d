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
            Ending::Eof => serde_json::from_slice::<Report>(&self.json).or_else(|e| {
                earlier_form(&self.json)
                    .ok_or_else(|| ImportError::Unreadable(format!("a tracesight report that cannot be read: {e}")))
            }),
        })
    }
}

/// A report of an earlier version, whose critical-path pieces were named in full; None when it
/// is not one (the error of reading it as it is then stands).
fn earlier_form(json: &[u8]) -> Option<Report> {
    let mut value: serde_json::Value = serde_json::from_slice(json).ok()?;
    if !crate::report::index_piece_names(&mut value) {
        return None;
    }
    serde_json::from_value(value).ok()
}
