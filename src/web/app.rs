//! The top component: owns the page's state (which screen, per-file progress, whether the
//! worker is ready) and the worker client; the views below only render what they are given.

use super::pool::{PoolEvent, WorkerPool, WorkerStats};
use super::protocol::Request;
use super::share::Opening;
use super::state::*;
use super::views::{saved_rules, ErrorScreen, ProgressScreen, RangeRequest, ReportScreen, StartScreen};
use crate::report::Report;
use crate::share_link::{CompareSets, Side, ViewState};
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::File;

/// Relative, so the site works from a sub-path.
const SAMPLE_URL: &str = "./sample-trace.json.gz";
const SAMPLE_NAME: &str = "sample-trace.json.gz";

/// Per-file results of the running analysis, merged once every file is in.
#[derive(Default)]
struct Batch {
    reports: Vec<Option<Report>>,
    stats: WorkerStats,
    /// The open report when these files are its run B: merged in, then compared.
    run_a: Option<Report>,
}

#[component]
pub fn App() -> impl IntoView {
    let opening = super::share::from_location();
    let stage = RwSignal::new(match &opening {
        Opening::Start => Stage::Start,
        Opening::Urls(..) => Stage::Reading,
        Opening::Shared(v) => Stage::Done(Arc::new(Loaded {
            report: Arc::new(v.report.clone().unwrap_or_else(|| crate::combine(Vec::new()))),
            from_link: true,
            workers: WorkerStats::default(),
            view: v.state.clone(),
            from_urls: false,
            whole: None,
            request: Request { range: None, rules: v.state.rules.clone() },
        })),
        Opening::BadLink(e) => Stage::Failed(Failure {
            title: "This link cannot be opened".into(),
            details: vec![
                format!("{e}."),
                "Nothing from the link was shown or run. Ask the sender for a new link, or open the trace itself."
                    .into(),
            ],
        }),
    });
    let progress: ProgressRows = RwSignal::new(Vec::new());
    let ready = RwSignal::new(false);
    let dragging = RwSignal::new(false);
    // The view to restore once `?trace=` URLs are analysed.
    let pending_view = StoredValue::new(None::<ViewState>);
    let batch = StoredValue::new(Batch::default());
    // What the report on screen was made from, to analyse it again (a range, new rules).
    let source = StoredValue::new_local(None::<(Vec<File>, Request)>);
    // The report on screen is being analysed again (it stays up meanwhile).
    let refreshing = RwSignal::new(false);
    let signals = Signals { stage, progress, ready, batch, pending_view, refreshing, source };

    let pool = StoredValue::new_local(WorkerPool::new(move |ev| on_pool_event(ev, signals)));

    // Starts the workers on `files`, run B of `run_a` when given (the caller has checked that
    // nothing else runs).
    let start = move |files: Vec<File>, request: Request, run_a: Option<Report>| {
        source.set_value(Some((files.clone(), request.clone())));
        progress.set(files.iter().map(|f| ArcRwSignal::new(FileProgress::new(f.name(), f.size()))).collect());
        batch.set_value(Batch { reports: vec![None; files.len()], stats: WorkerStats::default(), run_a });
        pool.with_value(|p| p.analyse(files, request));
    };
    let analyse = Callback::new(move |(files, request): (Vec<File>, Request)| {
        stage.set(Stage::Reading);
        start(files, request, None);
    });

    // Files of another run, compared as B with the open report as A.
    let add_run_b = Callback::new(move |files: Vec<File>| {
        let Stage::Done(loaded) = stage.get_untracked() else { return };
        if files.is_empty() || loaded.from_link {
            return;
        }
        pending_view.set_value(None);
        stage.set(Stage::Reading);
        // Run B is read with the rules run A was made with.
        let request = Request { range: None, rules: loaded.request.rules.clone() };
        start(files, request, Some(Report::clone(&loaded.report)));
    });
    // Analyses the files on screen again with another request; the report stays up meanwhile.
    let rerun = Callback::new(move |request: Request| {
        if let Some((files, _)) = source.get_value() {
            refreshing.set(true);
            start(files, request, None);
        }
    });
    let current_request = move || request_of(source);

    // A timeline selection: analyse that range; "whole trace" goes back (at once when the
    // whole trace's report is still there).
    let on_range = Callback::new(move |want: RangeRequest| {
        if refreshing.get_untracked() {
            return;
        }
        let mut request = current_request();
        match want {
            RangeRequest::Whole => {
                request.range = None;
                let whole = match stage.get_untracked() {
                    Stage::Done(shown) => shown.whole.clone(),
                    _ => None,
                };
                match whole {
                    Some(whole) => {
                        source.update_value(|s| {
                            if let Some((_, r)) = s {
                                *r = request;
                            }
                        });
                        stage.set(Stage::Done(whole));
                    }
                    None => rerun.run(request),
                }
            }
            RangeRequest::Range(start, end) => {
                request.range = Some((start, end));
                rerun.run(request);
            }
        }
    });
    // New bucket rules: analyse again with them (the range kept).
    let on_rules = Callback::new(move |rules: String| {
        if !refreshing.get_untracked() {
            rerun.run(Request { rules, ..current_request() });
        }
    });
    // Hands the trace on screen to the Perfetto UI (in a new tab of this browser).
    let on_perfetto = Callback::new(move |()| -> Result<(), String> {
        let file = source.with_value(|s| s.as_ref().and_then(|(f, _)| f.first().cloned()));
        match file {
            Some(f) => super::perfetto::open(f),
            None => Err("no trace file to hand over".into()),
        }
    });
    // Analysing again needs the files: not for a share link's summary, nor across several
    // files.
    let can_rerun = move |loaded: &Loaded| source.with_value(|s| s.is_some()) && loaded.report.traces.len() == 1;

    let open_files = Callback::new(move |files: Vec<File>| {
        if files.is_empty() || matches!(stage.get_untracked(), Stage::Reading) || refreshing.get_untracked() {
            return;
        }
        pending_view.set_value(None);
        analyse.run((files, Request { range: None, rules: saved_rules() }));
    });

    if let Opening::Urls(urls, view) = opening {
        let request = Request { range: None, rules: view.rules.clone() };
        pending_view.set_value(Some(view));
        leptos::task::spawn_local(open_urls(urls, request, stage, progress, analyse));
    }

    let open_sample = Callback::new(move |()| {
        stage.set(Stage::Reading);
        progress.set(vec![ArcRwSignal::new(FileProgress::new(SAMPLE_NAME.into(), 0.0))]);
        leptos::task::spawn_local(async move {
            match fetch_sample().await {
                Ok(file) => {
                    pending_view.set_value(None);
                    analyse.run((vec![file], Request { range: None, rules: saved_rules() }));
                }
                Err(e) => stage.set(Stage::Failed(Failure {
                    title: "The sample trace could not be loaded".into(),
                    details: vec![e],
                })),
            }
        });
    });

    let cancel = Callback::new(move |()| {
        pool.with_value(|p| p.cancel());
        ready.set(false);
        refreshing.set(false);
        progress.set(Vec::new());
        stage.set(Stage::Start);
    });

    let reset = Callback::new(move |()| {
        pending_view.set_value(None);
        super::share::clear_location();
        stage.set(Stage::Start);
    });

    // Drag and drop anywhere on the page: the browser would otherwise open the file itself.
    let _ = window_event_listener(leptos::ev::dragover, move |ev| {
        ev.prevent_default();
        dragging.set(true);
    });
    let _ = window_event_listener(leptos::ev::dragleave, move |ev| {
        if ev.related_target().is_none() {
            dragging.set(false);
        }
    });
    let _ = window_event_listener(leptos::ev::drop, move |ev| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(list) = ev.data_transfer().and_then(|dt| dt.files()) {
            open_files.run((0..list.length()).filter_map(|i| list.get(i)).collect());
        }
    });

    view! {
        <div class="page" class:dragging=move || dragging.get()>
            <header class="topbar">
                <a class="brand" href="./" on:click=move |ev| { ev.prevent_default(); reset.run(()); }>
                    <span class="logo" aria-hidden="true"></span>
                    "tracesight"
                </a>
                <span class="tagline">"where does my GPU time go?"</span>
            </header>
            <main>
                {move || match stage.get() {
                    Stage::Start => view! {
                        <StartScreen ready=ready on_files=open_files on_sample=open_sample />
                    }.into_any(),
                    Stage::Reading => view! { <ProgressScreen rows=progress on_cancel=cancel /> }.into_any(),
                    Stage::Done(loaded) => {
                        let on_range = can_rerun(&loaded).then_some(on_range);
                        let on_rules = can_rerun(&loaded).then_some(on_rules);
                        let on_perfetto = can_rerun(&loaded).then_some(on_perfetto);
                        view! {
                            <ReportScreen loaded=loaded on_files=open_files on_run_b=add_run_b on_reset=reset on_range=on_range
                                on_rules=on_rules on_perfetto=on_perfetto refreshing=refreshing progress=progress on_cancel=cancel />
                        }.into_any()
                    }
                    Stage::Failed(failure) => view! {
                        <ErrorScreen failure=failure on_files=open_files on_reset=reset />
                    }.into_any(),
                }}
            </main>
            <div class="drop-overlay" aria-hidden="true"><p>"Drop trace files to analyse them here"</p></div>
        </div>
    }
}

/// Fetches the `?trace=` URLs one after the other with progress, then analyses them; the
/// first that fails stops with its own message.
async fn open_urls(
    urls: Vec<String>,
    request: Request,
    stage: RwSignal<Stage>,
    progress: ProgressRows,
    analyse: Callback<(Vec<File>, Request)>,
) {
    let mut checked = Vec::new();
    for url in &urls {
        match super::fetch::check(url) {
            Ok(u) => checked.push(u),
            Err(e) => {
                stage.set(Stage::Failed(Failure { title: e.title, details: e.details }));
                return;
            }
        }
    }
    progress
        .set(checked.iter().map(|u| ArcRwSignal::new(FileProgress::new(super::fetch::file_name(u), 0.0))).collect());
    let mut files = Vec::new();
    for (i, url) in checked.iter().enumerate() {
        update_row(progress, i, |f| f.state = FileState::Reading { started_ms: now_ms(), from_bytes: 0.0 });
        let file = super::fetch::fetch_trace(url, |bytes, total| {
            update_row(progress, i, |f| {
                f.bytes = bytes;
                f.size = total;
            })
        })
        .await;
        if !matches!(stage.get_untracked(), Stage::Reading) {
            return; // cancelled
        }
        match file {
            Ok(f) => files.push(f),
            Err(e) => {
                stage.set(Stage::Failed(Failure { title: e.title, details: e.details }));
                return;
            }
        }
    }
    analyse.run((files, request));
}

/// The state the workers' messages update.
#[derive(Clone, Copy)]
struct Signals {
    stage: RwSignal<Stage>,
    progress: ProgressRows,
    ready: RwSignal<bool>,
    batch: StoredValue<Batch>,
    pending_view: StoredValue<Option<ViewState>>,
    refreshing: RwSignal<bool>,
    source: Source,
}

fn on_pool_event(ev: PoolEvent, sig: Signals) {
    let Signals { stage, progress, ready, batch, pending_view, refreshing, source } = sig;
    match ev {
        PoolEvent::Ready { warm_up_kernels } => {
            ready.set(true);
            // Shown on <html data-warm-up-kernels> for the browser tests (and the curious).
            if warm_up_kernels > 0 {
                if let Some(root) = document().document_element() {
                    let _ = root.set_attribute("data-warm-up-kernels", &warm_up_kernels.to_string());
                }
            }
        }
        PoolEvent::Progress { file, bytes } => update_row(progress, file, |f| {
            f.bytes = bytes;
            if f.state == FileState::Waiting {
                f.state = FileState::Reading { started_ms: now_ms(), from_bytes: bytes };
            }
        }),
        PoolEvent::Finished { file, outcome, stats } => {
            if !matches!(stage.get_untracked(), Stage::Reading) && !refreshing.get_untracked() {
                return;
            }
            let name = progress.with_untracked(|r| r.get(file).map(|f| f.with_untracked(|f| f.name.clone())));
            let report = match outcome.map(|json| serde_json::from_str::<Report>(&json)) {
                Ok(Ok(report)) => report,
                Ok(Err(e)) => failed_file(name.clone(), format!("the analysis result could not be read: {e}")),
                Err(text) => failed_file(name.clone(), text),
            };
            let state = match report.errors.first() {
                Some(e) if report.traces.is_empty() => FileState::Failed(e.message.clone()),
                _ => FileState::Done,
            };
            update_row(progress, file, |f| {
                f.bytes = f.size;
                f.state = state;
            });
            let all = batch.try_update_value(|b| {
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
            let request = request_of(source);
            match all {
                Some(Some((reports, None, stats))) => {
                    // The report on screen analysed again (a range, new rules)?
                    let shown = match stage.get_untracked() {
                        Stage::Done(shown) if refreshing.get_untracked() => Some(shown),
                        _ => None,
                    };
                    refreshing.set(false);
                    // Else a `?trace=` link's view, if any.
                    let pending =
                        if shown.is_some() { None } else { pending_view.try_update_value(|v| v.take()).flatten() };
                    let from_urls = pending.is_some();
                    stage.set(finished(crate::merge(reports), stats, pending, from_urls, request, shown))
                }
                Some(Some((reports, Some(run_a), stats))) => {
                    let labelled = std::iter::once((run_a, Some(Side::A)))
                        .chain(reports.into_iter().map(|r| (r, Some(Side::B))))
                        .collect();
                    let (report, sides) = crate::merge_labelled(labelled);
                    let compare = CompareSets::from_sides(&sides);
                    // Compared at once when B brought traces; else the error screen or notice says why.
                    let view =
                        ViewState { compare: (!compare.b.is_empty()).then_some(compare), ..ViewState::default() };
                    stage.set(finished(report, stats, Some(view), false, request, None));
                }
                _ => {}
            }
        }
        PoolEvent::Unavailable(text) => {
            ready.set(false);
            if matches!(stage.get_untracked(), Stage::Reading) || refreshing.get_untracked() {
                refreshing.set(false);
                stage.set(Stage::Failed(Failure { title: "The analysis stopped".into(), details: vec![text] }));
            }
        }
    }
}

/// The request of the analysis running or on screen.
fn request_of(source: Source) -> Request {
    source.with_value(|s| s.as_ref().map(|(_, r)| r.clone())).unwrap_or_default()
}

/// The files and request of the analysis running or on screen, to analyse them again.
type Source = StoredValue<Option<(Vec<File>, Request)>, LocalStorage>;

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
    let mut view = view.filter(|v| crate::share_link::check_state(v, Some(&report)).is_ok()).unwrap_or_default();
    view.rules = request.rules.clone();
    let report = Arc::new(report);
    Stage::Done(Arc::new(Loaded { report, from_link: false, workers, view, from_urls, whole: None, request }))
}

async fn fetch_sample() -> Result<File, String> {
    let window = leptos::prelude::window();
    let describe = |e: wasm_bindgen::JsValue| format!("{e:?}");
    let resp: web_sys::Response =
        JsFuture::from(window.fetch_with_str(SAMPLE_URL)).await.map_err(describe)?.unchecked_into();
    if !resp.ok() {
        return Err(format!("{SAMPLE_URL}: HTTP {}", resp.status()));
    }
    let blob: web_sys::Blob = JsFuture::from(resp.blob().map_err(describe)?).await.map_err(describe)?.unchecked_into();
    File::new_with_blob_sequence(&js_sys::Array::of1(&blob), SAMPLE_NAME).map_err(describe)
}
