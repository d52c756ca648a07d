//! Why, not only where: idle causes, GPU time by layer, memory over time.

use crate::analysis::passes::idle::IdleCause;
use crate::report::{IdleCauses, LayerNode, MemoryView};
use crate::text::fmt_bytes;
use crate::web::format;
use leptos::prelude::*;

/// The gaps between GPU rows, by cause, and what the CPU was doing.
#[component]
pub fn IdleSection(idle: IdleCauses, gpu_idle_us: f64) -> impl IntoView {
    let i = idle;
    let total = i.host_wait_us + i.kernel_wait_us + i.other_us;
    let share = move |v: f64| if total > 0.0 { format::pct(v / total * 100.0) } else { "–".into() };
    let ops = i
        .host_ops
        .iter()
        .map(|h| view! { <tr><td class="name">{h.name.clone()}</td><td class="num">{format::us(h.time_us)}</td><td class="num">{format::count(h.count)}</td></tr> })
        .collect_view();
    let syncs = i
        .syncs
        .iter()
        .map(|h| view! { <tr><td class="name">{h.name.clone()}</td><td class="num">{format::us(h.time_us)}</td><td class="num">{format::count(h.count)}</td></tr> })
        .collect_view();
    let causes = IdleCause::ALL
        .iter()
        .map(|&c| view! {
            <tr><th scope="row">{c.label()}</th><td class="num">{format::us(c.of(&i))}</td><td class="num">{share(c.of(&i))}</td>
                <td>{c.meaning(i.kernel_wait_threshold_us)}</td></tr>
        })
        .collect_view();
    let has_ops = !i.host_ops.is_empty();
    let has_syncs = !i.syncs.is_empty();
    view! {
        <section class="panel" aria-labelledby="idle-h" data-testid="idle">
            <h2 id="idle-h">"Why the GPU waits"</h2>
            <p class="muted">{format!(
                "The GPU as a whole was idle {}, split by what held up the row that ended each gap ({} gaps between kernels on a stream).",
                format::us(gpu_idle_us), format::count(i.gaps))}</p>
            <table class="data">
                <thead><tr><th scope="col">"Cause"</th><th scope="col" class="num">"Time"</th><th scope="col" class="num">"Share"</th><th scope="col">"Meaning"</th></tr></thead>
                <tbody>
                    {causes}
                </tbody>
            </table>
            {has_ops.then(|| view! {
                <table class="data"><caption>"What the CPU was doing during host waits (innermost op on the launching thread)"</caption>
                    <thead><tr><th scope="col">"Op"</th><th scope="col" class="num">"Host wait"</th><th scope="col" class="num">"Gaps"</th></tr></thead>
                    <tbody>{ops}</tbody></table>
            })}
            {has_syncs.then(|| view! {
                <table class="data"><caption>"Synchronising calls while the GPU was idle"</caption>
                    <thead><tr><th scope="col">"Call"</th><th scope="col" class="num">"Idle time overlapped"</th><th scope="col" class="num">"Calls"</th></tr></thead>
                    <tbody>{syncs}</tbody></table>
            })}
        </section>
    }
}

/// GPU time by layer as an expandable tree (`<details>` per node with children).
#[component]
pub fn LayerSection(layers: Vec<LayerNode>) -> impl IntoView {
    fn node(layers: &[LayerNode], i: usize) -> (AnyView, usize) {
        let l = &layers[i];
        let mut j = i + 1;
        let mut kids = Vec::new();
        while j < layers.len() && layers[j].depth > l.depth {
            if layers[j].depth == l.depth + 1 {
                let (v, next) = node(layers, j);
                kids.push(v);
                j = next;
            } else {
                j += 1;
            }
        }
        let mut parts: Vec<String> =
            l.buckets.iter().map(|(b, us)| format!("{} {}", b.name(), format::us(*us))).collect();
        // Achieved rates where the layer's work is known (shapes or the trace's counts).
        if l.work_us > 0.0 {
            let tflops = l.tflops_per_s().map_or("–".into(), |r| format!("{r:.1}"));
            let tbps = l.bytes / (l.work_us * 1e-6) / 1e12;
            parts.push(format!("{tflops} TFLOP/s, {tbps:.2} TB/s over {:.0}% of its time", l.work_known_pct()));
        }
        let split = parts.join(" · ");
        let line = view! {
            <span class="layer-name">{l.name.clone()}</span>
            <span class="num">{format::us(l.forward_us)}</span>
            <span class="num">{format::us(l.backward_us)}</span>
            <span class="muted layer-split">{split}</span>
        };
        let v = if kids.is_empty() {
            view! { <div class="layer leaf">{line}</div> }.into_any()
        } else {
            view! { <details class="layer" open=l.depth < 2><summary>{line}</summary>{kids}</details> }.into_any()
        };
        (v, j)
    }
    let mut roots = Vec::new();
    let mut i = 0;
    while i < layers.len() {
        let (v, next) = node(&layers, i);
        roots.push(v);
        i = next;
    }
    view! {
        <section class="panel" aria-labelledby="layers-h" data-testid="layers">
            <h2 id="layers-h">"GPU time by layer"</h2>
            <p class="muted">"nn.Module spans (profile with with_stack=True), else the outermost op under the step. Forward and backward GPU time, inclusive of children; backward time is placed in the layer of its forward op through the autograd sequence numbers."</p>
            <div class="layer head"><span>"Layer"</span><span class="num">"Forward"</span><span class="num">"Backward"</span><span>"Buckets"</span></div>
            {roots}
        </section>
    }
}

const W: f64 = 640.0;
const H: f64 = 160.0;

/// Allocated (and reserved) memory over time per device, with the peak and its holders.
#[component]
pub fn MemorySection(memory: Option<MemoryView>) -> impl IntoView {
    let Some(m) = memory else {
        return view! {
            <section class="panel" aria-labelledby="mem-h" data-testid="memory">
                <h2 id="mem-h">"Memory"</h2>
                <p class="muted">"This trace has no memory events: profile with profile_memory=True to see allocated and reserved memory over time."</p>
            </section>
        }
        .into_any();
    };
    let devices = m
        .devices
        .into_iter()
        .map(|d| {
            let t_max = d.series.last().map(|p| p.0).unwrap_or(0.0).max(1e-9);
            let y_max = d.series.iter().map(|p| p.2.unwrap_or(p.1).max(p.1)).max().unwrap_or(1).max(1) as f64;
            let pt = |t: f64, v: i64| format!("{:.1},{:.1}", t / t_max * W, H - v as f64 / y_max * H);
            let alloc: Vec<String> = d.series.iter().map(|p| pt(p.0, p.1)).collect();
            let reserved: Vec<String> = d.series.iter().filter_map(|p| p.2.map(|r| pt(p.0, r))).collect();
            let name = if d.device < 0 { "host memory".to_string() } else { format!("device {}", d.device) };
            let holders = d
                .top_ops
                .iter()
                .map(|(op, b)| view! { <tr><td class="name">{op.clone()}</td><td class="num">{fmt_bytes(*b)}</td></tr> })
                .collect_view();
            let what = if d.live_at_peak { "Held at the peak (live allocations by op)" } else { "Allocated before the peak, by op (the trace records no addresses)" };
            let rel = if d.relative { " (allocated since the trace began: the trace records no allocator totals)" } else { "" };
            view! {
                <h3>{format!("{name}: peak {}{rel} at +{}", fmt_bytes(d.peak_allocated_bytes), format::us(d.peak_at_us))}</h3>
                <svg class="memory-chart" viewBox=format!("0 0 {W} {H}") role="img" aria-label=format!("{name}: memory over time")>
                    {(!reserved.is_empty()).then(|| view! { <polyline class="reserved" points=reserved.join(" ") /> })}
                    <polyline class="allocated" points=alloc.join(" ") />
                    <line class="peak" x1=d.peak_at_us / t_max * W x2=d.peak_at_us / t_max * W y1="0" y2=H />
                </svg>
                <p class="legend muted">"allocated (solid), reserved (dashed), the peak (vertical line)"</p>
                <table class="data"><caption>{what}</caption><tbody>{holders}</tbody></table>
            }
        })
        .collect_view();
    view! {
        <section class="panel" aria-labelledby="mem-h" data-testid="memory">
            <h2 id="mem-h">"Memory"</h2>
            <p class="muted">{format!("{} memory events.", format::count(m.events))}</p>
            {devices}
        </section>
    }
    .into_any()
}
