//! Which trace is shown (tabs or a list, and the button that opens the comparison) and that
//! trace's sections.

use crate::analysis::passes::diagnostics::DiagnosticId;
use crate::report::{CriticalPath, Report, Severity};
use crate::web::format;
use crate::web::state::{Page, ViewSignals};
use crate::web::view_state::CompareSets;
use crate::web::views::attention::AttentionSection;
use crate::web::views::buckets::BucketSection;
use crate::web::views::critical_path::CriticalPathSection;
use crate::web::views::efficiency::{measured, EfficiencySection};
use crate::web::views::hints::{Diagnostics, HintCards};
use crate::web::views::rules::RulesSection;
use crate::web::views::summary::Summary;
use crate::web::views::tables::{StepTable, TopKind, TopTable};
use crate::web::views::timeline::TimelineSection;
use crate::web::views::why::{IdleSection, LayerSection, MemorySection};
use crate::web::views::widgets::{rank_label, TraceRef};
use leptos::prelude::*;
use std::sync::Arc;

/// Up to this many traces get a tab each; more are picked from a list.
const MAX_TABS: usize = 12;

/// The trace tabs (for several traces) and the button that opens or closes the comparison.
#[component]
pub fn TraceNav(report: Arc<Report>, view: ViewSignals) -> impl IntoView {
    let (traces, compare) = (report.traces.len(), view.compare);
    let toggle = {
        let report = report.clone();
        move |_| {
            compare.update(|c| {
                *c = match c {
                    Some(_) => None,
                    None => Some(CompareSets::default_for(&report.traces)),
                }
            })
        }
    };
    view! {
        <nav class="tabs" aria-label="Trace">
            {(traces > 1).then(|| view! { <TracePicker traces=report.clone() view=view /> })}
            <button type="button" class="button compare-open" data-testid="compare-open"
                aria-pressed=move || compare.with(Option::is_some).to_string()
                on:click=toggle>{if traces > 1 { "Compare A vs B…" } else { "Compare with another run…" }}</button>
        </nav>
    }
}

/// Which trace's sections are shown: tabs for a few traces, a list for many.
#[component]
fn TracePicker(traces: Arc<Report>, view: ViewSignals) -> impl IntoView {
    let traces = &traces.traces;
    let selected = view.selected;
    if traces.len() <= MAX_TABS {
        return traces
            .iter()
            .enumerate()
            .map(|(i, t)| {
                view! {
                    <button type="button" class="tab" class:active=move || selected.get() == i
                        aria-pressed=move || (selected.get() == i).to_string()
                        on:click=move |_| view.pick(i)>
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
                    view.pick(i);
                }
            }>{options}</select>
        </label>
    }
    .into_any()
}

/// One trace's sections. `page`: to analyse the trace again (a time range, new rules); None
/// when there is no trace to read (a share link, several files). `rules`: the bucket rules
/// the report was made with.
#[component]
pub fn TraceView(trace: TraceRef, view: ViewSignals, page: Option<Page>, rules: String) -> impl IntoView {
    let on_range = page.map(|p| Callback::new(move |want| p.select_range(want)));
    let on_rules = page.map(|p| Callback::new(move |rules| p.apply_rules(rules)));
    let on_what_if = page.map(|p| Callback::new(move |what_if| p.apply_what_if(what_if)));
    let stem = crate::export::csv::safe_stem(&crate::share_link::stem(&trace.file));
    // Written when a CSV button is clicked, not before the report is drawn.
    let csv = |which: &'static str| {
        let trace = trace.clone();
        Callback::new(move |()| crate::export::csv::table(&trace, which).unwrap_or_default())
    };
    let name = |which: &str| format!("{stem}.{which}.csv");
    let figures = view.figures;
    // The work figures of the top tables' rows, re-measured when the user's figures change.
    let efficiency = trace.efficiency.clone().filter(|e| !e.coverage.known_us.is_empty());
    let work = StoredValue::new(efficiency.clone());
    let shown = Memo::new(move |_| work.with_value(|e| e.as_ref().map(|e| measured(e, &figures.get()))));
    // Memos, so the tables' sorting reads the rows without copying them per comparison.
    let kernel_work = Memo::new(move |_| shown.with(|e| e.as_ref().map(|e| e.kernels.clone()).unwrap_or_default()));
    let op_work = Memo::new(move |_| shown.with(|e| e.as_ref().map(|e| e.ops.clone()).unwrap_or_default()));
    view! {
        <TraceNotices trace=trace.clone() />
        <Summary trace=trace.clone() />
        {trace.timeline.clone().map(|tl| view! { <TimelineSection timeline=tl window=trace.window path=trace.critical_path.clone() on_range=on_range /> })}
        {trace.window.filter(|_| trace.timeline.is_none()).map(|w| {
            let (from, to) = w.after_first_row_us();
            view! {
                <p class="notice info" data-testid="range-note">{format!(
                    "This report covers {} – {} after the first GPU row only (a range of the trace).",
                    format::us(from), format::us(to))}</p>
            }
        })}
        <BucketSection buckets=trace.buckets.clone() gpu=trace.gpu.clone() evidence=trace.bucket_evidence filter=view.bucket open=view.buckets_open
            csv_name=name("buckets") csv=csv("buckets") />
        <AttentionSection attention=trace.attention.clone() />
        <TopTable kind=TopKind::Kernels rows=trace.top_kernels.clone() work=Signal::from(kernel_work) filter=view.bucket state=view.kernels
            csv_name=name("kernels") csv=csv("kernels") />
        <TopTable kind=TopKind::Ops rows=trace.top_ops.clone() work=Signal::from(op_work) filter=view.bucket state=view.ops
            csv_name=name("ops") csv=csv("ops") />
        {efficiency.map(|e| view! { <EfficiencySection efficiency=e given=figures /> })}
        <StepTable steps=trace.steps.clone() csv_name=name("steps") csv=csv("steps") />
        {trace.critical_path.clone().filter(CriticalPath::has_steps).map(|path| view! { <CriticalPathSection path=path on_what_if=on_what_if /> })}
        {(trace.idle.gaps > 0).then(|| view! { <IdleSection idle=trace.idle.clone() gpu_idle_us=trace.gpu.idle_us /> })}
        {(!trace.layers.is_empty()).then(|| view! { <LayerSection layers=trace.layers.clone() /> })}
        {trace.has_gpu.then(|| view! { <MemorySection memory=trace.memory.clone() /> })}
        <HintCards hints=trace.hints.clone() />
        {trace.has_gpu.then(|| view! { <RulesSection trace=trace.clone() applied=rules on_apply=on_rules /> })}
        <Diagnostics diagnostics=trace.diagnostics.clone() />
    }
}

/// A trace read in part (errors stop reading; past the row limit, events are counted but not
/// analysed), or one with no GPU rows.
#[component]
fn TraceNotices(trace: TraceRef) -> impl IntoView {
    let incomplete: Vec<_> = trace
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error || d.id == DiagnosticId::RowLimit)
        .cloned()
        .collect();
    view! {
        {incomplete.into_iter().map(|d| view! {
            <div class="notice warning" data-testid="incomplete" role="alert">
                <strong>"The report covers only part of this file. "</strong>{d.message}
            </div>
        }).collect_view()}
        {(!trace.has_gpu).then(|| no_gpu_notice(&trace))}
    }
}

/// Why a trace has no GPU rows: lost by the profiler when the host launched kernels (the
/// `gpu_activity_lost` diagnostic, its count the launch calls), else a CPU-only run.
fn no_gpu_notice(trace: &TraceRef) -> AnyView {
    let lost = trace.diagnostics.iter().find(|d| d.id == DiagnosticId::GpuActivityLost);
    match lost {
        Some(d) => view! {
            <div class="notice warning" data-testid="gpu-lost" role="alert">
                <strong>"The profiler lost this trace's GPU activity. "</strong>
                {format!(
                    "The host made {} kernel launch calls ({:.1} ms of CPU), but the trace has no kernel, memcpy or \
                     memset rows: the GPU ran, and its rows are missing, so there is no GPU time to break down \
                     (this is not a CPU-only run). Check that the profiler had ",
                    d.count,
                    trace.launch.launch_call_us / 1e3
                )}
                <code>"ProfilerActivity.CUDA"</code>
                " on, that its activity buffers did not overflow (a shorter window: the profiler's schedule), and \
                 that the trace was written after the profiler stopped; then profile again."
            </div>
        }
        .into_any(),
        None => view! {
            <div class="notice info" data-testid="no-gpu">
                <strong>"No GPU activity in this trace. "</strong>
                "It has no kernel, memcpy or memset rows (a CPU-only run, or the profiler ran without "
                <code>"ProfilerActivity.CUDA"</code>"), so there is no GPU time to break down."
            </div>
        }
        .into_any(),
    }
}
