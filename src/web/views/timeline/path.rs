//! The critical path on the timeline: a lane below the streams with every segment of the
//! report's path (coloured by side, each with its name, side and time as a tooltip), and each
//! GPU row, queue gap or event wait on the path outlined on its stream's lane.

use super::scale::{Scale, LANE_GAP, LANE_H, W};
use crate::report::{CriticalPath, PathSide, Timeline};
use crate::web::format;
use crate::web::views::widgets::swatch;
use leptos::prelude::*;

/// Narrower segments are drawn this wide (drawing units; about a pixel).
const MIN_W: f64 = 1.0;

/// One segment placed on the drawing.
struct Mark {
    x: f64,
    w: f64,
    side: PathSide,
    /// The drawn stream lane it sits on, if any.
    lane: Option<usize>,
    title: String,
}

/// The report's path placed on the timeline, and what of it is not drawn.
pub struct PathMarks {
    marks: Vec<Mark>,
    /// Segments wholly outside the timeline's range (CPU time before the first GPU row or
    /// after the last); those partly inside are drawn cut at its edge.
    pub outside: usize,
    /// Segments the report left out (the shortest, or later steps').
    pub left_out: u64,
    pub steps_drawn: usize,
}

impl PathMarks {
    /// None when the path has no segment to draw and none was left out.
    pub fn new(path: &CriticalPath, tl: &Timeline, scale: Scale) -> Option<PathMarks> {
        let mut out = PathMarks { marks: Vec::new(), outside: 0, left_out: 0, steps_drawn: 0 };
        let at = |ns: i64| ((ns - scale.start_ns) as f64 / scale.span_ns * W).clamp(0.0, W);
        for s in &path.steps {
            out.left_out += s.segments_left_out as u64;
            out.steps_drawn += usize::from(!s.segments.is_empty());
            for g in &s.segments {
                if g.end_ns < tl.start_ns || g.start_ns > tl.end_ns {
                    out.outside += 1;
                    continue;
                }
                let (x, end) = (at(g.start_ns), at(g.end_ns));
                let lane =
                    g.stream.and_then(|k| tl.lanes.iter().position(|l| l.device == k.device && l.stream == k.stream));
                let name = path.names.get(g.name as usize).map_or("?", String::as_str);
                let place = g.stream.map(|k| format!(" · device {} stream {}", k.device, k.stream)).unwrap_or_default();
                let title = format!(
                    "{name}\n{} on the path, {} ({} – {}{place}) · {}",
                    side_text(g.side),
                    format::us((g.end_ns - g.start_ns) as f64 / 1e3),
                    scale.label(g.start_ns),
                    scale.label(g.end_ns),
                    s.step
                );
                out.marks.push(Mark { x: x.min(W - MIN_W), w: (end - x).max(MIN_W), side: g.side, lane, title });
            }
        }
        (!out.marks.is_empty() || out.left_out > 0 || out.outside > 0).then_some(out)
    }

    /// The path's lane at `top` and the outlines on the stream lanes, as SVG.
    pub fn draw(&self, top: f64) -> impl IntoView {
        let outlines = self
            .marks
            .iter()
            .filter_map(|m| m.lane.map(|k| (m, k as f64 * (LANE_H + LANE_GAP))))
            .map(|(m, y)| view! { <rect class="tl-cp-on" x=m.x y=y + 1.0 width=m.w height=LANE_H - 2.0 /> })
            .collect_view();
        let marks = self
            .marks
            .iter()
            .map(|m| {
                view! {
                    <rect class=format!("tl-cp {}", side_class(m.side)) data-testid="cpath-mark" data-side=m.side.label()
                        x=m.x y=top width=m.w height=LANE_H><title>{m.title.clone()}</title></rect>
                }
            })
            .collect_view();
        view! {
            <g class="tl-cp-outlines">{outlines}</g>
            <rect class="tl-lane" x="0" y=top width=W height=LANE_H />
            <g data-testid="cpath-lane" data-outside=self.outside>{marks}</g>
        }
    }
}

fn side_class(side: PathSide) -> &'static str {
    match side {
        PathSide::Cpu => "tl-cp-cpu",
        PathSide::Gpu => "tl-cp-gpu",
        PathSide::Launch => "tl-cp-launch",
        PathSide::Gap => "tl-cp-gap",
    }
}

/// What a side's time is, in the tooltip and the legend.
fn side_text(side: PathSide) -> &'static str {
    match side {
        PathSide::Cpu => "CPU time",
        PathSide::Gpu => "GPU row",
        PathSide::Launch => "launch delay",
        PathSide::Gap => "gap / wait on a stream",
    }
}

/// The lane's label beside the streams'.
pub fn label(marks: &PathMarks) -> impl IntoView {
    view! {
        <div class="tl-label tl-cp-label" style:height=format!("{}px", LANE_H + LANE_GAP)>
            <span>"critical path"</span>
            <span class="muted">{format!("{} pieces", marks.marks.len())}</span>
        </div>
    }
}

/// The legend of the path's lane and what of the path is not drawn.
pub fn legend(marks: &PathMarks) -> impl IntoView {
    let sides = [PathSide::Cpu, PathSide::Gpu, PathSide::Launch, PathSide::Gap]
        .into_iter()
        .map(|s| view! { {swatch(format!("tl-swatch {}", side_class(s)))}{format!("{} ", side_text(s))} })
        .collect_view();
    let mut missing = Vec::new();
    if marks.left_out > 0 {
        missing.push(format!(
            "{} shorter pieces (or later steps') are not drawn: the report keeps the longest of each step's path; \
             zoom to a step to draw its own",
            marks.left_out
        ));
    }
    if marks.outside > 0 {
        missing.push(format!(
            "{} pieces fall outside the GPU rows' range (CPU time before the first row or after the last)",
            marks.outside
        ));
    }
    view! {
        <p class="legend" data-testid="timeline-path-legend">
            <strong>"Critical path"</strong>{format!(" ({} step(s), the lane below the streams; hover a piece for its name): ", marks.steps_drawn)}
            {sides}<span class="tl-cp-key" aria-hidden="true"></span>"a GPU row on the path, outlined on its stream"
        </p>
        {(!missing.is_empty()).then(|| view! { <p class="muted" data-testid="timeline-path-missing">{missing.join("; ")}"."</p> })}
    }
}
