//! The page as one value: its signals (which screen, per-file progress, whether a worker is
//! ready, whether the report on screen is being analysed again), what the running analysis
//! was asked, and the worker pool; and the user's actions on it. `app::App` makes one
//! [`Page`]; the screens get it (it is `Copy`) and call its actions.

use super::saved::saved_rules;
use super::stage::{Batch, FileProgress, Loaded, ProgressRows, RangeRequest, Stage};
use crate::report::Report;
use crate::web::pool::{WorkerPool, WorkerStats};
use crate::web::protocol::Request;
use crate::web::view_state::ViewState;
use leptos::prelude::*;
use std::sync::Arc;
use web_sys::File;

/// The files and request of the analysis running or on screen, to analyse them again.
pub(super) type Source = StoredValue<Option<(Vec<File>, Request)>, LocalStorage>;

#[derive(Clone, Copy)]
pub struct Page {
    pub stage: RwSignal<Stage>,
    pub progress: ProgressRows,
    /// A worker is ready: files can be opened.
    pub ready: RwSignal<bool>,
    /// The report on screen is being analysed again (it stays up meanwhile).
    pub refreshing: RwSignal<bool>,
    /// The first worker's warm-up report, until `app::App` has drawn it once out of sight.
    pub warm: RwSignal<Option<Arc<Loaded>>, LocalStorage>,
    /// The view to restore once `?trace=` URLs are analysed.
    pub(super) pending_view: StoredValue<Option<ViewState>>,
    pub(super) batch: StoredValue<Batch>,
    /// What the report on screen was made from, to analyse it again (a range, new rules).
    pub(super) source: Source,
    pool: StoredValue<Option<WorkerPool>, LocalStorage>,
}

impl Page {
    /// The page on `stage`, with its worker pool started.
    pub fn new(stage: Stage) -> Page {
        let page = Page {
            stage: RwSignal::new(stage),
            progress: RwSignal::new(Vec::new()),
            ready: RwSignal::new(false),
            refreshing: RwSignal::new(false),
            warm: RwSignal::new_local(None),
            pending_view: StoredValue::new(None),
            batch: StoredValue::new(Batch::default()),
            source: StoredValue::new_local(None),
            pool: StoredValue::new_local(None),
        };
        page.pool.set_value(Some(WorkerPool::new(move |ev| page.on_pool_event(ev))));
        page
    }

    /// Starts the workers on `files`, run B of `run_a` when given (the caller has checked that
    /// nothing else runs).
    fn start(self, files: Vec<File>, request: Request, run_a: Option<Report>) {
        self.source.set_value(Some((files.clone(), request.clone())));
        self.progress.set(files.iter().map(|f| ArcRwSignal::new(FileProgress::new(f.name(), f.size()))).collect());
        self.batch.set_value(Batch { reports: vec![None; files.len()], stats: WorkerStats::default(), run_a });
        self.pool.with_value(|p| {
            if let Some(p) = p {
                p.analyse(files, request)
            }
        });
    }

    pub(super) fn analyse(self, files: Vec<File>, request: Request) {
        self.stage.set(Stage::Reading);
        self.start(files, request, None);
    }

    /// Files the user dropped or picked: analysed unless something is being read.
    pub fn open_files(self, files: Vec<File>) {
        if files.is_empty() || matches!(self.stage.get_untracked(), Stage::Reading) || self.refreshing.get_untracked() {
            return;
        }
        self.pending_view.set_value(None);
        self.analyse(files, Request { rules: saved_rules(), ..Request::default() });
    }

    /// Files of another run, compared as B with the open report as A.
    pub fn add_run_b(self, files: Vec<File>) {
        let Stage::Done(loaded) = self.stage.get_untracked() else { return };
        if files.is_empty() || loaded.from_link {
            return;
        }
        self.pending_view.set_value(None);
        self.stage.set(Stage::Reading);
        // Run B is read with the rules run A was made with.
        let request = Request { rules: loaded.request.rules.clone(), ..Request::default() };
        self.start(files, request, Some(Report::clone(&loaded.report)));
    }

    /// Analyses the files on screen again with another request; the report stays up meanwhile.
    fn rerun(self, request: Request) {
        if let Some((files, _)) = self.source.get_value() {
            self.refreshing.set(true);
            self.start(files, request, None);
        }
    }

    /// The request of the analysis running or on screen.
    pub(super) fn request(self) -> Request {
        self.source.with_value(|s| s.as_ref().map(|(_, r)| r.clone())).unwrap_or_default()
    }

    /// Analysing again needs the files: not for a share link's summary, nor across several
    /// files.
    pub fn can_rerun(self, loaded: &Loaded) -> bool {
        self.source.with_value(|s| s.is_some()) && loaded.report.traces.len() == 1
    }

    /// A timeline selection: analyse that range; "whole trace" goes back (at once when the
    /// whole trace's report is still there).
    pub fn select_range(self, want: RangeRequest) {
        if self.refreshing.get_untracked() {
            return;
        }
        let mut request = self.request();
        match want {
            RangeRequest::Whole => {
                request.range = None;
                let whole = match self.stage.get_untracked() {
                    Stage::Done(shown) => shown.whole.clone(),
                    _ => None,
                };
                match whole {
                    Some(whole) => {
                        self.source.update_value(|s| {
                            if let Some((_, r)) = s {
                                *r = request;
                            }
                        });
                        self.stage.set(Stage::Done(whole));
                    }
                    None => self.rerun(request),
                }
            }
            RangeRequest::Range(start, end) => {
                request.range = Some((start, end));
                self.rerun(request);
            }
        }
    }

    /// New bucket rules: analyse again with them (the range kept).
    pub fn apply_rules(self, rules: String) {
        if !self.refreshing.get_untracked() {
            self.rerun(Request { rules, ..self.request() });
        }
    }

    /// A what-if for the critical path (`gemm=30%`; empty: none): analyse again with it (the
    /// range and rules kept).
    pub fn apply_what_if(self, what_if: String) {
        if !self.refreshing.get_untracked() {
            self.rerun(Request { what_if, ..self.request() });
        }
    }

    /// Hands the trace on screen to the Perfetto UI (in a new tab of this browser).
    pub fn open_in_perfetto(self) -> Result<(), String> {
        let file = self.source.with_value(|s| s.as_ref().and_then(|(f, _)| f.first().cloned()));
        match file {
            Some(f) => crate::web::perfetto::open(f),
            None => Err("no trace file to hand over".into()),
        }
    }

    pub fn cancel(self) {
        self.pool.with_value(|p| {
            if let Some(p) = p {
                p.cancel()
            }
        });
        self.ready.set(false);
        self.refreshing.set(false);
        self.progress.set(Vec::new());
        self.stage.set(Stage::Start);
    }

    /// Back to the start screen (and a plain URL).
    pub fn reset(self) {
        self.pending_view.set_value(None);
        crate::web::share::clear_location();
        self.stage.set(Stage::Start);
    }
}
