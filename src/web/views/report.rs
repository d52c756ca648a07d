use super::attention::AttentionSection;
use super::buckets::BucketSection;
use super::compare::CompareSection;
use super::efficiency::{measured, EfficiencySection};
use super::hints::{Diagnostics, HintCards};
use super::job::JobSection;
use super::rules::RulesSection;
use super::summary::Summary;
use super::tables::{StepTable, TopKind, TopTable};
use super::timeline::{RangeRequest, TimelineSection};
use super::why::{IdleSection, LayerSection, MemorySection};
use super::widgets::{rank_label, FilePicker, TraceRef};
use crate::analysis::taxonomy::Bucket as BucketId;
use crate::report::{Report, Severity, TraceReport};
use crate::share_link::{CompareSets, Figures, Scope, TableState, ViewState};
use crate::web::state::{Loaded, ProgressRows};
use crate::web::{export, format, share};
use leptos::prelude::*;
use std::sync::Arc;
use web_sys::File;

/// The report, top-down like the CLI's printout: notices, ranks, then one trace's sections.
/// The view state (selected trace, bucket filter, table sort/search/unfolded rows, unfolded
/// buckets, compare pair) lives here, starts from `loaded.view` (a share link's) and is what
/// "Copy share link" writes.
#[component]
pub fn ReportScreen(
    loaded: Arc<Loaded>,
    on_files: Callback<Vec<File>>,
    /// Analyses a time range of the trace again (None: no trace to read, e.g. a share link).
    on_range: Option<Callback<RangeRequest>>,
    /// Analyses the trace again with new bucket rules (None as for `on_range`).
    on_rules: Option<Callback<String>>,
    /// Opens the trace in the Perfetto UI (None as for `on_range`).
    on_perfetto: Option<Callback<(), Result<(), String>>>,
    /// A range is being analysed: the report stays, with a progress line.
    refreshing: RwSignal<bool>,
    progress: ProgressRows,
    on_cancel: Callback<()>,
    /// Files of another run, to compare as B with this report as A.
    on_run_b: Callback<Vec<File>>,
    on_reset: Callback<()>,
) -> impl IntoView {
    let view0 = loaded.view.clone();
    let selected = RwSignal::new(view0.trace as usize);
    let bucket_filter = RwSignal::new(view0.bucket);
    let kernels = RwSignal::new(view0.kernels.clone());
    let ops = RwSignal::new(view0.ops.clone());
    let buckets_open = RwSignal::new(view0.buckets_open.clone());
    let compare = RwSignal::new(view0.compare);
    let figures = RwSignal::new(view0.figures.clone());
    let share_state = RwSignal::new(None::<String>);
    let report = loaded.report.clone();
    let traces = report.traces.len();
    let from_urls = loaded.from_urls;
    let rules = view0.rules.clone();
    let link_rules = rules.clone();

    let current = move || ViewState {
        trace: selected.get_untracked() as u32,
        bucket: bucket_filter.get_untracked(),
        kernels: kernels.get_untracked(),
        ops: ops.get_untracked(),
        buckets_open: buckets_open.get_untracked(),
        compare: compare.get_untracked(),
        rules: link_rules.clone(),
        figures: figures.get_untracked(),
    };

    let export_json = {
        let loaded = loaded.clone();
        move |_| {
            // Exactly what `tracesight --json` prints for the same files (for a share link: the
            // summary it carries, serialised the same way).
            let json = serde_json::to_string_pretty(&*loaded.report).unwrap_or_default() + "\n";
            export::download(&export::file_name(&loaded.report), &json, "application/json")
        }
    };
    let copy_link = {
        let report = report.clone();
        move |_| {
            let msg = match share::link(&report, &current(), from_urls) {
                Ok((url, scope)) => {
                    export::copy_text(&url);
                    let kb = url.len().div_ceil(1024);
                    match scope {
                        None => "Link copied: it opens the same trace URLs in this view".to_string(),
                        Some(Scope::Full) => {
                            format!("Link copied ({kb} KB): it holds this view and the summary, not the trace")
                        }
                        Some(Scope::RanksAndSelected) => format!(
                            "Link copied ({kb} KB): too many traces for one link, so it holds the ranks view of all {} ranks and the summary of the selected trace only",
                            report.ranks.len()
                        ),
                    }
                }
                Err(e) => e,
            };
            share_state.set(Some(msg));
        }
    };
    let copy_markdown = {
        let report = report.clone();
        move |_| {
            export::copy_text(&crate::export::markdown::render(&report));
            share_state.set(Some("Markdown summary copied: paste it into an issue or a chat".into()));
        }
    };

    // Another trace's sections: the filter and unfolded rows were the previous trace's.
    let pick = Callback::new(move |i: usize| {
        selected.set(i);
        bucket_filter.set(None);
        kernels.update(|k| k.expanded.clear());
        ops.update(|o| o.expanded.clear());
    });

    let trace_view = {
        let report = report.clone();
        move || {
            let t = TraceRef::new(report.clone(), selected.get());
            t.map(|t| view! {
                <TraceView trace=t bucket_filter=bucket_filter kernels=kernels ops=ops buckets_open=buckets_open figures=figures on_range=on_range
                    on_rules=on_rules rules=rules.clone() />
            })
        }
    };
    let compare_view = {
        let report = report.clone();
        // Opening or closing the comparison rebuilds it; changing its sets only redraws its body.
        let open = Memo::new(move |_| compare.with(Option::is_some));
        let run_b = (!loaded.from_link).then_some(on_run_b);
        move || open.get().then(|| view! { <CompareSection report=report.clone() sets=compare run_b=run_b /> })
    };

    view! {
        <div
            class="report"
            data-worker-wasm-bytes=loaded.workers.wasm_memory_bytes.to_string()
            data-worker-parts=loaded.workers.parts.to_string()
            data-worker-slices-read-here=loaded.workers.slices_read_here.to_string()
            data-worker-inflated-by-reader=loaded.workers.inflated_by_reader.to_string()
            data-worker-done-ms=loaded.workers.done_ms.to_string()
        >
            <div class="toolbar">
                <div class="files-title">
                    <h1>{title(&report.traces)}</h1>
                    <span class="muted">{subtitle(&report.traces)}</span>
                </div>
                <div class="actions">
                    <FilePicker on_files=on_files label="Open other files…" />
                    <button type="button" class="button" data-testid="export-json" on:click=export_json>"Export JSON"</button>
                    <button type="button" class="button" data-testid="copy-markdown" on:click=copy_markdown>"Copy as Markdown"</button>
                    <button type="button" class="button" data-testid="share-link" on:click=copy_link>"Copy share link"</button>
                    {on_perfetto.map(|cb| view! {
                        <button type="button" class="button" data-testid="open-perfetto"
                            title="Opens ui.perfetto.dev in a new tab and hands it this trace file, from this browser to that tab: nothing is uploaded to a server"
                            on:click=move |_| share_state.set(Some(match cb.run(()) {
                                Ok(()) => "Opening the trace in Perfetto in a new tab: this page hands the file to that tab in your browser (nothing is uploaded). The tab may take a few seconds to load it.".to_string(),
                                Err(e) => format!("Perfetto could not be opened: {e}"),
                            }))>"Open in Perfetto"</button>
                    })}
                    <button type="button" class="button quiet" on:click=move |_| on_reset.run(())>"Close"</button>
                </div>
            </div>
            {move || share_state.get().map(|m| view! { <p class="notice info" role="status" data-testid="share-status">{m}</p> })}
            {move || refreshing.get().then(|| {
                let (bytes, size) = progress.with(|rows| rows.iter().fold((0.0, 0.0), |a, r| r.with(|f| (a.0 + f.bytes, a.1 + f.size))));
                let pct = if size > 0.0 { (bytes / size * 100.0).min(100.0) } else { 0.0 };
                view! {
                    <div class="notice info refreshing" role="status" data-testid="range-progress">
                        <span>{format!("Analysing the selected range… {pct:.0}%")}</span>
                        <progress max="100" value=pct></progress>
                        <button type="button" class="button quiet" on:click=move |_| on_cancel.run(())>"Cancel"</button>
                    </div>
                }
            })}
            {loaded.from_link.then(|| view! {
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
                    <ul>{report.errors.iter().map(|e| view! { <li><code>{crate::web::state::file_message(e)}</code></li> }).collect_view()}</ul>
                </div>
            })}
            {(!report.ranks.is_empty()).then(|| view! {
                <JobSection rows=report.ranks.clone() job=report.job.clone() csv={
                    let report = report.clone();
                    Callback::new(move |()| crate::export::csv::ranks(&report))
                } />
            })}
            // One trace can be compared too: with another run's files, added as B.
            {(traces > 1 || !loaded.from_link).then(|| view! {
                <nav class="tabs" aria-label="Trace">
                    {(traces > 1).then(|| view! { <TracePicker traces=report.clone() selected=selected on_pick=pick /> })}
                    <button type="button" class="button compare-open" data-testid="compare-open"
                        aria-pressed=move || compare.with(Option::is_some).to_string()
                        on:click={
                            let report = report.clone();
                            move |_| compare.update(|c| *c = match c {
                                Some(_) => None,
                                None => Some(CompareSets::default_for(&report.traces)),
                            })
                        }>{if traces > 1 { "Compare A vs B…" } else { "Compare with another run…" }}</button>
                </nav>
            })}
            {compare_view}
            {trace_view}
        </div>
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

/// Up to this many traces get a tab each; more are picked from a list.
const MAX_TABS: usize = 12;

/// Which trace's sections are shown: tabs for a few traces, a list for many.
#[component]
fn TracePicker(traces: Arc<Report>, selected: RwSignal<usize>, on_pick: Callback<usize>) -> impl IntoView {
    let traces = &traces.traces;
    if traces.len() <= MAX_TABS {
        return traces
            .iter()
            .enumerate()
            .map(|(i, t)| {
                view! {
                    <button type="button" class="tab" class:active=move || selected.get() == i
                        aria-pressed=move || (selected.get() == i).to_string()
                        on:click=move |_| on_pick.run(i)>
                        {rank_label(t)}
                    </button>
                }
            })
            .collect_view()
            .into_any();
    }
    let options = traces
        .iter()
        .enumerate()
        .map(|(i, t)| view! { <option value=i.to_string() selected=selected.get_untracked() == i>{rank_label(t)}</option> })
        .collect_view();
    view! {
        <label class="trace-pick">{format!("Trace ({} in all): ", traces.len())}
            <select data-testid="trace-select" on:change:target=move |ev| {
                if let Ok(i) = ev.target().value().parse::<usize>() {
                    on_pick.run(i);
                }
            }>{options}</select>
        </label>
    }
    .into_any()
}

/// One trace's sections.
#[component]
fn TraceView(
    trace: TraceRef,
    bucket_filter: RwSignal<Option<BucketId>>,
    kernels: RwSignal<TableState>,
    ops: RwSignal<TableState>,
    buckets_open: RwSignal<Vec<BucketId>>,
    /// The user's peaks and model size, over the efficiency section and the tables' columns.
    figures: RwSignal<Figures>,
    on_range: Option<Callback<RangeRequest>>,
    on_rules: Option<Callback<String>>,
    /// The bucket rules the report was made with.
    rules: String,
) -> impl IntoView {
    let stem = crate::export::csv::safe_stem(&crate::share_link::stem(&trace.file));
    // Written when a CSV button is clicked, not before the report is drawn.
    let csv = |which: &'static str| {
        let trace = trace.clone();
        Callback::new(move |()| crate::export::csv::table(&trace, which).unwrap_or_default())
    };
    let name = |which: &str| format!("{stem}.{which}.csv");
    // The work figures of the top tables' rows, re-measured when the user's figures change.
    let efficiency = trace.efficiency.clone().filter(|e| !e.coverage.known_us.is_empty());
    let work = StoredValue::new(efficiency.clone());
    let shown = Memo::new(move |_| work.with_value(|e| e.as_ref().map(|e| measured(e, &figures.get()))));
    // Memos, so the tables' sorting reads the rows without copying them per comparison.
    let kernel_work = Memo::new(move |_| shown.with(|e| e.as_ref().map(|e| e.kernels.clone()).unwrap_or_default()));
    let op_work = Memo::new(move |_| shown.with(|e| e.as_ref().map(|e| e.ops.clone()).unwrap_or_default()));
    // Errors stop reading; past the row limit, events are counted but not analysed.
    let incomplete: Vec<_> = trace
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error || d.id == crate::analysis::diagnostics::DiagnosticId::RowLimit)
        .cloned()
        .collect();
    view! {
        {incomplete.into_iter().map(|d| view! {
            <div class="notice warning" data-testid="incomplete" role="alert">
                <strong>"The report covers only part of this file. "</strong>{d.message}
            </div>
        }).collect_view()}
        {(!trace.has_gpu).then(|| view! {
            <div class="notice info" data-testid="no-gpu">
                <strong>"No GPU activity in this trace. "</strong>
                "It has no kernel, memcpy or memset rows (a CPU-only run, or the profiler ran without "
                <code>"ProfilerActivity.CUDA"</code>"), so there is no GPU time to break down."
            </div>
        })}
        <Summary trace=trace.clone() />
        {trace.timeline.clone().map(|tl| view! { <TimelineSection timeline=tl window=trace.window on_range=on_range /> })}
        {trace.window.filter(|_| trace.timeline.is_none()).map(|w| {
            let (from, to) = w.after_first_row_us();
            view! {
                <p class="notice info" data-testid="range-note">{format!(
                    "This report covers {} – {} after the first GPU row only (a range of the trace).",
                    format::us(from), format::us(to))}</p>
            }
        })}
        <BucketSection buckets=trace.buckets.clone() gpu=trace.gpu.clone() filter=bucket_filter open=buckets_open
            csv_name=name("buckets") csv=csv("buckets") />
        <AttentionSection attention=trace.attention.clone() />
        <TopTable kind=TopKind::Kernels rows=trace.top_kernels.clone() work=Signal::from(kernel_work) filter=bucket_filter state=kernels
            csv_name=name("kernels") csv=csv("kernels") />
        <TopTable kind=TopKind::Ops rows=trace.top_ops.clone() work=Signal::from(op_work) filter=bucket_filter state=ops
            csv_name=name("ops") csv=csv("ops") />
        {efficiency.map(|e| view! { <EfficiencySection efficiency=e given=figures /> })}
        <StepTable steps=trace.steps.clone() csv_name=name("steps") csv=csv("steps") />
        {(trace.idle.gaps > 0).then(|| view! { <IdleSection idle=trace.idle.clone() gpu_idle_us=trace.gpu.idle_us /> })}
        {(!trace.layers.is_empty()).then(|| view! { <LayerSection layers=trace.layers.clone() /> })}
        {trace.has_gpu.then(|| view! { <MemorySection memory=trace.memory.clone() /> })}
        <HintCards hints=trace.hints.clone() />
        {trace.has_gpu.then(|| view! { <RulesSection trace=trace.clone() applied=rules on_apply=on_rules /> })}
        <Diagnostics diagnostics=trace.diagnostics.clone() />
    }
}
