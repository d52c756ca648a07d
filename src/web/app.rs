//! The top component: makes the page's state ([`Page`]: which screen, per-file progress,
//! whether a worker is ready, the worker pool), listens for dropped files, and shows the
//! screen the state names; the views below render what they are given.

use super::share::Opening;
use super::state::{first_stage, Page, Stage};
use super::views::{ErrorScreen, ProgressScreen, ReportScreen, StartScreen};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::File;

#[component]
pub fn App() -> impl IntoView {
    let opening = super::share::from_location();
    let page = Page::new(first_stage(&opening));
    if let Opening::Urls(urls, view) = opening {
        page.open_urls(urls, view);
    }
    let open_files = Callback::new(move |files: Vec<File>| page.open_files(files));
    let dragging = drop_anywhere(open_files);
    let reset = Callback::new(move |()| page.reset());
    draw_out_of_sight(page);
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
                {move || match page.stage.get() {
                    Stage::Start => view! {
                        <StartScreen ready=page.ready on_files=open_files on_sample=Callback::new(move |()| page.open_sample()) />
                    }.into_any(),
                    Stage::Reading => view! {
                        <ProgressScreen rows=page.progress on_cancel=Callback::new(move |()| page.cancel()) />
                    }.into_any(),
                    Stage::Done(loaded) => view! { <ReportScreen loaded=loaded page=page /> }.into_any(),
                    Stage::Failed(failure) => view! {
                        <ErrorScreen failure=failure on_files=open_files on_reset=reset />
                    }.into_any(),
                }}
            </main>
            <div class="drop-overlay" aria-hidden="true"><p>"Drop trace files to analyse them here"</p></div>
        </div>
    }
}

/// The warm-up report's screen, drawn once into an element outside the document and removed
/// at once: every view's code has then run (and been compiled) before the user's first report.
/// How many elements it drew is on `<html data-warm-views>` for the browser tests.
fn draw_out_of_sight(page: Page) {
    Effect::new(move |_| {
        let Some(loaded) = page.warm.get() else { return };
        let Some(parent) = document().create_element("div").ok() else { return };
        let mounted = leptos::mount::mount_to(
            parent.clone().unchecked_into::<web_sys::HtmlElement>(),
            move || view! { <ReportScreen loaded=loaded page=page /> },
        );
        let drawn = parent.get_elements_by_tag_name("*").length();
        drop(mounted);
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("data-warm-views", &drawn.to_string());
        }
        page.warm.set(None);
    });
}

/// Drag and drop anywhere on the page opens the files (the browser would otherwise open the
/// file itself); the signal says whether files are being dragged over it.
fn drop_anywhere(open_files: Callback<Vec<File>>) -> RwSignal<bool> {
    let dragging = RwSignal::new(false);
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
    dragging
}
