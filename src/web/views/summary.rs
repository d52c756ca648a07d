//! A trace's summary: the headline figures above its views.

use super::widgets::{backend_class, backend_label, TraceRef};
use crate::report::{Hint, TraceReport};
use crate::web::format;
use leptos::prelude::*;

/// Overview cards: the numbers a performance engineer reads first.
#[component]
pub fn Summary(trace: TraceRef) -> impl IntoView {
    let device =
        trace.device.name.clone().unwrap_or_else(|| if trace.has_gpu { "GPU".into() } else { "no GPU rows".into() });
    let device_detail = device_detail(&trace);
    let top_hint = trace.hints.first().cloned();
    let backend = trace.attention.backend;
    view! {
        <section class="summary" data-testid="summary" aria-label="Summary">
            <div class="card device">
                <span class="card-label">"Device"</span>
                <span class="card-value small">{device}</span>
                <span class="card-detail">{device_detail.join(" · ")}</span>
            </div>
            {cards(&trace).into_iter().map(|(label, value, detail)| view! {
                <div class="card">
                    <span class="card-label">{label}</span>
                    <span class="card-value num">{value}</span>
                    <span class="card-detail">{detail}</span>
                </div>
            }).collect_view()}
            <div class="card">
                <span class="card-label">"Attention"</span>
                <span class="card-value"><span class=format!("badge backend-{}", backend_class(backend))>{backend_label(backend)}</span></span>
                <span class="card-detail">{format::us(trace.attention.total_us.max(trace.attention.time_us))}" of GPU time"</span>
            </div>
            {top_hint.map(|h| view! { <HintCard hint=h /> })}
        </section>
    }
}

/// The device card's detail: device count, SMs, compute capability, rank.
fn device_detail(trace: &TraceReport) -> Vec<String> {
    let mut detail = Vec::new();
    if trace.device.count > 1 {
        detail.push(format!("{} devices", trace.device.count));
    }
    if let Some(sm) = trace.device.sm_count {
        detail.push(format!("{sm} SMs"));
    }
    if let Some(cc) = &trace.device.compute_capability {
        detail.push(format!("sm {cc}"));
    }
    if let Some(r) = trace.rank {
        detail.push(match trace.world_size {
            Some(w) => format!("rank {r} of {w}"),
            None => format!("rank {r}"),
        });
    }
    detail
}

/// The number cards as (label, value, detail): GPU span, busy, idle, kernel time, steps, and
/// the share of GPU time launched by an op.
fn cards(trace: &TraceReport) -> Vec<(&'static str, String, String)> {
    let g = &trace.gpu;
    let share = |v: f64| {
        if g.span_us > 0.0 {
            format::pct(100.0 * v / g.span_us) + " of span"
        } else {
            String::new()
        }
    };
    [
        ("GPU span", format::us(g.span_us), "first kernel start to last kernel end".into()),
        ("GPU busy", format::us(g.busy_us), share(g.busy_us)),
        ("GPU idle", format::us(g.idle_us), share(g.idle_us)),
        ("Kernel time", format::us(g.kernel_time_us), format!("{} GPU rows", format::count(g.kernel_count))),
        (
            "Steps",
            trace.steps.len().to_string(),
            if trace.steps.is_empty() { "no ProfilerStep spans".into() } else { "ProfilerStep spans".into() },
        ),
    ]
    .into_iter()
    .chain(launched_card(trace))
    .chain(occupancy_card(g))
    .collect()
}

/// The SM counters the profiler wrote (kernel-time weighted): occupancy written as 0 is
/// unknown, left out of the average with its time said, and "unknown" when every kernel's is.
/// None when the trace has no counters.
fn occupancy_card(g: &crate::report::GpuTime) -> Option<(&'static str, String, String)> {
    let efficiency = g.est_sm_efficiency_pct.map(|e| format!("est. SM efficiency {}", format::pct(e)));
    let unknown = format::us(g.occupancy_unknown_us);
    let (value, left_out) = match g.achieved_occupancy_pct {
        Some(x) if g.occupancy_unknown_us > 0.0 => {
            (format::pct(x), Some(format!("leaving out {unknown} of kernels written as 0")))
        }
        Some(x) => (format::pct(x), None),
        None if g.occupancy_unknown_us > 0.0 => {
            ("unknown".into(), Some(format!("written as 0 for every kernel ({unknown})")))
        }
        None if efficiency.is_some() => ("–".into(), None),
        None => return None,
    };
    let detail: Vec<String> = left_out.into_iter().chain(efficiency).collect();
    Some(("Achieved occupancy", value, detail.join(" · ")))
}

/// How much of the GPU time the trace ties to an op: a graph replay or a trace without launch
/// calls is never mistaken for a fast one. None when the trace has no GPU time.
fn launched_card(trace: &TraceReport) -> Option<(&'static str, String, String)> {
    let lc = trace.launch_coverage;
    (lc.total_us() > 0.0).then(|| {
        let rest: Vec<String> = lc
            .shares()
            .into_iter()
            .filter(|p| p.0 != lc.parts()[0].0)
            .map(|(label, pct)| format!("{label} {}", format::pct(pct)))
            .collect();
        let detail = if rest.is_empty() { "every GPU row has its op".to_string() } else { rest.join(" · ") };
        ("Launched by an op", format::pct(lc.op_us / lc.total_us() * 100.0), detail)
    })
}

/// The most important hint, with what is at stake and its evidence.
#[component]
fn HintCard(hint: Hint) -> impl IntoView {
    let h = hint;
    view! {
        <div class=format!("card wide hint-{}", h.severity.as_str())>
            <span class="card-label">"Most important hint"</span>
            <span class="card-value small">{h.message}</span>
            <span class="card-detail">{format!("{} at stake · {}", format::us(h.stake_us), h.evidence.join(" · "))}</span>
        </div>
    }
}
