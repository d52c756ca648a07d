//! The before/after comparison of two runs (or two sets of ranks): the diff's verdict and its
//! changes, and the picker of the two sides.

use super::widgets::{rank_label, FilePicker};
use crate::analysis::job::diff::{diff_refs, Change, Diff, Status};
use crate::report::Report;
use crate::web::format;
use crate::web::view_state::{CompareSets, Side};
use leptos::prelude::*;
use std::sync::Arc;
use web_sys::File;

fn change_cells(c: &Change) -> impl IntoView {
    let rel = match (c.rel_pct, c.status) {
        (Some(p), _) => format!("{p:+.1}%"),
        (None, Status::New) => "new".into(),
        _ => String::new(),
    };
    let class = if c.delta_us > 0.0 && c.status != Status::Same {
        "num worse"
    } else if c.delta_us < 0.0 && c.status != Status::Same {
        "num better"
    } else {
        "num"
    };
    view! {
        <td class="num">{format::us(c.a_us)}</td>
        <td class="num">{format::us(c.b_us)}</td>
        <td class=class>{format::us(c.delta_us)}</td>
        <td class=class>{rel}</td>
    }
}

fn diff_view(d: Diff) -> impl IntoView {
    let metrics = d
        .metrics
        .iter()
        .map(|m| view! { <tr><th scope="row">{m.metric.label()}</th>{change_cells(&m.change)}</tr> })
        .collect_view();
    let buckets = d
        .buckets
        .iter()
        .map(|b| view! { <tr><th scope="row">{b.bucket.name()}</th>{change_cells(&b.change)}</tr> })
        .collect_view();
    let names = |rows: &[crate::analysis::job::diff::NameChange], kernels: bool| {
        rows.iter()
            .take(40)
            .map(|r| {
                let status = match r.change.status {
                    Status::New => "new in B",
                    Status::Gone => "gone in B",
                    _ => "changed",
                };
                let short =
                    if kernels { crate::analysis::rules::kernel_name::short_display(&r.name) } else { r.name.clone() };
                view! {
                    <tr>
                        <td class="name"><span class="kname" title=r.name.clone()>{short}</span></td>
                        <td>{r.bucket.map(|b| b.name()).unwrap_or("")}</td>
                        <td>{status}</td>
                        {change_cells(&r.change)}
                    </tr>
                }
            })
            .collect_view()
    };
    let kernels = names(&d.kernels, true);
    let ops = names(&d.ops, false);
    let backend = if d.backend_a == d.backend_b {
        format!("Attention backend: {} (unchanged)", d.backend_a.label())
    } else {
        format!("Attention backend: {} in A, {} in B", d.backend_a.label(), d.backend_b.label())
    };
    let head = || view! { <th scope="col" class="num">"A"</th><th scope="col" class="num">"B"</th><th scope="col" class="num">"Difference"</th><th scope="col" class="num">"%"</th> };
    view! {
        <p class="verdict" data-testid="diff-verdict"><strong>{d.verdict.clone()}</strong></p>
        <p>{backend}</p>
        <div class="scroll"><table class="data" data-testid="diff-metrics">
            <caption>"Per rank (means over each side's traces)"</caption>
            <thead><tr><th scope="col">"Time"</th>{head()}</tr></thead><tbody>{metrics}</tbody>
        </table></div>
        <div class="scroll"><table class="data" data-testid="diff-buckets">
            <caption>"Buckets"</caption>
            <thead><tr><th scope="col">"Bucket"</th>{head()}</tr></thead><tbody>{buckets}</tbody>
        </table></div>
        <div class="scroll"><table class="data" data-testid="diff-kernels">
            <caption>{format!("Kernels: {} changed, new or gone; {} unchanged", d.kernels.len(), d.unchanged_kernels)}</caption>
            <thead><tr><th scope="col">"Kernel"</th><th scope="col">"Bucket"</th><th scope="col">"What"</th>{head()}</tr></thead><tbody>{kernels}</tbody>
        </table></div>
        <div class="scroll"><table class="data" data-testid="diff-ops">
            <caption>{format!("Ops: {} changed, new or gone; {} unchanged", d.ops.len(), d.unchanged_ops)}</caption>
            <thead><tr><th scope="col">"Op"</th><th scope="col">""</th><th scope="col">"What"</th>{head()}</tr></thead><tbody>{ops}</tbody>
        </table></div>
    }
}

/// Compare set A (before) with set B (after): each loaded trace is put in A, in B or in
/// neither; the sets live in the view state (so a share link reopens them).
#[component]
pub fn CompareSection(
    report: Arc<Report>,
    sets: RwSignal<Option<CompareSets>>,
    /// Opens another run's files as B (not for a share link: it has no full kernel lists).
    run_b: Option<Callback<Vec<File>>>,
) -> impl IntoView {
    let n = report.traces.len() as u32;
    let sides = {
        let report = report.clone();
        move || {
            sets.with(|s| {
                let Some(s) = s else { return String::new() };
                let describe = |set: &[u32]| match set {
                    [] => "nothing yet".to_string(),
                    [one] => report.traces.get(*one as usize).map(rank_label).unwrap_or_default(),
                    many => format!("{} traces (numbers are means per rank)", many.len()),
                };
                format!("A (before): {} · B (after): {}", describe(&s.a), describe(&s.b))
            })
        }
    };
    let body = {
        let report = report.clone();
        move || {
            sets.with(|s| {
                let pick = |set: &[u32]| set.iter().filter_map(|&i| report.traces.get(i as usize)).collect::<Vec<_>>();
                match s.as_ref().map(|s| (pick(&s.a), pick(&s.b))) {
                    Some((a, b)) if !a.is_empty() && !b.is_empty() => diff_view(diff_refs(&a, &b)).into_any(),
                    _ => view! { <p class="empty">"Put at least one trace in A and one in B."</p> }.into_any(),
                }
            })
        }
    };
    view! {
        <section class="panel" aria-labelledby="compare-h" data-testid="compare-table">
            <h2 id="compare-h">"Compare A (before) with B (after) "
                <button type="button" class="button tiny" on:click=move |_| sets.set(None)>"Close"</button></h2>
            <p class="muted">"Put each trace in A or B (press again to leave it out). "
                {(n > 2).then_some("With several traces on a side, each number is the mean per rank.")}</p>
            <SidePicker report=report.clone() sets=sets />
            <CompareTools report=report sets=sets run_b=run_b />
            <p data-testid="compare-sides"><strong>{sides}</strong></p>
            {body}
        </section>
    }
}

/// Each trace with its A and B buttons.
#[component]
fn SidePicker(report: Arc<Report>, sets: RwSignal<Option<CompareSets>>) -> impl IntoView {
    let side_button = move |i: u32, side: Side| {
        let pressed = move || sets.with(|s| s.as_ref().and_then(|s| s.side(i)) == Some(side));
        // Pressing the side a trace is on takes it out of the comparison.
        let assign = move |_| {
            sets.update(|s| {
                if let Some(s) = s {
                    let to = if s.side(i) == Some(side) { None } else { Some(side) };
                    s.assign(i, to);
                }
            })
        };
        view! {
            <button type="button" class=format!("side side-{}", side.label().to_lowercase())
                class:on=pressed aria-pressed=move || pressed().to_string()
                title=format!("Put this trace in {}", side.label())
                on:click=assign>{side.label()}</button>
        }
    };
    let chips = report
        .traces
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let i = i as u32;
            view! {
                <li class="assign" data-testid="assign" title=t.file.clone()>
                    {side_button(i, Side::A)}{side_button(i, Side::B)}
                    <span class="assign-name">{rank_label(t)}</span>
                </li>
            }
        })
        .collect_view();
    view! { <ul class="assign-list" data-testid="compare-sets">{chips}</ul> }
}

/// Another run's files as B, and the ways to fill both sides at once.
#[component]
fn CompareTools(
    report: Arc<Report>,
    sets: RwSignal<Option<CompareSets>>,
    run_b: Option<Callback<Vec<File>>>,
) -> impl IntoView {
    let n = report.traces.len() as u32;
    let by_run = CompareSets::by_run(&report.traces);
    let swap = move |_| {
        sets.update(|s| {
            if let Some(s) = s {
                std::mem::swap(&mut s.a, &mut s.b);
            }
        })
    };
    view! {
        <div class="table-tools">
            {run_b.map(|on_files| view! {
                <FilePicker on_files=on_files id="run-b-input" label="Add another run's files as B…" />
            })}
            <button type="button" class="button tiny" data-testid="compare-swap" on:click=swap>"Swap A and B"</button>
            {(n > 2).then(|| view! {
                <button type="button" class="button tiny" data-testid="compare-halves"
                    on:click=move |_| sets.set(Some(CompareSets::halves(n)))>"First half A, second half B"</button>
            })}
            {by_run.map(|r| view! {
                <button type="button" class="button tiny" data-testid="compare-by-run"
                    on:click=move |_| sets.set(Some(r.clone()))>"Each rank's first file A, second file B"</button>
            })}
        </div>
    }
}
