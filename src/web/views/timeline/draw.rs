//! The timeline's shapes as SVG paths (one per lane and bucket or idle cause, each a run of
//! rectangles), a bin's tip lines and the legend.

use super::scale::{Scale, LANE_GAP, LANE_H, W};
use crate::analysis::passes::idle::IdleCause;
use crate::analysis::rules::taxonomy::Bucket;
use crate::report::{LaneBin, Timeline};
use crate::web::format;
use crate::web::views::widgets::{bucket_class, swatch};
use leptos::prelude::*;
use std::fmt::Write;
use std::sync::Arc;

fn cause_class(c: IdleCause) -> &'static str {
    match c {
        IdleCause::Host => "tl-host",
        IdleCause::Kernel => "tl-kernel",
        IdleCause::Other => "tl-other",
    }
}

/// `(class, path)`: one per (lane, bucket) and (lane, cause), each a run of rectangles.
pub fn shapes(tl: &Timeline, scale: Scale) -> Vec<(String, String)> {
    let bin_w = W / scale.nbins as f64;
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
    shapes
}

/// Every step start as one path: up to 240 of them, each a line element otherwise.
pub fn step_lines(tl: &Timeline, scale: Scale) -> String {
    let mut lines = String::new();
    let xs = tl.steps.iter().map(|s| (s.start_ns - tl.start_ns) as f64 / scale.span_ns * W);
    for x in xs.filter(|x| (0.0..=W).contains(x)) {
        let _ = write!(lines, "M{x:.2} 0v{}", scale.height);
    }
    lines
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
pub fn bin_lines(b: &LaneBin, bin_ns: i64, names: &[String]) -> impl IntoView {
    let share = |ns: i64| format::pct(ns as f64 / bin_ns.max(1) as f64 * 100.0);
    let mut busy: Vec<(Bucket, i64)> = b.busy.iter().map(|(k, v)| (*k, *v)).collect();
    busy.sort_by_key(|&(k, ns)| (std::cmp::Reverse(ns), k));
    let busy = busy
        .into_iter()
        .map(|(k, ns)| view! { <div>{swatch(bucket_class(k))}{format!("{} {}", k.name(), share(ns))}</div> })
        .collect_view();
    let idle = IdleCause::ALL
        .into_iter()
        .filter(|&c| b.wait(c) > 0)
        .map(|c| view! { <div>{swatch(format!("tl-swatch {}", cause_class(c)))}{format!("idle, {}: {}", c.label(), share(b.wait(c)))}</div> })
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

/// The buckets drawn, the idle causes and the step line.
#[component]
pub fn Legend(timeline: Arc<Timeline>) -> impl IntoView {
    let present: Vec<Bucket> = Bucket::ALL
        .into_iter()
        .filter(|b| timeline.lanes.iter().any(|l| l.bins.iter().any(|x| x.busy.contains_key(b))))
        .collect();
    view! {
        <p class="legend">
            {present.into_iter().map(|b| view! { {swatch(bucket_class(b))}{format!("{} ", b.name())} }).collect_view()}
            {IdleCause::ALL.into_iter().map(|c| view! { {swatch(format!("tl-swatch {}", cause_class(c)))}{format!("idle: {} ", c.label())} }).collect_view()}
            <span class="tl-step-key" aria-hidden="true"></span>"step start"
        </p>
    }
}
