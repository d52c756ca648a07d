//! Small pieces several sections share: the file picker, a trace's label, the CSV button,
//! colour swatches, bucket and backend styling, unfolding rows.

use crate::report::{Report, TraceReport};
use crate::vocab::{Backend, Bucket as BucketId};
use crate::web::export;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;
use web_sys::File;

pub fn rank_label(t: &TraceReport) -> String {
    match t.rank {
        Some(r) => format!("rank {r} · {}", t.file),
        None => t.file.clone(),
    }
}

/// One trace of the report on screen, for the sections that read many of its parts: shared,
/// not copied (a trace's report holds every collective call, for one).
#[derive(Clone)]
pub struct TraceRef {
    report: Arc<Report>,
    index: usize,
}

impl TraceRef {
    pub fn new(report: Arc<Report>, index: usize) -> Option<TraceRef> {
        (index < report.traces.len()).then_some(TraceRef { report, index })
    }
}

impl std::ops::Deref for TraceRef {
    type Target = TraceReport;
    fn deref(&self) -> &TraceReport {
        &self.report.traces[self.index]
    }
}

/// CSS class for the backend badge: the colour repeats what the text says.
pub fn backend_class(backend: Backend) -> &'static str {
    match backend {
        Backend::Flash | Backend::FlashAttn => "good",
        Backend::MemEfficient | Backend::Cudnn | Backend::Vendor => "ok",
        Backend::Math | Backend::Eager => "bad",
        Backend::None => "none",
    }
}

pub fn backend_label(backend: Backend) -> &'static str {
    match backend {
        Backend::None => "no attention",
        b => b.label(),
    }
}

/// The colour class of a bucket, from its id (the name is always printed next to it).
pub fn bucket_class(id: BucketId) -> String {
    format!("b-{}", id.id())
}

/// A colour swatch of CSS class `class` (the name it stands for is always printed next to it).
pub fn swatch(class: impl std::fmt::Display) -> impl IntoView {
    view! { <span class=format!("swatch {class}") aria-hidden="true"></span> }
}

/// Whether a `<details>` toggled by the user is now open.
pub fn details_open(ev: &leptos::ev::Event) -> Option<bool> {
    ev.target()?.dyn_into::<web_sys::HtmlDetailsElement>().ok().map(|d| d.open())
}

/// The toggle handler of a `<details>` drawn open when `is_open()`: `set(now)` when the user
/// opened or closed it (not when the view state already says so).
pub fn on_details_toggle(
    is_open: impl Fn() -> bool + 'static,
    set: impl Fn(bool) + 'static,
) -> impl Fn(leptos::ev::Event) + 'static {
    move |ev| {
        if let Some(now) = details_open(&ev) {
            if now != is_open() {
                set(now);
            }
        }
    }
}

/// A small button that downloads `csv()` as `name`.
pub fn csv_button(name: String, csv: impl Fn() -> String + 'static) -> impl IntoView {
    let testid = format!("csv-{}", name.rsplit('.').nth(1).unwrap_or("table"));
    view! {
        <button type="button" class="button tiny csv" data-testid=testid title=format!("Download {name}")
            on:click=move |_| export::download(&name, &csv(), "text/csv")>"CSV"</button>
    }
}

/// The file picker: a real `<input type=file multiple>` styled through its label, so it stays
/// keyboard reachable.
#[component]
pub fn FilePicker(
    on_files: Callback<Vec<File>>,
    #[prop(into)] label: String,
    #[prop(optional)] primary: bool,
    /// The input's id and test id, when a page has a second picker.
    #[prop(default = "file-input")]
    id: &'static str,
) -> impl IntoView {
    view! {
        <span class="picker">
            <input
                id=id
                class="visually-hidden"
                type="file"
                multiple
                accept=".json,.gz,application/json,application/gzip"
                data-testid=id
                on:change:target=move |ev| {
                    let input = ev.target();
                    if let Some(list) = input.files() {
                        let files: Vec<File> = (0..list.length()).filter_map(|i| list.get(i)).collect();
                        // Allow picking the same file again later.
                        input.set_value("");
                        on_files.run(files);
                    }
                }
            />
            <label for=id class="button" class:primary=primary>{label}</label>
        </span>
    }
}

/// Text with `backticked` spans shown as code, as the report's prose writes them.
pub fn rich(text: &str) -> impl IntoView {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            let part = part.to_string();
            if i % 2 == 1 {
                view! { <code>{part}</code> }.into_any()
            } else {
                part.into_any()
            }
        })
        .collect_view()
}
