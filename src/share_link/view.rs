//! What a link opens, and why one cannot be opened.

use super::common::*;
use crate::report::Report;

/// What a link opens: the view state, and the summary unless the page reads the trace itself.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedView<V> {
    pub state: V,
    pub report: Option<Report>,
}

/// Why a fragment could not be opened. Each has its own message for the error screen.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkError {
    /// No `s=` / `v=` fragment at all (not an error for the page: it shows the start screen).
    Absent,
    TooLong {
        len: usize,
    },
    /// Not base64url, or not deflate data (a truncated or edited link).
    Corrupt(&'static str),
    TooLarge,
    /// Valid packing, but the content breaks the schema or its bounds.
    Invalid(String),
    /// A link from an older tracesight (the `#r=` format, or format version 1).
    OldFormat,
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            LinkError::Absent => write!(f, "the link carries no report"),
            LinkError::TooLong { len } => {
                write!(f, "the link's data is {len} characters long; at most {MAX_FRAGMENT} are accepted")
            }
            LinkError::Corrupt(what) => write!(f, "the link's data is damaged ({what}); it may have been cut short"),
            LinkError::TooLarge => write!(f, "the link's data unpacks to more than {} KB", MAX_INFLATED / 1024),
            LinkError::Invalid(why) => write!(f, "the link's data is not a tracesight report: {why}"),
            LinkError::OldFormat => write!(f, "the link was made by an older tracesight; open the trace itself"),
        }
    }
}

/// The view part of a link: the page's view state (web::view_state), which the link format
/// carries without knowing its fields. It is serde data; the link must be exactly its encoding
/// (see `decode`), and [`LinkView::check`] bounds what serde and the generic bounds do not.
pub trait LinkView: serde::Serialize + serde::de::DeserializeOwned + Clone + PartialEq {
    /// The view's own bounds and, with a report, its indices into it.
    fn check(&self, report: Option<&Report>) -> Result<(), String>;
    /// The trace it selects (an index into `Report::traces`).
    fn selected(&self) -> u32;
    /// The view for a link that carries the selected trace only (as trace 0), comparing none.
    fn for_selected_only(&self) -> Self;
}
