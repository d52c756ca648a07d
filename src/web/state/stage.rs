//! Which screen the page shows, the finished analysis, and the per-file progress rows.

use crate::report::Report;
use crate::web::pool::WorkerStats;
use crate::web::protocol::Request;
use crate::web::view_state::ViewState;
use leptos::prelude::*;
use std::sync::Arc;

/// Which screen the page shows.
#[derive(Clone)]
pub enum Stage {
    Start,
    Reading,
    Done(Arc<Loaded>),
    Failed(Failure),
}

/// A finished analysis: the Report, from the workers or from a share link.
pub struct Loaded {
    /// Shared with the views, which read it and never copy it whole.
    pub report: Arc<Report>,
    /// Opened from a share link: a summary, not recomputed here.
    pub from_link: bool,
    /// How the workers read the files (see [`WorkerStats`]; zeros for a share link); shown
    /// to benchmarks and tests as data attributes.
    pub workers: WorkerStats,
    /// The view to show first (a share link's, else the default).
    pub view: ViewState,
    /// Opened by `?trace=` URLs: a share link then carries only the view state.
    pub from_urls: bool,
    /// For a report of a time range: the whole trace's report, to go back to at once.
    pub whole: Option<Arc<Loaded>>,
    /// How it was analysed (range, rules).
    pub request: Request,
}

/// Per-file results of the running analysis, merged once every file is in.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) reports: Vec<Option<Report>>,
    pub(super) stats: WorkerStats,
    /// The open report when these files are its run B: merged in, then compared.
    pub(super) run_a: Option<Report>,
}

/// What the user asked the timeline for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RangeRequest {
    /// Analyse `[start, end)` on the trace's clock.
    Range(i64, i64),
    /// Back to the whole trace.
    Whole,
}

#[derive(Clone)]
pub struct Failure {
    pub title: String,
    pub details: Vec<String>,
}

/// One file's progress, as the progress screen shows it.
#[derive(Clone, PartialEq)]
pub struct FileProgress {
    pub name: String,
    pub size: f64,
    pub bytes: f64,
    pub state: FileState,
}

#[derive(Clone, PartialEq)]
pub enum FileState {
    /// Not started: waiting for a free worker (or, with no size yet, for its download).
    Waiting,
    /// Being read (or downloaded): the time (`Date.now()` milliseconds) and the bytes read
    /// at the first progress report, which the rate counts from (a worker's first report
    /// already holds a few MB).
    Reading {
        started_ms: f64,
        from_bytes: f64,
    },
    Done,
    /// Could not be read at all: why.
    Failed(String),
}

impl FileProgress {
    pub fn new(name: String, size: f64) -> Self {
        FileProgress { name, size, bytes: 0.0, state: FileState::Waiting }
    }
}

/// Rows of the progress screen, each its own signal so that one file's progress redraws
/// only its row (128 files read at once stay cheap).
pub type ProgressRows = RwSignal<Vec<ArcRwSignal<FileProgress>>>;

pub fn update_row(rows: ProgressRows, i: usize, f: impl FnOnce(&mut FileProgress)) {
    if let Some(row) = rows.with_untracked(|r| r.get(i).cloned()) {
        row.update(f);
    }
}

/// `file: message`, unless the message already names the file.
pub fn file_message(e: &crate::report::FileError) -> String {
    if e.message.starts_with(&e.file) {
        e.message.clone()
    } else {
        format!("{}: {}", e.file, e.message)
    }
}

pub fn now_ms() -> f64 {
    js_sys::Date::now()
}
