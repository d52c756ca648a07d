//! The report screen, top-down like the CLI's printout: the toolbar, notices, ranks, the
//! comparison, then one trace's sections. The view state ([`ViewSignals`]: selected trace,
//! bucket filter, table sort/search/unfolded rows, unfolded buckets, compare pair, figures)
//! lives here, starts from `loaded.view` (a share link's) and is what "Copy share link" writes.

mod notices;
mod toolbar;
mod trace;

use super::compare::CompareSection;
use super::job::JobSection;
use crate::web::state::{Loaded, Page, ViewSignals};
use leptos::prelude::*;
use notices::{RangeProgress, ReportNotices};
use std::sync::Arc;
use toolbar::Toolbar;
use trace::{TraceNav, TraceView};

#[component]
pub fn ReportScreen(loaded: Arc<Loaded>, page: Page) -> impl IntoView {
    let view = ViewSignals::new(&loaded.view);
    // What the toolbar's buttons say they did.
    let status = RwSignal::new(None::<String>);
    let report = loaded.report.clone();
    // A time range, new rules and Perfetto need the trace itself (not a share link's summary).
    let rerun = page.can_rerun(&loaded);
    let trace_view = {
        let (report, rules) = (report.clone(), loaded.view.rules.clone());
        move || {
            let t = super::widgets::TraceRef::new(report.clone(), view.selected.get());
            t.map(|t| view! { <TraceView trace=t view=view page=rerun.then_some(page) rules=rules.clone() /> })
        }
    };
    let compare_view = {
        let report = report.clone();
        // Opening or closing the comparison rebuilds it; changing its sets only redraws its body.
        let open = Memo::new(move |_| view.compare.with(Option::is_some));
        let run_b = (!loaded.from_link).then_some(Callback::new(move |files| page.add_run_b(files)));
        move || open.get().then(|| view! { <CompareSection report=report.clone() sets=view.compare run_b=run_b /> })
    };
    let workers = loaded.workers;
    view! {
        <div
            class="report"
            data-worker-wasm-bytes=workers.read.wasm_memory_bytes.to_string()
            data-worker-parts=workers.read.parts.to_string()
            data-worker-slices-read-here=workers.read.slices_read_here.to_string()
            data-worker-inflated-by-reader=workers.read.inflated_by_reader.to_string()
            data-worker-done-ms=workers.done_ms.to_string()
        >
            <Toolbar loaded=loaded.clone() view=view status=status page=page perfetto=rerun />
            {move || status.get().map(|m| view! { <p class="notice info" role="status" data-testid="share-status">{m}</p> })}
            <RangeProgress page=page />
            <ReportNotices report=report.clone() from_link=loaded.from_link />
            {(!report.ranks.is_empty()).then(|| view! {
                <JobSection rows=report.ranks.clone() job=report.job.clone() csv={
                    let report = report.clone();
                    Callback::new(move |()| crate::export::csv::ranks(&report))
                } />
            })}
            // One trace can be compared too: with another run's files, added as B.
            {(report.traces.len() > 1 || !loaded.from_link).then(|| view! { <TraceNav report=report.clone() view=view /> })}
            {compare_view}
            {trace_view}
        </div>
    }
}
