//! How the page opens: the first screen from the URL (a share link, `?trace=` URLs, or the
//! start screen), fetching `?trace=` URLs and the sample trace.

use super::page::Page;
use super::stage::{now_ms, update_row, Failure, FileProgress, FileState, Loaded, Stage};
use crate::web::pool::WorkerStats;
use crate::web::protocol::Request;
use crate::web::share::Opening;
use crate::web::view_state::ViewState;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::File;

/// Relative, so the site works from a sub-path.
const SAMPLE_URL: &str = "./sample-trace.json.gz";
const SAMPLE_NAME: &str = "sample-trace.json.gz";

/// The screen the page opens on.
pub fn first_stage(opening: &Opening) -> Stage {
    match opening {
        Opening::Start => Stage::Start,
        Opening::Urls(..) => Stage::Reading,
        Opening::Shared(v) => Stage::Done(Arc::new(Loaded {
            report: Arc::new(v.report.clone().unwrap_or_else(|| crate::combine(Vec::new()))),
            from_link: true,
            workers: WorkerStats::default(),
            view: v.state.clone(),
            from_urls: false,
            whole: None,
            request: Request { rules: v.state.rules.clone(), ..Request::default() },
        })),
        Opening::BadLink(e) => Stage::Failed(Failure {
            title: "This link cannot be opened".into(),
            details: vec![
                format!("{e}."),
                "Nothing from the link was shown or run. Ask the sender for a new link, or open the trace itself."
                    .into(),
            ],
        }),
    }
}

impl Page {
    /// Fetches `?trace=` URLs, then analyses them and shows them in `view`.
    pub fn open_urls(self, urls: Vec<String>, view: ViewState) {
        let request = Request { rules: view.rules.clone(), ..Request::default() };
        self.pending_view.set_value(Some(view));
        leptos::task::spawn_local(self.fetch_urls(urls, request));
    }

    /// Fetches the `?trace=` URLs one after the other with progress, then analyses them; the
    /// first that fails stops with its own message.
    async fn fetch_urls(self, urls: Vec<String>, request: Request) {
        let (stage, progress) = (self.stage, self.progress);
        let mut checked = Vec::new();
        for url in &urls {
            match crate::web::fetch::check(url) {
                Ok(u) => checked.push(u),
                Err(e) => return stage.set(Stage::Failed(Failure { title: e.title, details: e.details })),
            }
        }
        let rows = checked.iter().map(|u| ArcRwSignal::new(FileProgress::new(crate::web::fetch::file_name(u), 0.0)));
        progress.set(rows.collect());
        let mut files = Vec::new();
        for (i, url) in checked.iter().enumerate() {
            update_row(progress, i, |f| f.state = FileState::Reading { started_ms: now_ms(), from_bytes: 0.0 });
            let file = crate::web::fetch::fetch_trace(url, |bytes, total| {
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
                Err(e) => return stage.set(Stage::Failed(Failure { title: e.title, details: e.details })),
            }
        }
        self.analyse(files, request);
    }

    /// Fetches the sample trace shipped with the site and analyses it.
    pub fn open_sample(self) {
        self.stage.set(Stage::Reading);
        self.progress.set(vec![ArcRwSignal::new(FileProgress::new(SAMPLE_NAME.into(), 0.0))]);
        leptos::task::spawn_local(async move {
            match fetch_sample().await {
                Ok(file) => {
                    self.pending_view.set_value(None);
                    self.analyse(vec![file], Request { rules: super::saved::saved_rules(), ..Request::default() });
                }
                Err(e) => self.stage.set(Stage::Failed(Failure {
                    title: "The sample trace could not be loaded".into(),
                    details: vec![e],
                })),
            }
        });
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
