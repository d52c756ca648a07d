//! The GPU timeline: one strip per stream from the report's downsampled summary; busy time
//! stacked by bucket from the bottom, idle time by cause from the top, step boundaries as
//! lines. Hover says what ran in a bin; dragging (or picking a step) analyses that range
//! again, so every table below follows it.

use super::widgets::bucket_class;
use crate::analysis::idle::IdleCause;
use crate::analysis::taxonomy::Bucket;
use crate::report::{LaneBin, TimeWindow, Timeline};
use crate::web::format;
use leptos::prelude::*;
use std::fmt::Write;
use wasm_bindgen::JsCast;

const W: f64 = 1000.0;
const LANE_H: f64 = 26.0;
const LANE_GAP: f64 = 8.0;
/// A drag shorter than this (share of the width) is a click, not a range.
const MIN_DRAG: f64 = 0.004;

fn cause_class(c: IdleCause) -> &'static str {
    match c {
        IdleCause::Host => "tl-host",
        IdleCause::Kernel => "tl-kernel",
        IdleCause::Other => "tl-other",
    }
}

/// What the user asked the timeline for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RangeRequest {
    /// Analyse `[start, end)` on the trace's clock.
    Range(i64, i64),
    /// Back to the whole trace.
    Whole,
}

#[component]
pub fn TimelineSection(
    timeline: Timeline,
    window: Option<TimeWindow>,
    /// None when there is no trace to analyse again (a share link, several files).
    on_range: Option<Callback<RangeRequest>>,
) -> impl IntoView {
    let tl = std::sync::Arc::new(timeline);
    let span = (tl.end_ns - tl.start_ns).max(1) as f64;
    let origin = window.map(|w| w.origin_ns).unwrap_or(tl.start_ns);
    let lanes = tl.lanes.len();
    let height = lanes as f64 * (LANE_H + LANE_GAP);
    let nbins = tl.lanes.first().map(|l| l.bins.len()).unwrap_or(0).max(1);
    let bin_w = W / nbins as f64;
    let t0 = tl.start_ns;
    let at_ns = move |frac: f64| t0 + (frac * span).round() as i64;
    // Time in ms from the whole trace's first GPU row, as the CLI's --range takes it.
    let label = move |ns: i64| format::us((ns - origin) as f64 / 1000.0);

    // Paths: one per (lane, bucket) and (lane, cause), each a run of rectangles.
    let mut shapes: Vec<(String, String)> = Vec::new();
    for (k, lane) in tl.lanes.iter().enumerate() {
        let top = k as f64 * (LANE_H + LANE_GAP);
        let mut busy: Vec<(Bucket, String)> = Vec::new();
        let mut idle: Vec<(IdleCause, String)> = Vec::new();
        for (i, bin) in lane.bins.iter().enumerate() {
            let x = i as f64 * bin_w;
            let mut y = top + LANE_H;
            for b in Bucket::ALL {
                let Some(&ns) = bin.busy.get(&b) else { continue };
                let h = ns as f64 / tl.bin_ns as f64 * LANE_H;
                y -= h;
                rect(path_for(&mut busy, b), x, y, bin_w, h);
            }
            let mut y = top;
            for c in IdleCause::ALL {
                let h = bin.wait(c) as f64 / tl.bin_ns as f64 * LANE_H;
                if h > 0.0 {
                    rect(path_for(&mut idle, c), x, y, bin_w, h);
                    y += h;
                }
            }
        }
        shapes.extend(busy.into_iter().map(|(b, d)| (format!("tl-busy {}", bucket_class(b)), d)));
        shapes.extend(idle.into_iter().map(|(c, d)| (format!("tl-idle {}", cause_class(c)), d)));
    }
    // Every step start as one path: up to 240 of them, each a line element otherwise.
    let mut step_lines = String::new();
    for x in tl.steps.iter().map(|s| (s.start_ns - tl.start_ns) as f64 / span * W).filter(|x| (0.0..=W).contains(x)) {
        let _ = write!(step_lines, "M{x:.2} 0v{height}");
    }

    let hover = RwSignal::new(None::<(usize, usize)>);
    let drag = RwSignal::new(None::<(f64, f64)>);
    let frac_of = |ev: &web_sys::PointerEvent| -> Option<(f64, f64)> {
        let el: web_sys::Element = ev.current_target()?.dyn_into().ok()?;
        let r = el.get_bounding_client_rect();
        (r.width() > 0.0).then(|| {
            (
                ((ev.client_x() as f64 - r.left()) / r.width()).clamp(0.0, 1.0),
                ((ev.client_y() as f64 - r.top()) / r.height()).clamp(0.0, 1.0),
            )
        })
    };
    let interactive = on_range.is_some();
    let on_down = move |ev: web_sys::PointerEvent| {
        if !interactive || ev.button() != 0 {
            return;
        }
        if let Some((x, _)) = frac_of(&ev) {
            ev.prevent_default();
            if let Some(el) = ev.current_target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()) {
                let _ = el.set_pointer_capture(ev.pointer_id());
            }
            drag.set(Some((x, x)));
        }
    };
    let on_move = move |ev: web_sys::PointerEvent| {
        let Some((x, y)) = frac_of(&ev) else { return };
        if let Some((a, _)) = drag.get_untracked() {
            drag.set(Some((a, x)));
        }
        let lane = ((y * height) / (LANE_H + LANE_GAP)) as usize;
        hover.set((lane < lanes).then(|| (lane, ((x * nbins as f64) as usize).min(nbins - 1))));
    };
    let on_up = move |_ev: web_sys::PointerEvent| {
        let Some((a, b)) = drag.get_untracked() else { return };
        drag.set(None);
        let (a, b) = (a.min(b), a.max(b));
        if let (Some(cb), true) = (on_range, b - a >= MIN_DRAG) {
            cb.run(RangeRequest::Range(at_ns(a), at_ns(b)));
        }
    };

    let tip = {
        let tl = tl.clone();
        move || {
            let (lane, bin) = hover.get()?;
            let l = tl.lanes.get(lane)?;
            let b = l.bins.get(bin)?;
            let from = tl.start_ns + bin as i64 * tl.bin_ns;
            Some(view! {
                <div class="tl-tip" data-testid="timeline-tip" style:left=format!("{:.1}%", (bin as f64 + 0.5) / nbins as f64 * 100.0)>
                    <strong>{format!("{} – {}", label(from), label(from + tl.bin_ns))}</strong>
                    <span class="muted">{format!(" · device {} stream {}", l.device, l.stream)}</span>
                    {bin_lines(b, tl.bin_ns, &tl.names)}
                </div>
            })
        }
    };
    let selection = move || {
        drag.get().map(|(a, b)| {
            let (a, b) = (a.min(b), a.max(b));
            view! { <rect class="tl-selection" x=a * W y="0" width=((b - a) * W).max(1.0) height=height /> }
        })
    };
    let steps_menu = (interactive && !tl.steps.is_empty()).then(|| {
        let steps = tl.steps.clone();
        let options = steps
            .iter()
            .enumerate()
            .map(|(i, s)| view! { <option value=i.to_string()>{format!("{} ({})", s.name, format::us((s.end_ns - s.start_ns) as f64 / 1000.0))}</option> })
            .collect_view();
        view! {
            <label class="tl-steps">"Zoom to a step "
                <select data-testid="timeline-step" on:change:target=move |ev| {
                    let pick = ev.target().value().parse::<usize>().ok().and_then(|i| steps.get(i));
                    if let (Some(s), Some(cb)) = (pick, on_range) {
                        cb.run(RangeRequest::Range(s.start_ns, s.end_ns.max(s.start_ns + 1)));
                    }
                }>
                    <option value="" selected>"—"</option>
                    {options}
                </select>
            </label>
        }
    });
    let present: Vec<Bucket> = Bucket::ALL
        .into_iter()
        .filter(|b| tl.lanes.iter().any(|l| l.bins.iter().any(|x| x.busy.contains_key(b))))
        .collect();
    let lane_labels = tl
        .lanes
        .iter()
        .map(|l| {
            view! {
                <div class="tl-label" style:height=format!("{}px", LANE_H + LANE_GAP)>
                    <span>{format!("dev {} · stream {}", l.device, l.stream)}</span>
                    <span class="muted">{format!("busy {}", format::us(l.busy_us))}</span>
                </div>
            }
        })
        .collect_view();
    let ticks = (0..=4)
        .map(|i| {
            let f = i as f64 / 4.0;
            view! { <span class="tl-tick" style:left=format!("{}%", f * 100.0)>{label(at_ns(f))}</span> }
        })
        .collect_view();
    let whole = window.zip(on_range).map(|(_, cb)| {
        view! { <button type="button" class="button" data-testid="timeline-whole" on:click=move |_| cb.run(RangeRequest::Whole)>"Whole trace"</button> }
    });
    let heading_note = match window {
        Some(w) => {
            format!("Range {} – {}: every section below covers this range only.", label(w.start_ns), label(w.end_ns))
        }
        None => format!("{} of GPU time, {} per column.", label(tl.end_ns), format::us(tl.bin_ns as f64 / 1000.0)),
    };
    view! {
        <section class="panel" aria-labelledby="timeline-h" data-testid="timeline">
            <h2 id="timeline-h">"GPU timeline"</h2>
            <div class="tl-head">
                <p class="muted" data-testid="timeline-range">{heading_note}</p>
                {steps_menu}
                {whole}
            </div>
            <div class="tl-body">
                <div class="tl-labels">{lane_labels}</div>
                <div class="tl-plot">
                    <svg class="timeline-chart" class:interactive=interactive viewBox=format!("0 0 {W} {height}") preserveAspectRatio="none"
                        height=height role="img"
                        aria-label="GPU busy time by bucket and idle time by cause, per stream, over time"
                        on:pointerdown=on_down on:pointermove=on_move on:pointerup=on_up
                        on:pointerleave=move |_| hover.set(None)>
                        {(0..lanes).map(|k| view! { <rect class="tl-lane" x="0" y=k as f64 * (LANE_H + LANE_GAP) width=W height=LANE_H /> }).collect_view()}
                        {shapes.into_iter().map(|(class, d)| view! { <path class=class d=d /> }).collect_view()}
                        {(!step_lines.is_empty()).then(|| view! { <path class="tl-step" d=step_lines /> })}
                        {selection}
                    </svg>
                    {tip}
                    <div class="tl-axis">{ticks}</div>
                </div>
            </div>
            {(tl.hidden_steps > 0).then(|| view! {
                <p class="muted">{format!("{} steps: every {}th is marked and listed.", tl.steps.len() as u32 + tl.hidden_steps,
                    (tl.steps.len() as u32 + tl.hidden_steps).div_ceil(tl.steps.len().max(1) as u32))}</p>
            })}
            {(tl.hidden_lanes > 0).then(|| view! {
                <p class="muted">{format!("{} more streams ({} busy) not drawn: the {} busiest are.", tl.hidden_lanes, format::us(tl.hidden_busy_us), lanes)}</p>
            })}
            <p class="legend">
                {present.into_iter().map(|b| view! { <span class=format!("swatch {}", bucket_class(b)) aria-hidden="true"></span>{format!("{} ", b.name())} }).collect_view()}
                {IdleCause::ALL.into_iter().map(|c| view! { <span class=format!("swatch tl-swatch {}", cause_class(c)) aria-hidden="true"></span>{format!("idle: {} ", c.label())} }).collect_view()}
                <span class="tl-step-key" aria-hidden="true"></span>"step start"
            </p>
            <p class="muted">{if interactive {
                "Hover for what ran; drag across the strips to analyse a range (the tables below follow it)."
            } else {
                "Open the trace itself to analyse a range: this view has the summary only."
            }}</p>
        </section>
    }
}

fn path_for<K: PartialEq + Copy>(v: &mut Vec<(K, String)>, key: K) -> &mut String {
    let i = match v.iter().position(|(k, _)| *k == key) {
        Some(i) => i,
        None => {
            v.push((key, String::new()));
            v.len() - 1
        }
    };
    &mut v[i].1
}

fn rect(d: &mut String, x: f64, y: f64, w: f64, h: f64) {
    let _ = write!(d, "M{x:.2} {y:.2}h{w:.2}v{h:.2}h{:.2}z", -w);
}

/// What a hovered bin holds: busy share per bucket, idle per cause, the longest kernel.
fn bin_lines(b: &LaneBin, bin_ns: i64, names: &[String]) -> impl IntoView {
    let share = |ns: i64| format::pct(ns as f64 / bin_ns.max(1) as f64 * 100.0);
    let mut busy: Vec<(Bucket, i64)> = b.busy.iter().map(|(k, v)| (*k, *v)).collect();
    busy.sort_by_key(|&(k, ns)| (std::cmp::Reverse(ns), k));
    let busy = busy
        .into_iter()
        .map(|(k, ns)| view! { <div><span class=format!("swatch {}", bucket_class(k)) aria-hidden="true"></span>{format!("{} {}", k.name(), share(ns))}</div> })
        .collect_view();
    let idle = IdleCause::ALL
        .into_iter()
        .filter(|&c| b.wait(c) > 0)
        .map(|c| view! { <div><span class=format!("swatch tl-swatch {}", cause_class(c)) aria-hidden="true"></span>{format!("idle, {}: {}", c.label(), share(b.wait(c)))}</div> })
        .collect_view();
    let top =
        b.top.and_then(|t| names.get(t as usize)).map(|n| view! { <div class="tl-top"><code>{n.clone()}</code></div> });
    let empty = b.busy.is_empty() && b.idle_ns() == 0;
    view! {
        {busy}
        {idle}
        {top}
        {empty.then(|| view! { <div class="muted">"no GPU rows on this stream here"</div> })}
    }
}
