//! The top component: owns the page's state (which screen, per-file progress, whether the
//! worker is ready) and the worker client; the views below only render what they are given.

use super::client::{Client, WorkerEvent};
use super::protocol::{Request, ToPage};
use super::share::Opening;
use super::views::{saved_rules, ErrorScreen, ProgressScreen, RangeRequest, ReportScreen, StartScreen};
use crate::share_link::ViewState;
use crate::Report;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::File;

/// Relative, so the site works from a sub-path.
const SAMPLE_URL: &str = "./sample-trace.json.gz";
const SAMPLE_NAME: &str = "sample-trace.json.gz";

/// Which screen the page shows.
#[derive(Clone)]
pub enum Stage {
    Start,
    Reading,
    Done(Arc<Loaded>),
    Failed(Failure),
}

/// A finished analysis: the Report and, when it came from the worker, the exact `--json` text.
pub struct Loaded {
    pub report: Report,
    pub json: String,
    /// The worker's peak wasm memory for this analysis (0 for a share link); shown to
    /// benchmarks as a data attribute.
    pub worker_memory: f64,
    /// The view to show first (a share link's, else the default).
    pub view: ViewState,
    /// Opened by `?trace=` URLs: a share link then carries only the view state.
    pub from_urls: bool,
    /// For a report of a time range: the whole trace's report, to go back to at once.
    pub whole: Option<Arc<Loaded>>,
    /// How it was analysed (range, rules).
    pub request: Request,
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
    /// `performance.now()`-style milliseconds when this file's reading began.
    pub started_ms: Option<f64>,
    pub done: Option<bool>,
}

#[component]
pub fn App() -> impl IntoView {
    let opening = super::share::from_location();
    let stage = RwSignal::new(match &opening {
        Opening::Start => Stage::Start,
        Opening::Urls(..) => Stage::Reading,
        Opening::Shared(v) => Stage::Done(Arc::new(Loaded {
            report: v.report.clone().unwrap_or_else(|| crate::combine(Vec::new())),
            json: String::new(),
            worker_memory: 0.0,
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
    let progress = RwSignal::new(Vec::<FileProgress>::new());
    let ready = RwSignal::new(false);
    let dragging = RwSignal::new(false);
    // The view to restore once `?trace=` URLs are analysed.
    let pending_view = StoredValue::new(None::<ViewState>);
    // What the report on screen was made from, to analyse it again (a range, new rules).
    let source = StoredValue::new_local(None::<(Vec<File>, Request)>);
    // A range of the report on screen is being analysed (the report stays up meanwhile).
    let refreshing = RwSignal::new(false);
    let signals = Signals { stage, progress, ready, pending_view, refreshing, source };

    let client = StoredValue::new_local(Client::new(move |ev| on_worker_event(ev, signals)));

    // Starts the worker on `files` (the caller has checked that nothing else runs).
    let analyse = Callback::new(move |(files, request): (Vec<File>, Request)| {
        source.set_value(Some((files.clone(), request.clone())));
        let now = now_ms();
        progress.set(
            files
                .iter()
                .enumerate()
                .map(|(i, f)| FileProgress {
                    name: f.name(),
                    size: f.size(),
                    bytes: 0.0,
                    started_ms: (i == 0).then_some(now),
                    done: None,
                })
                .collect(),
        );
        stage.set(Stage::Reading);
        let array = files.iter().collect::<js_sys::Array>();
        client.with_value(|c| c.analyse(array, &request));
    });

    // Analyses the files on screen again with another request; the report stays up meanwhile.
    let rerun = Callback::new(move |request: Request| {
        let Some((files, _)) = source.get_value() else { return };
        source.set_value(Some((files.clone(), request.clone())));
        progress.update(|p| {
            for f in p.iter_mut() {
                (f.bytes, f.done, f.started_ms) = (0.0, None, Some(now_ms()));
            }
        });
        refreshing.set(true);
        let array = files.iter().collect::<js_sys::Array>();
        client.with_value(|c| c.analyse(array, &request));
    });
    let current_request = move || source.with_value(|s| s.as_ref().map(|(_, r)| r.clone())).unwrap_or_default();

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
    // Re-analysis needs the files: not for a share link's summary, nor across several files.
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
        progress.set(vec![FileProgress {
            name: SAMPLE_NAME.into(),
            size: 0.0,
            bytes: 0.0,
            started_ms: None,
            done: None,
        }]);
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
        client.with_value(|c| c.cancel());
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
                    Stage::Reading => view! { <ProgressScreen progress=progress on_cancel=cancel /> }.into_any(),
                    Stage::Done(loaded) => {
                        let on_range = can_rerun(&loaded).then_some(on_range);
                        let on_rules = can_rerun(&loaded).then_some(on_rules);
                        let on_perfetto = can_rerun(&loaded).then_some(on_perfetto);
                        view! {
                            <ReportScreen loaded=loaded on_files=open_files on_reset=reset on_range=on_range on_rules=on_rules on_perfetto=on_perfetto
                                refreshing=refreshing progress=progress on_cancel=cancel />
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
    progress: RwSignal<Vec<FileProgress>>,
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
    progress.set(
        checked
            .iter()
            .map(|u| FileProgress {
                name: super::fetch::file_name(u),
                size: 0.0,
                bytes: 0.0,
                started_ms: None,
                done: None,
            })
            .collect(),
    );
    let mut files = Vec::new();
    for (i, url) in checked.iter().enumerate() {
        progress.update(|p| {
            if let Some(f) = p.get_mut(i) {
                f.started_ms = Some(now_ms());
            }
        });
        let file = super::fetch::fetch_trace(url, |bytes, total| {
            progress.update(|p| {
                if let Some(f) = p.get_mut(i) {
                    f.bytes = bytes;
                    f.size = total;
                }
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

/// The state the worker's messages update.
#[derive(Clone, Copy)]
struct Signals {
    stage: RwSignal<Stage>,
    progress: RwSignal<Vec<FileProgress>>,
    ready: RwSignal<bool>,
    pending_view: StoredValue<Option<ViewState>>,
    refreshing: RwSignal<bool>,
    /// The files and request of the analysis running or on screen.
    source: StoredValue<Option<(Vec<File>, Request)>, LocalStorage>,
}

fn on_worker_event(ev: WorkerEvent, sig: Signals) {
    let Signals { stage, progress, ready, pending_view, refreshing, source } = sig;
    match ev {
        WorkerEvent::Message(ToPage::Ready) => ready.set(true),
        WorkerEvent::Message(ToPage::Progress { index, bytes }) => progress.update(|files| {
            if let Some(f) = files.get_mut(index as usize) {
                f.bytes = bytes;
                f.started_ms.get_or_insert_with(now_ms);
            }
        }),
        WorkerEvent::Message(ToPage::FileDone { index, ok }) => progress.update(|files| {
            let now = now_ms();
            if let Some(f) = files.get_mut(index as usize) {
                f.done = Some(ok);
                f.bytes = f.size;
            }
            // The next file's clock starts when this one ends.
            if let Some(next) = files.get_mut(index as usize + 1) {
                next.started_ms = Some(now);
            }
        }),
        WorkerEvent::Message(ToPage::Done { json, wasm_memory_bytes }) if refreshing.get_untracked() => {
            refreshing.set(false);
            let Stage::Done(shown) = stage.get_untracked() else { return };
            let request = source.with_value(|s| s.as_ref().map(|(_, r)| r.clone())).unwrap_or_default();
            stage.set(match serde_json::from_str::<Report>(&json) {
                Ok(report) if !report.traces.is_empty() => {
                    // A range keeps the whole trace's report made with the same rules, to go
                    // back to at once.
                    let whole = request.range.and_then(|_| {
                        let w = shown.whole.clone().unwrap_or_else(|| shown.clone());
                        (w.request.range.is_none() && w.request.rules == request.rules).then_some(w)
                    });
                    let view = ViewState { rules: request.rules.clone(), ..ViewState::default() };
                    Stage::Done(Arc::new(Loaded {
                        report,
                        json,
                        worker_memory: wasm_memory_bytes,
                        view,
                        from_urls: shown.from_urls,
                        whole,
                        request,
                    }))
                }
                Ok(report) => Stage::Failed(Failure {
                    title: "This range could not be analysed".into(),
                    details: report.errors.iter().map(file_message).collect(),
                }),
                Err(e) => Stage::Failed(Failure {
                    title: "The analysis result could not be read".into(),
                    details: vec![e.to_string()],
                }),
            });
        }
        WorkerEvent::Message(ToPage::Done { json, wasm_memory_bytes }) => {
            if !matches!(stage.get_untracked(), Stage::Reading) {
                return;
            }
            stage.set(match serde_json::from_str::<Report>(&json) {
                Ok(report) if report.traces.is_empty() => Stage::Failed(Failure {
                    title: if report.errors.len() == 1 {
                        "This file could not be analysed".into()
                    } else {
                        "These files could not be analysed".into()
                    },
                    details: report.errors.iter().map(file_message).collect(),
                }),
                Ok(report) => {
                    // A `?trace=` link's view, if it fits this report (else the default view).
                    let pending = pending_view.try_update_value(|v| v.take()).flatten();
                    let from_urls = pending.is_some();
                    let request = source.with_value(|s| s.as_ref().map(|(_, r)| r.clone())).unwrap_or_default();
                    let mut view = pending
                        .filter(|v| crate::share_link::check_state(v, Some(&report)).is_ok())
                        .unwrap_or_default();
                    view.rules = request.rules.clone();
                    Stage::Done(Arc::new(Loaded {
                        report,
                        json,
                        worker_memory: wasm_memory_bytes,
                        view,
                        from_urls,
                        whole: None,
                        request,
                    }))
                }
                Err(e) => Stage::Failed(Failure {
                    title: "The analysis result could not be read".into(),
                    details: vec![e.to_string()],
                }),
            });
        }
        WorkerEvent::Crashed(text) => {
            ready.set(false);
            if !matches!(stage.get_untracked(), Stage::Reading) && !refreshing.get_untracked() {
                return;
            }
            refreshing.set(false);
            stage.set(Stage::Failed(Failure { title: "The analysis stopped".into(), details: vec![text] }));
        }
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

pub fn now_ms() -> f64 {
    js_sys::Date::now()
}
