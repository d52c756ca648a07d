//! What the workers' events do to the page: progress rows, and once every file is in, the
//! report screen (or the error screen).

use super::page::Page;
use super::stage::{file_message, now_ms, update_row, Failure, FileState, Loaded, Stage};
use crate::report::Report;
use crate::web::pool::{PoolEvent, WorkerStats};
use crate::web::protocol::Request;
use crate::web::view_state::{CompareSets, Side, ViewState};
use leptos::prelude::*;
use std::sync::Arc;

impl Page {
    pub(super) fn on_pool_event(self, ev: PoolEvent) {
        match ev {
            PoolEvent::Ready { warm_up_kernels } => {
                self.ready.set(true);
                // Shown on <html data-warm-up-kernels> for the browser tests (and the curious).
                if warm_up_kernels > 0 {
                    if let Some(root) = document().document_element() {
                        let _ = root.set_attribute("data-warm-up-kernels", &warm_up_kernels.to_string());
                    }
                }
            }
            // Drawn once out of sight (app.rs): the page's wasm compiles each function on its
            // first call, which the user's first report paid for (about 0.1 s of the main
            // thread in Chromium: decoding the report and drawing each view).
            PoolEvent::WarmUpReport(json) => {
                // The screen a user's report of it would get (none when it has no traces).
                if let Ok(report) = serde_json::from_slice::<Report>(&json) {
                    if let Stage::Done(loaded) =
                        finished(report, WorkerStats::default(), None, false, Request::default(), None)
                    {
                        self.warm.set(Some(loaded));
                    }
                }
            }
            PoolEvent::Progress { file, bytes } => update_row(self.progress, file, |f| {
                f.bytes = bytes;
                if f.state == FileState::Waiting {
                    f.state = FileState::Reading { started_ms: now_ms(), from_bytes: bytes };
                }
            }),
            PoolEvent::Finished { file, outcome, stats } => self.file_finished(file, outcome, stats),
            PoolEvent::Unavailable(text) => {
                self.ready.set(false);
                if matches!(self.stage.get_untracked(), Stage::Reading) || self.refreshing.get_untracked() {
                    self.refreshing.set(false);
                    self.stage
                        .set(Stage::Failed(Failure { title: "The analysis stopped".into(), details: vec![text] }));
                }
            }
        }
    }

    /// One file's report (or why its worker stopped); the screen once every file is in.
    fn file_finished(self, file: usize, outcome: Result<Vec<u8>, String>, stats: WorkerStats) {
        if !matches!(self.stage.get_untracked(), Stage::Reading) && !self.refreshing.get_untracked() {
            return;
        }
        let name = self.progress.with_untracked(|r| r.get(file).map(|f| f.with_untracked(|f| f.name.clone())));
        let report = match outcome.map(|json| serde_json::from_slice::<Report>(&json)) {
            Ok(Ok(report)) => report,
            Ok(Err(e)) => failed_file(name.clone(), format!("the analysis result could not be read: {e}")),
            Err(text) => failed_file(name.clone(), text),
        };
        let state = match report.errors.first() {
            Some(e) if report.traces.is_empty() => FileState::Failed(e.message.clone()),
            _ => FileState::Done,
        };
        update_row(self.progress, file, |f| {
            f.bytes = f.size;
            f.state = state;
        });
        let all = self.batch.try_update_value(|b| {
            if let Some(slot) = b.reports.get_mut(file) {
                *slot = Some(report);
            }
            b.stats = b.stats.max(stats);
            if b.reports.iter().all(Option::is_some) {
                let reports: Vec<Report> = std::mem::take(&mut b.reports).into_iter().flatten().collect();
                Some((reports, b.run_a.take(), b.stats))
            } else {
                None
            }
        });
        match all {
            Some(Some((reports, None, stats))) => self.all_in(reports, stats),
            Some(Some((reports, Some(run_a), stats))) => self.run_b_in(run_a, reports, stats),
            _ => {}
        }
    }

    /// Every file is in: the report on screen analysed again, or a new one.
    fn all_in(self, reports: Vec<Report>, stats: WorkerStats) {
        let request = self.request();
        // The report on screen analysed again (a range, new rules)?
        let shown = match self.stage.get_untracked() {
            Stage::Done(shown) if self.refreshing.get_untracked() => Some(shown),
            _ => None,
        };
        self.refreshing.set(false);
        // Else a `?trace=` link's view, if any.
        let pending = if shown.is_some() { None } else { self.pending_view.try_update_value(|v| v.take()).flatten() };
        let from_urls = pending.is_some();
        self.stage.set(finished(crate::merge(reports), stats, pending, from_urls, request, shown))
    }

    /// Every file of run B is in: compared with `run_a`.
    fn run_b_in(self, run_a: Report, reports: Vec<Report>, stats: WorkerStats) {
        let request = self.request();
        let labelled =
            std::iter::once((run_a, Some(Side::A))).chain(reports.into_iter().map(|r| (r, Some(Side::B)))).collect();
        let (report, sides) = crate::merge_labelled(labelled);
        let compare = CompareSets::from_sides(&sides);
        // Compared at once when B brought traces; else the error screen or notice says why.
        let view = ViewState { compare: (!compare.b.is_empty()).then_some(compare), ..ViewState::default() };
        self.stage.set(finished(report, stats, Some(view), false, request, None));
    }
}

/// A file whose worker stopped: the report says so, as for a file that could not be read.
fn failed_file(name: Option<String>, message: String) -> Report {
    let mut r = crate::combine(Vec::new());
    r.errors.push(crate::report::FileError { file: name.unwrap_or_else(|| "a file".into()), message });
    r
}

/// The screen once every file is in: the report in `view` if it fits (else the default view),
/// or the error screen when no file could be read.
/// `shown`: the report on screen when this was an analysis of it again (a range, new rules).
fn finished(
    report: Report,
    workers: WorkerStats,
    view: Option<ViewState>,
    from_urls: bool,
    request: Request,
    shown: Option<Arc<Loaded>>,
) -> Stage {
    if report.traces.is_empty() {
        return Stage::Failed(Failure {
            title: if report.errors.len() == 1 {
                "This file could not be analysed".into()
            } else {
                "These files could not be analysed".into()
            },
            details: report.errors.iter().map(file_message).collect(),
        });
    }
    if let Some(shown) = shown {
        // A range keeps the whole trace's report made with the same rules, to go back to at once.
        let whole = request.range.and_then(|_| {
            let w = shown.whole.clone().unwrap_or_else(|| shown.clone());
            (w.request.range.is_none() && w.request.rules == request.rules).then_some(w)
        });
        let view = ViewState { rules: request.rules.clone(), ..ViewState::default() };
        let from_urls = shown.from_urls;
        let report = Arc::new(report);
        return Stage::Done(Arc::new(Loaded { report, from_link: false, workers, view, from_urls, whole, request }));
    }
    let mut view = view.filter(|v| crate::web::view_state::check_state(v, Some(&report)).is_ok()).unwrap_or_default();
    view.rules = request.rules.clone();
    let report = Arc::new(report);
    Stage::Done(Arc::new(Loaded { report, from_link: false, workers, view, from_urls, whole: None, request }))
}
