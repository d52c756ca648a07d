//! The top component: owns the page's state (which screen, per-file progress, whether the
//! worker is ready) and the worker client; the views below only render what they are given.

use super::client::{Client, WorkerEvent};
use super::protocol::ToPage;
use super::share::Opening;
use super::views::{ErrorScreen, ProgressScreen, ReportScreen, StartScreen};
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

    let client =
        StoredValue::new_local(Client::new(move |ev| on_worker_event(ev, stage, progress, ready, pending_view)));

    // Starts the worker on `files` (the caller has checked that nothing else runs).
    let analyse = Callback::new(move |files: Vec<File>| {
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
        client.with_value(|c| c.analyse(array));
    });

    let open_files = Callback::new(move |files: Vec<File>| {
        if files.is_empty() || matches!(stage.get_untracked(), Stage::Reading) {
            return;
        }
        pending_view.set_value(None);
        analyse.run(files);
    });

    if let Opening::Urls(urls, view) = opening {
        pending_view.set_value(Some(view));
        leptos::task::spawn_local(open_urls(urls, stage, progress, analyse));
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
                    analyse.run(vec![file]);
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
                    Stage::Done(loaded) => view! {
                        <ReportScreen loaded=loaded on_files=open_files on_reset=reset />
                    }.into_any(),
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
    stage: RwSignal<Stage>,
    progress: RwSignal<Vec<FileProgress>>,
    analyse: Callback<Vec<File>>,
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
    analyse.run(files);
}

fn on_worker_event(
    ev: WorkerEvent,
    stage: RwSignal<Stage>,
    progress: RwSignal<Vec<FileProgress>>,
    ready: RwSignal<bool>,
    pending_view: StoredValue<Option<ViewState>>,
) {
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
                    let view = pending
                        .filter(|v| crate::share_link::check_state(v, Some(&report)).is_ok())
                        .unwrap_or_default();
                    Stage::Done(Arc::new(Loaded { report, json, worker_memory: wasm_memory_bytes, view, from_urls }))
                }
                Err(e) => Stage::Failed(Failure {
                    title: "The analysis result could not be read".into(),
                    details: vec![e.to_string()],
                }),
            });
        }
        WorkerEvent::Crashed(text) => {
            ready.set(false);
            if !matches!(stage.get_untracked(), Stage::Reading) {
                return;
            }
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
