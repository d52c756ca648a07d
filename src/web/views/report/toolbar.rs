//! The report's title and actions: other files, exports, the share link, Perfetto, close.

use crate::report::{Report, TraceReport};
use crate::share_link::Scope;
use crate::web::state::{Loaded, Page, ViewSignals};
use crate::web::views::widgets::FilePicker;
use crate::web::{export, format, share};
use leptos::prelude::*;
use std::sync::Arc;

/// `status` gets what a button did; `perfetto`: the trace itself is there to hand over.
#[component]
pub fn Toolbar(
    loaded: Arc<Loaded>,
    view: ViewSignals,
    status: RwSignal<Option<String>>,
    page: Page,
    perfetto: bool,
) -> impl IntoView {
    let report = loaded.report.clone();
    let export_json = {
        let report = report.clone();
        // Exactly what `tracesight --json` prints for the same files (for a share link: the
        // summary it carries, serialised the same way).
        move |_| {
            let json = crate::export::json::to_pretty_string(&*report).unwrap_or_default() + "\n";
            export::download(&export::file_name(&report), &json, "application/json")
        }
    };
    let copy_link = {
        let (loaded, rules) = (loaded.clone(), loaded.view.rules.clone());
        move |_| status.set(Some(copy_link(&loaded.report, view, rules.clone(), loaded.from_urls)))
    };
    let copy_markdown = {
        let report = report.clone();
        move |_| {
            export::copy_text(&crate::export::markdown::render(&report));
            status.set(Some("Markdown summary copied: paste it into an issue or a chat".into()));
        }
    };
    view! {
        <div class="toolbar">
            <div class="files-title">
                <h1>{title(&report.traces)}</h1>
                <span class="muted">{subtitle(&report.traces)}</span>
            </div>
            <div class="actions">
                <FilePicker on_files=Callback::new(move |files| page.open_files(files)) label="Open other files…" />
                <button type="button" class="button" data-testid="export-json" on:click=export_json>"Export JSON"</button>
                <button type="button" class="button" data-testid="copy-markdown" on:click=copy_markdown>"Copy as Markdown"</button>
                <button type="button" class="button" data-testid="share-link" on:click=copy_link>"Copy share link"</button>
                {perfetto.then(|| view! {
                    <button type="button" class="button" data-testid="open-perfetto"
                        title="Opens ui.perfetto.dev in a new tab and hands it this trace file, from this browser to that tab: nothing is uploaded to a server"
                        on:click=move |_| status.set(Some(match page.open_in_perfetto() {
                            Ok(()) => "Opening the trace in Perfetto in a new tab: this page hands the file to that tab in your browser (nothing is uploaded). The tab may take a few seconds to load it.".to_string(),
                            Err(e) => format!("Perfetto could not be opened: {e}"),
                        }))>"Open in Perfetto"</button>
                })}
                <button type="button" class="button quiet" on:click=move |_| page.reset()>"Close"</button>
            </div>
        </div>
    }
}

/// Copies the share link of `view` and says what it holds (or why there is none).
fn copy_link(report: &Report, view: ViewSignals, rules: String, from_urls: bool) -> String {
    match share::link(report, &view.current(rules), from_urls) {
        Ok((url, scope)) => {
            export::copy_text(&url);
            let kb = url.len().div_ceil(1024);
            match scope {
                None => "Link copied: it opens the same trace URLs in this view".to_string(),
                Some(Scope::Full) => format!("Link copied ({kb} KB): it holds this view and the summary, not the trace"),
                Some(Scope::RanksAndSelected) => format!(
                    "Link copied ({kb} KB): too many traces for one link, so it holds the ranks view of all {} ranks and the summary of the selected trace only",
                    report.ranks.len()
                ),
            }
        }
        Err(e) => e,
    }
}

fn title(traces: &[TraceReport]) -> String {
    match traces {
        [one] => one.file.clone(),
        many => format!("{} traces", many.len()),
    }
}

fn subtitle(traces: &[TraceReport]) -> String {
    let events: u64 = traces.iter().map(|t| t.events).sum();
    let bytes: u64 = traces.iter().map(|t| t.json_bytes).sum();
    format!("{} events · {} of JSON", format::count(events), format::bytes(bytes as f64))
}
