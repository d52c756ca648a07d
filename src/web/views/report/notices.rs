//! The report's notices: a range being analysed again, a share link's summary, files that
//! could not be read.

use crate::report::Report;
use crate::web::state::{file_message, Page};
use crate::web::views::widgets::rank_label;
use leptos::prelude::*;
use std::sync::Arc;

/// A range (or new rules) being analysed: the report stays, with a progress line.
#[component]
pub fn RangeProgress(page: Page) -> impl IntoView {
    let (refreshing, progress) = (page.refreshing, page.progress);
    move || {
        refreshing.get().then(|| {
            let (bytes, size) =
                progress.with(|rows| rows.iter().fold((0.0, 0.0), |a, r| r.with(|f| (a.0 + f.bytes, a.1 + f.size))));
            let pct = if size > 0.0 { (bytes / size * 100.0).min(100.0) } else { 0.0 };
            view! {
                <div class="notice info refreshing" role="status" data-testid="range-progress">
                    <span>{format!("Analysing the selected range… {pct:.0}%")}</span>
                    <progress max="100" value=pct></progress>
                    <button type="button" class="button quiet" on:click=move |_| page.cancel()>"Cancel"</button>
                </div>
            }
        })
    }
}

#[component]
pub fn ReportNotices(report: Arc<Report>, from_link: bool) -> impl IntoView {
    let traces = report.traces.len();
    view! {
        {from_link.then(|| view! {
            <p class="notice info" data-testid="from-link">"Opened from a share link: the summary of a report as the link's sender saw it (the trace itself was never sent, and these numbers were not recomputed here)."
                {(report.ranks.len() > traces).then(|| format!(
                    " It holds the ranks view of all {} ranks and the details of {} only.",
                    report.ranks.len(),
                    report.traces.first().map(rank_label).unwrap_or_default()
                ))}
            </p>
        })}
        {(!report.errors.is_empty()).then(|| view! {
            <div class="notice warning" data-testid="file-errors">
                <strong>"Some files could not be read:"</strong>
                <ul>{report.errors.iter().map(|e| view! { <li><code>{file_message(e)}</code></li> }).collect_view()}</ul>
            </div>
        })}
    }
}
