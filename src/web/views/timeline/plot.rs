//! The timeline's drawing and its pointer: hover for a bin's tip, drag for a range.

use super::draw::{bin_lines, shapes, step_lines};
use super::path::PathMarks;
use super::scale::{Scale, LANE_GAP, LANE_H, W};
use crate::report::Timeline;
use crate::web::state::RangeRequest;
use leptos::prelude::*;
use std::sync::Arc;
use wasm_bindgen::JsCast;

/// A drag shorter than this (share of the width) is a click, not a range.
const MIN_DRAG: f64 = 0.004;

/// Where the pointer is, as shares of the element's width and height.
fn frac_of(ev: &web_sys::PointerEvent) -> Option<(f64, f64)> {
    let el: web_sys::Element = ev.current_target()?.dyn_into().ok()?;
    let r = el.get_bounding_client_rect();
    (r.width() > 0.0).then(|| {
        (
            ((ev.client_x() as f64 - r.left()) / r.width()).clamp(0.0, 1.0),
            ((ev.client_y() as f64 - r.top()) / r.height()).clamp(0.0, 1.0),
        )
    })
}

#[component]
pub fn TimelinePlot(
    timeline: Arc<Timeline>,
    scale: Scale,
    /// The critical path's lane (below the streams; `scale.height` counts it) and outlines.
    path: Option<Arc<PathMarks>>,
    on_range: Option<Callback<RangeRequest>>,
) -> impl IntoView {
    let tl = timeline;
    let Scale { lanes, nbins, height, .. } = scale;
    let hover = RwSignal::new(None::<(usize, usize)>);
    let drag = RwSignal::new(None::<(f64, f64)>);
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
            cb.run(RangeRequest::Range(scale.at_ns(a), scale.at_ns(b)));
        }
    };
    let selection = move || {
        drag.get().map(|(a, b)| {
            let (a, b) = (a.min(b), a.max(b));
            view! { <rect class="tl-selection" x=a * W y="0" width=((b - a) * W).max(1.0) height=height /> }
        })
    };
    let steps = step_lines(&tl, scale);
    let ticks = (0..=4)
        .map(|i| {
            let f = i as f64 / 4.0;
            view! { <span class="tl-tick" style:left=format!("{}%", f * 100.0)>{scale.label(scale.at_ns(f))}</span> }
        })
        .collect_view();
    view! {
        <div class="tl-plot">
            <svg class="timeline-chart" class:interactive=interactive viewBox=format!("0 0 {W} {height}") preserveAspectRatio="none"
                height=height role="img"
                aria-label="GPU busy time by bucket and idle time by cause, per stream, over time, and the critical path when known"
                on:pointerdown=on_down on:pointermove=on_move on:pointerup=on_up
                on:pointerleave=move |_| hover.set(None)>
                {(0..lanes).map(|k| view! { <rect class="tl-lane" x="0" y=k as f64 * (LANE_H + LANE_GAP) width=W height=LANE_H /> }).collect_view()}
                {shapes(&tl, scale).into_iter().map(|(class, d)| view! { <path class=class d=d /> }).collect_view()}
                {path.map(|m| m.draw(lanes as f64 * (LANE_H + LANE_GAP)))}
                {(!steps.is_empty()).then(|| view! { <path class="tl-step" d=steps /> })}
                {selection}
            </svg>
            <Tip timeline=tl.clone() scale=scale hover=hover />
            <div class="tl-axis">{ticks}</div>
        </div>
    }
}

/// What ran in the hovered bin.
#[component]
fn Tip(timeline: Arc<Timeline>, scale: Scale, hover: RwSignal<Option<(usize, usize)>>) -> impl IntoView {
    let tl = timeline;
    move || {
        let (lane, bin) = hover.get()?;
        let l = tl.lanes.get(lane)?;
        let b = l.bins.get(bin)?;
        let from = tl.start_ns + bin as i64 * tl.bin_ns;
        Some(view! {
            <div class="tl-tip" data-testid="timeline-tip" style:left=format!("{:.1}%", (bin as f64 + 0.5) / scale.nbins as f64 * 100.0)>
                <strong>{format!("{} – {}", scale.label(from), scale.label(from + tl.bin_ns))}</strong>
                <span class="muted">{format!(" · device {} stream {}", l.device, l.stream)}</span>
                {bin_lines(b, tl.bin_ns, &tl.names)}
            </div>
        })
    }
}
