//! The GPU timeline: one strip per stream from the report's downsampled summary; busy time
//! stacked by bucket from the bottom, idle time by cause from the top, step boundaries as
//! lines; the critical path in a lane of its own below (path.rs). Hover says what ran in a
//! bin; dragging (or picking a step) analyses that range again, so every table below follows
//! it.

mod draw;
mod path;
mod plot;
mod scale;

use crate::report::{CriticalPath, TimeWindow, Timeline};
use crate::web::format;
use crate::web::state::RangeRequest;
use draw::Legend;
use leptos::prelude::*;
use path::PathMarks;
use plot::TimelinePlot;
use scale::{Scale, LANE_GAP, LANE_H};
use std::sync::Arc;

#[component]
pub fn TimelineSection(
    timeline: Timeline,
    window: Option<TimeWindow>,
    /// The report's critical path, drawn in a lane below the streams when it has segments.
    path: Option<CriticalPath>,
    /// None when there is no trace to analyse again (a share link, several files).
    on_range: Option<Callback<RangeRequest>>,
) -> impl IntoView {
    let tl = Arc::new(timeline);
    let mut scale = Scale::new(&tl, window);
    let marks = path.and_then(|p| PathMarks::new(&p, &tl, scale)).map(Arc::new);
    if marks.is_some() {
        scale.height += LANE_H + LANE_GAP;
    }
    let interactive = on_range.is_some();
    let whole = window.zip(on_range).map(|(_, cb)| {
        view! { <button type="button" class="button" data-testid="timeline-whole" on:click=move |_| cb.run(RangeRequest::Whole)>"Whole trace"</button> }
    });
    let heading_note = match window {
        Some(w) => format!(
            "Range {} – {}: every section below covers this range only.",
            scale.label(w.start_ns),
            scale.label(w.end_ns)
        ),
        None => {
            format!("{} of GPU time, {} per column.", scale.label(tl.end_ns), format::us(tl.bin_ns as f64 / 1000.0))
        }
    };
    let shown_steps = tl.steps.len() as u32;
    view! {
        <section class="panel" aria-labelledby="timeline-h" data-testid="timeline">
            <h2 id="timeline-h">"GPU timeline"</h2>
            <div class="tl-head">
                <p class="muted" data-testid="timeline-range">{heading_note}</p>
                {on_range.filter(|_| !tl.steps.is_empty()).map(|cb| view! { <StepsMenu timeline=tl.clone() on_range=cb /> })}
                {whole}
            </div>
            <div class="tl-body">
                <div class="tl-labels">{lane_labels(&tl)}{marks.as_deref().map(path::label)}</div>
                <TimelinePlot timeline=tl.clone() scale=scale path=marks.clone() on_range=on_range />
            </div>
            {(tl.hidden_steps > 0).then(|| view! {
                <p class="muted">{format!("{} steps: every {}th is marked and listed.", shown_steps + tl.hidden_steps,
                    (shown_steps + tl.hidden_steps).div_ceil(tl.steps.len().max(1) as u32))}</p>
            })}
            {(tl.hidden_lanes > 0).then(|| view! {
                <p class="muted">{format!("{} more streams ({} busy) not drawn: the {} busiest are.", tl.hidden_lanes, format::us(tl.hidden_busy_us), scale.lanes)}</p>
            })}
            <Legend timeline=tl.clone() />
            {marks.as_deref().map(path::legend)}
            <p class="muted">{if interactive {
                "Hover for what ran; drag across the strips to analyse a range (the tables below follow it)."
            } else {
                "Open the trace itself to analyse a range: this view has the summary only."
            }}</p>
        </section>
    }
}

/// Zooms to one step: analyses its range.
#[component]
fn StepsMenu(timeline: Arc<Timeline>, on_range: Callback<RangeRequest>) -> impl IntoView {
    let steps = timeline.steps.clone();
    let options = steps
        .iter()
        .enumerate()
        .map(|(i, s)| view! { <option value=i.to_string()>{format!("{} ({})", s.name, format::us((s.end_ns - s.start_ns) as f64 / 1000.0))}</option> })
        .collect_view();
    view! {
        <label class="tl-steps">"Zoom to a step "
            <select data-testid="timeline-step" on:change:target=move |ev| {
                let pick = ev.target().value().parse::<usize>().ok().and_then(|i| steps.get(i));
                if let Some(s) = pick {
                    on_range.run(RangeRequest::Range(s.start_ns, s.end_ns.max(s.start_ns + 1)));
                }
            }>
                <option value="" selected>"—"</option>
                {options}
            </select>
        </label>
    }
}

fn lane_labels(tl: &Timeline) -> impl IntoView {
    tl.lanes
        .iter()
        .map(|l| {
            view! {
                <div class="tl-label" style:height=format!("{}px", LANE_H + LANE_GAP)>
                    <span>{format!("dev {} · stream {}", l.device, l.stream)}</span>
                    <span class="muted">{format!("busy {}", format::us(l.busy_us))}</span>
                </div>
            }
        })
        .collect_view()
}
