//! The top kernels and top ops tables (sortable, searchable, filtered by bucket) and the
//! steps table.

use super::widgets::{bucket_class, csv_button, on_details_toggle, swatch};
use crate::analysis::rules::taxonomy::Bucket as BucketId;
use crate::report::{Bound, KernelWork, Step, TopRow};
use crate::web::view_state::{SortCol as Col, TableState};
use crate::web::{export, format};
use leptos::prelude::*;

#[derive(Clone, Copy, PartialEq)]
pub enum TopKind {
    Kernels,
    Ops,
}

/// A row's work figures, by its name (kernels' full names, ops' names).
fn work_of<'a>(work: &'a [KernelWork], name: &str) -> Option<&'a KernelWork> {
    work.iter().find(|w| w.name == name)
}

/// Top kernels / top ops: sortable by any numeric column, searchable over the full name,
/// filtered by the bucket chosen in the chart. Sort, search and unfolded rows live in
/// `state`, so a share link can restore them. `work` gives the rows' efficiency figures where
/// their work is known.
#[component]
pub fn TopTable(
    kind: TopKind,
    rows: Vec<TopRow>,
    work: Signal<Vec<KernelWork>>,
    filter: RwSignal<Option<BucketId>>,
    state: RwSignal<TableState>,
    csv_name: String,
    csv: Callback<(), String>,
) -> impl IntoView {
    let sort = Memo::new(move |_| state.with(|s| (s.sort, s.desc)));
    let query = Memo::new(move |_| state.with(|s| s.query.clone()));
    let total = rows.len();
    let rows = StoredValue::new(rows);
    let (title, testid, name_label, op_label) = match kind {
        TopKind::Kernels => ("Top kernels", "top-kernels", "Kernel", "Launched by"),
        TopKind::Ops => ("Top ops", "top-ops", "Op", "Parent op"),
    };
    let visible = move || {
        let mut v = rows.with_value(|r| matching(r, filter.get(), &query.get().to_lowercase()));
        sort_rows(&mut v, sort.get(), work);
        v
    };
    let header = move |col: Col, label: &'static str, numeric: bool| {
        view! { <SortHeader col=col label=label numeric=numeric state=state sort=sort /> }
    };
    let shown = move || visible().len();
    view! {
        <section class="panel" aria-labelledby=format!("{testid}-h")>
            <h2 id=format!("{testid}-h")>{title}</h2>
            <div class="table-tools">
                <input type="search" class="search" placeholder=format!("Search {} names…", name_label.to_lowercase())
                    aria-label=format!("Search {}", title.to_lowercase())
                    prop:value=move || query.get()
                    on:input:target=move |ev| state.update(|s| s.query = ev.target().value().chars().take(crate::share_link::MAX_QUERY).collect()) />
                {move || filter.get().map(|b| view! {
                    <span class="chip">
                        {swatch(bucket_class(b))}
                        {format!("category: {}", b.name())}
                        <button type="button" class="chip-x" aria-label="Clear the category filter" on:click=move |_| filter.set(None)>"×"</button>
                    </span>
                })}
                <span class="muted count">{move || format!("{} of {}", shown(), total)}</span>
                {csv_button(csv_name, move || csv.run(()))}
            </div>
            <div class="scroll">
            <table class="data top" data-testid=testid>
                <thead><tr>
                    <th scope="col" class="num">"#"</th>
                    {header(Col::Name, name_label, false)}
                    {header(Col::Time, "Time", true)}
                    <th scope="col" class="num">"Share"</th>
                    {header(Col::Count, "Count", true)}
                    {header(Col::Mean, "Mean", true)}
                    {header(Col::Max, "Max", true)}
                    {header(Col::Tflops, "TFLOP/s", true)}
                    {header(Col::Roof, "% of roof", true)}
                    <th scope="col">"Category"</th>
                    <th scope="col">{op_label}</th>
                </tr></thead>
                <tbody>
                    <For each=visible key=|(i, _)| *i let:item>
                        {top_row(item.0, item.1, kind, state, work)}
                    </For>
                </tbody>
            </table>
            </div>
            {move || (shown() == 0).then(|| view! { <p class="empty">{if total == 0 { "No rows in this trace." } else { "No rows match." }}</p> })}
        </section>
    }
}

/// The rows in `filter`'s bucket whose name or op holds `query` (lower case), with their
/// rank in the report.
fn matching(rows: &[TopRow], filter: Option<BucketId>, query: &str) -> Vec<(usize, TopRow)> {
    rows.iter()
        .enumerate()
        .filter(|(_, r)| filter.is_none_or(|b| r.bucket == b))
        .filter(|(_, r)| {
            query.is_empty()
                || r.name.to_lowercase().contains(query)
                || r.op.as_ref().is_some_and(|o| o.to_lowercase().contains(query))
        })
        .map(|(i, r)| (i, r.clone()))
        .collect()
}

/// Sorts by `col` (descending when `desc`); rows without work figures sort below those with.
fn sort_rows(v: &mut [(usize, TopRow)], (col, desc): (Col, bool), work: Signal<Vec<KernelWork>>) {
    let figure =
        |r: &TopRow, f: fn(&KernelWork) -> Option<f64>| work.with(|w| work_of(w, &r.name).and_then(f)).unwrap_or(-1.0);
    v.sort_by(|(_, a), (_, b)| {
        let o = match col {
            Col::Tflops => figure(a, |w| Some(w.tflops_per_s)).total_cmp(&figure(b, |w| Some(w.tflops_per_s))),
            Col::Roof => figure(a, KernelWork::roof_pct).total_cmp(&figure(b, KernelWork::roof_pct)),
            Col::Name => a.name.cmp(&b.name),
            Col::Time => a.time_us.total_cmp(&b.time_us),
            Col::Count => a.count.cmp(&b.count),
            Col::Mean => a.mean_us.total_cmp(&b.mean_us),
            Col::Max => a.max_us.total_cmp(&b.max_us),
        };
        if desc {
            o.reverse()
        } else {
            o
        }
    });
}

/// A column heading that sorts by its column (again: the other way).
#[component]
fn SortHeader(
    col: Col,
    label: &'static str,
    numeric: bool,
    state: RwSignal<TableState>,
    sort: Memo<(Col, bool)>,
) -> impl IntoView {
    let aria = move || match sort.get() {
        (c, true) if c == col => "descending",
        (c, false) if c == col => "ascending",
        _ => "none",
    };
    view! {
        <th scope="col" class:num=numeric aria-sort=aria>
            <button type="button" class="sort" on:click=move |_| state.update(|s| {
                if s.sort == col { s.desc = !s.desc } else { s.sort = col; s.desc = col != Col::Name }
            })>
                {label}
                <span class="arrow" aria-hidden="true">{move || match aria() { "descending" => "▼", "ascending" => "▲", _ => "" }}</span>
            </button>
        </th>
    }
}

/// The TFLOP/s and % of roof cells: "–" where the row's work is not known (no shapes, no model,
/// beyond the rows the report measured).
fn work_cells(work: Signal<Vec<KernelWork>>, name: String) -> impl IntoView {
    let figures = move || {
        work.with(|w| {
            let Some(k) = work_of(w, &name) else { return ("–".to_string(), "–".to_string(), String::new()) };
            let bound = match k.bound {
                Some(Bound::Compute) => "compute-bound",
                Some(Bound::Memory) => "memory-bound",
                None => "no peaks to measure against",
            };
            let roof = k
                .roof_pct()
                .map_or("–".into(), |r| format!("{}{}", if k.above_roof() { "▲ " } else { "" }, format::pct(r)));
            let title = format!(
                "{bound}; {:.2} TB/s; {} via {}{}",
                k.tbps,
                k.precision.map_or("?", |p| p.id()),
                k.source.id(),
                if k.above_roof() { "; ▲ above a roof" } else { "" }
            );
            (format!("{:.1}", k.tflops_per_s), roof, title)
        })
    };
    let f = Memo::new(move |_| figures());
    view! {
        <td class="num">{move || f.get().0}</td>
        <td class="num" title=move || f.get().2>{move || f.get().1}</td>
    }
}

fn top_row(
    rank: usize,
    r: TopRow,
    kind: TopKind,
    state: RwSignal<TableState>,
    work: Signal<Vec<KernelWork>>,
) -> impl IntoView {
    let index = rank as u32;
    let open = move || state.with(|s| s.expanded.contains(&index));
    let on_toggle = on_details_toggle(open, move |now| {
        state.update(|s| {
            s.expanded.retain(|&i| i != index);
            if now {
                s.expanded.push(index);
                s.expanded.sort_unstable();
            }
        })
    });
    let short = if kind == TopKind::Kernels && !r.short.is_empty() { r.short.clone() } else { r.name.clone() };
    let long = short != r.name;
    let full = r.name.clone();
    view! {
        <tr>
            <td class="num muted">{rank + 1}</td>
            <td class="name">
                {if long {
                    view! {
                        <details prop:open=open on:toggle=on_toggle>
                            <summary title=r.name.clone()><span class="kname">{short}</span></summary>
                            <code class="full">{r.name.clone()}</code>
                            <button type="button" class="button tiny" on:click=move |_| export::copy_text(&full)>"Copy name"</button>
                        </details>
                    }.into_any()
                } else {
                    view! { <span class="kname" title=r.name.clone()>{short}</span> }.into_any()
                }}
            </td>
            <td class="num">{format::us(r.time_us)}</td>
            <td class="num">{format::pct(r.pct)}</td>
            <td class="num">{format::count(r.count)}</td>
            <td class="num">{format::us(r.mean_us)}</td>
            <td class="num">{format::us(r.max_us)}</td>
            {work_cells(work, r.name.clone())}
            <td>{swatch(bucket_class(r.bucket))}{r.bucket.name()}</td>
            <td class="op">{r.op.clone().unwrap_or_default()}</td>
        </tr>
    }
}

/// Steps shown before "Show all": a profile of hundreds of steps would otherwise draw
/// thousands of cells before the report appears (the CSV has every step).
const STEPS_SHOWN: usize = 20;

/// One step's row.
fn step_row(s: &Step) -> impl IntoView {
    let idle = if s.span_us > 0.0 { format::pct(100.0 * s.idle_us / s.span_us) } else { String::new() };
    view! {
        <tr>
            <th scope="row">{s.name.clone()}</th>
            <td class="num">{format::us(s.cpu_us)}</td>
            <td class="num">{format::us(s.span_us)}</td>
            <td class="num">{format::us(s.busy_us)}</td>
            <td class="num">{format::us(s.idle_us)}</td>
            <td class="num">{idle}</td>
            <td class="num">{format::us(s.kernel_time_us)}</td>
            <td class="num">{format::us(s.comm_us)}</td>
            <td class="num">{format::us(s.exposed_comm_us)}</td>
            <td class="num">{format::count(s.kernel_count)}</td>
        </tr>
    }
}

/// Per ProfilerStep#N: the time metrics inside each step window; the first
/// [`STEPS_SHOWN`] steps until the user asks for all.
#[component]
pub fn StepTable(mut steps: Vec<Step>, csv_name: String, csv: Callback<(), String>) -> impl IntoView {
    let empty = steps.is_empty();
    let total = steps.len();
    let rows = steps.iter().take(STEPS_SHOWN).map(step_row).collect_view();
    let all = RwSignal::new(false);
    let rest = StoredValue::new(steps.split_off(total.min(STEPS_SHOWN)));
    let more = move || all.get().then(|| rest.with_value(|r| r.iter().map(step_row).collect_view()));
    let show_all = move || {
        (total > STEPS_SHOWN && !all.get()).then(|| {
            view! {
                <button type="button" class="button tiny" data-testid="steps-show-all" on:click=move |_| all.set(true)>
                    {format!("Show all {total} steps")}
                </button>
            }
        })
    };
    view! {
        <section class="panel" aria-labelledby="steps-h">
            <h2 id="steps-h">"Steps" {(!empty).then(|| csv_button(csv_name, move || csv.run(())))}</h2>
            {if empty {
                view! { <p class="empty">"No ProfilerStep#N spans in this trace (profile with "<code>"prof.step()"</code>" to get per-step numbers)."</p> }.into_any()
            } else {
                view! {
                    <div class="scroll">
                    <table class="data" data-testid="steps">
                        <thead><tr>
                            <th scope="col">"Step"</th><th scope="col" class="num">"CPU span"</th><th scope="col" class="num">"GPU span"</th>
                            <th scope="col" class="num">"Busy"</th><th scope="col" class="num">"Idle"</th><th scope="col" class="num">"Idle %"</th>
                            <th scope="col" class="num">"Kernel time"</th><th scope="col" class="num">"Comm"</th>
                            <th scope="col" class="num">"Exposed comm"</th><th scope="col" class="num">"Kernels"</th>
                        </tr></thead>
                        <tbody>{rows}{more}</tbody>
                    </table>
                    </div>
                    {show_all}
                }.into_any()
            }}
        </section>
    }
}
