//! The screens and the report's sections. Each renders from data it is given; the state
//! lives in `app::App`.

mod attention;
mod buckets;
mod error;
mod hints;
mod job;
mod progress;
mod report;
mod rules;
mod start;
mod tables;
mod timeline;
mod why;

pub use error::ErrorScreen;
pub use progress::ProgressScreen;
pub use report::ReportScreen;
pub use rules::saved_rules;
pub use start::StartScreen;
pub use timeline::RangeRequest;

use leptos::prelude::*;
use web_sys::File;

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
