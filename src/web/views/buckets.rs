//! Time by bucket: sorted horizontal bars drawn as SVG, and the same numbers as a table whose
//! rows unfold to say why (the rules that matched, the largest kernels). Clicking a bucket
//! (bar or row) filters the top tables to it.

use super::widgets::{bucket_class, csv_button, on_details_toggle, swatch};
use crate::analysis::rules::taxonomy::Bucket as BucketId;
use crate::report::{Bucket, BucketEvidence, GpuTime};
use crate::web::format;
use leptos::prelude::*;

const ROW_H: f64 = 30.0;
const LABEL_W: f64 = 230.0;
const BAR_W: f64 = 420.0;
const VALUE_W: f64 = 170.0;

/// Shows only `id`'s rows in the top tables, or all again when it is the filter already.
fn toggle(filter: RwSignal<Option<BucketId>>, id: BucketId) {
    filter.update(|f| *f = if *f == Some(id) { None } else { Some(id) });
}

#[component]
pub fn BucketSection(
    buckets: Vec<Bucket>,
    gpu: GpuTime,
    evidence: BucketEvidence,
    filter: RwSignal<Option<BucketId>>,
    open: RwSignal<Vec<BucketId>>,
    csv_name: String,
    csv: Callback<(), String>,
) -> impl IntoView {
    let mut buckets: Vec<Bucket> = buckets.into_iter().filter(|b| b.time_us > 0.0 || b.count > 0).collect();
    buckets.sort_by(|a, b| b.time_us.total_cmp(&a.time_us));
    let max = buckets.iter().map(|b| b.time_us).fold(0.0, f64::max);
    let bars = bucket_bars(&buckets, max, filter);
    let rows = buckets.into_iter().map(|b| view! { <BucketRow bucket=b filter=filter open=open /> }).collect_view();
    view! {
        <section class="panel" aria-labelledby="buckets-h">
            <h2 id="buckets-h">"GPU time by category" {csv_button(csv_name, move || csv.run(()))}</h2>
            <p class="muted">
                {format!("Summed kernel time {} (overlapping streams count twice); wall-clock busy {}. ",
                    format::us(gpu.kernel_time_us), format::us(gpu.busy_us))}
                "Click a category to filter the kernel table."
            </p>
            {(evidence.total_us() > 0.0).then(|| view! {
                <p class="muted" data-testid="bucket-evidence">{format!("Categories decided by {}.", evidence.line())}</p>
            })}
            {(max == 0.0).then(|| view! { <p class="empty">"No GPU time to break down in this trace."</p> })}
            {bars}
            <table class="data" data-testid="bucket-table">
                <thead><tr>
                    <th scope="col">"Category"</th><th scope="col" class="num">"Time"</th>
                    <th scope="col" class="num">"Share"</th><th scope="col" class="num">"Rows"</th>
                    <th scope="col">"Why (rule, matches, largest kernels)"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </section>
    }
}

/// The bars, longest first (`max`: the longest bucket's time).
fn bucket_bars(buckets: &[Bucket], max: f64, filter: RwSignal<Option<BucketId>>) -> impl IntoView {
    let height = ROW_H * buckets.len() as f64 + 4.0;
    let bars = buckets.iter().enumerate().map(|(i, b)| {
        let y = i as f64 * ROW_H + 2.0;
        let w = if max > 0.0 { (b.time_us / max * BAR_W).max(1.0) } else { 0.0 };
        let id = b.id;
        let active = move || filter.get() == Some(id);
        let on_key = { move |ev: leptos::ev::KeyboardEvent| {
            if ev.key() == "Enter" || ev.key() == " " { ev.prevent_default(); toggle(filter, id); }
        }};
        view! {
            <g class=format!("bar {}", bucket_class(b.id)) class:active=active
               role="button" tabindex="0" aria-label=format!("{}: {}, {}. Show its kernels", b.name, format::us(b.time_us), format::pct(b.pct))
               on:click=move |_| toggle(filter, id) on:keydown=on_key>
                <rect class="hit" x="0" y=y width=LABEL_W + BAR_W + VALUE_W height=ROW_H - 2.0 rx="3"></rect>
                <text class="label" x=LABEL_W - 10.0 y=y + ROW_H / 2.0 + 1.0>{b.name.clone()}</text>
                <rect class="fill" x=LABEL_W y=y + 5.0 width=w height=ROW_H - 12.0 rx="2"></rect>
                <text class="value" x=LABEL_W + w + 8.0 y=y + ROW_H / 2.0 + 1.0>
                    {format!("{} · {}", format::pct(b.pct), format::us(b.time_us))}
                </text>
            </g>
        }
    }).collect_view();
    view! {
        <svg class="bars" class:hidden={max == 0.0} viewBox=format!("0 0 {} {}", LABEL_W + BAR_W + VALUE_W, height)
             role="group" aria-label="GPU time by category">
            {bars}
        </svg>
    }
}

/// One bucket's row; its "why" unfolds (kept in `open`, so a share link restores it).
#[component]
fn BucketRow(bucket: Bucket, filter: RwSignal<Option<BucketId>>, open: RwSignal<Vec<BucketId>>) -> impl IntoView {
    let b = bucket;
    let id = b.id;
    let active = move || filter.get() == Some(id);
    // The rule behind most of this category's time; the rest unfold.
    let summary = match b.matched.len() {
        0 => b.rule.clone(),
        1 => b.matched[0].rule.clone(),
        n => format!("{} (+{} more)", b.matched[0].rule, n - 1),
    };
    let is_open = move || open.with(|o| o.contains(&id));
    // What unfolds is built when it is opened: most rows stay folded, and the report appears
    // sooner without them.
    let unfolded = {
        let b = b.clone();
        move || is_open().then(|| why(&b))
    };
    let on_toggle = on_details_toggle(is_open, move |now| {
        open.update(|o| {
            o.retain(|&b| b != id);
            if now {
                o.push(id);
            }
        })
    });
    view! {
        <tr class:active=active>
            <th scope="row">
                <button type="button" class="linklike" aria-pressed=move || active().to_string()
                    on:click=move |_| toggle(filter, id)>
                    {swatch(bucket_class(b.id))}{b.name.clone()}
                </button>
            </th>
            <td class="num">{format::us(b.time_us)}</td>
            <td class="num">{format::pct(b.pct)}</td>
            <td class="num">{format::count(b.count)}</td>
            <td class="why">
                <details prop:open=is_open on:toggle=on_toggle>
                    <summary>{summary}</summary>
                    {unfolded}
                </details>
            </td>
        </tr>
    }
}

/// A bucket's unfolded "why": the rules that matched, its largest kernels, all its rules.
fn why(b: &Bucket) -> impl IntoView {
    let matched = (!b.matched.is_empty()).then(|| {
        let items = b.matched.iter().map(|m| view! {
            <li>{m.rule.clone()}" "<span class="num muted">{format!("{} · {}×", format::us(m.time_us), format::count(m.count))}</span></li>
        }).collect_view();
        view! { <p class="sub">"Rules that matched:"</p><ul>{items}</ul> }
    });
    let top = (!b.top_names.is_empty()).then(|| {
        let items = b.top_names.iter().take(5).map(|n| view! {
            <li><span class="kname" title=n.name.clone()>{n.short.clone()}</span>" "<span class="num muted">{format::us(n.time_us)}</span></li>
        }).collect_view();
        view! { <p class="sub">"Largest kernels:"</p><ul>{items}</ul> }
    });
    view! {
        {matched}
        {top}
        <p class="sub">"Every rule of this category:"</p><p class="muted">{b.rule.clone()}</p>
    }
}
