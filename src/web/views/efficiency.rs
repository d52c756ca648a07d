//! How far from fast: the peaks and where they come from, MFU, the roofline chart and the
//! kernels' efficiency, sortable. The user's own peaks and model size re-measure the report's
//! figures in place (no second read of the trace).

use super::widgets::{bucket_class, swatch};
use crate::analysis::passes::roofline::{rebase, with_user};
use crate::export::roofline::{self, Chart, BOTTOM, HEIGHT, LEFT, WIDTH};
use crate::report::{Bound, Efficiency, KernelWork, ModelSize};
use crate::vocab::fmt_si;
use crate::web::format;
use crate::web::view_state::{Figures, MAX_FIGURE};
use leptos::prelude::*;

fn number(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0)
}

/// The report's efficiency against the given figures (as `--peak-tflops T --peak-tbps B`): a
/// TFLOP/s figure replaces every precision's peak, a TB/s figure the bandwidth.
pub fn measured(e: &Efficiency, g: &Figures) -> Efficiency {
    let (tflops, tbps) = (number(&g.tflops), number(&g.tbps));
    let model =
        number(&g.params).zip(number(&g.tokens)).map(|(params, tokens_per_step)| ModelSize { params, tokens_per_step });
    if tflops.is_none() && tbps.is_none() && model == e.model {
        return e.clone();
    }
    let user = crate::analysis::UserPeaks { tflops: tflops.map(|t| vec![(None, t)]).unwrap_or_default(), tbps };
    let peaks = with_user(e.peaks.clone(), &user);
    rebase(e, peaks, model)
}

/// The section, on the report's figures re-measured against the user's (`given`, which the
/// top tables' efficiency columns follow too, and share links keep).
#[component]
pub fn EfficiencySection(efficiency: Efficiency, given: RwSignal<Figures>) -> impl IntoView {
    let original = StoredValue::new(efficiency);
    let selected = RwSignal::new(None::<String>);
    let memo = Memo::new(move |_| original.with_value(|e| measured(e, &given.get())));
    let shown = move || memo.get();
    view! {
        <section class="panel" aria-labelledby="eff-h" data-testid="efficiency">
            <h2 id="eff-h">"How far from fast"</h2>
            {move || view! { <EfficiencyFacts e=shown() /> }}
            <PeakForm given=given />
            {move || roofline::chart(&shown()).map(|c| view! { <RooflineChart chart=c selected=selected /> })}
            {move || view! { <WorkTable kernels=shown().kernels selected=selected /> }}
        </section>
    }
}

/// The peaks and their source, what the work figures could see, MFU.
#[component]
fn EfficiencyFacts(e: Efficiency) -> impl IntoView {
    let c = &e.coverage;
    let known = c.known_total_us();
    let share = |v: f64| format::pct(v / c.kernel_us.max(f64::MIN_POSITIVE) * 100.0);
    let peaks = match &e.peaks {
        Some(p) => format!("Measured against {}: {} TB/s ({}).", p.device, p.tbps, p.source),
        None => format!(
            "No peaks: {}. Give the peak TFLOP/s and TB/s below for % of peak.",
            e.unknown_device
                .as_deref()
                .map_or("the trace lists no device".into(), |d| format!("{d} is not in the device table"))
        ),
    };
    let mfu = e.mfu.first().map(|m| {
        let analytic = m
            .analytic_mfu_pct
            .map(|a| format!(" · analytic {}·N·T {}", e.analytic_factor, format::pct(a)))
            .unwrap_or_default();
        format!(
            "MFU {} over the GPU span ({} in {}, {}){analytic}.",
            m.mfu_pct.map_or("unknown".into(), format::pct),
            fmt_si(m.flops, "FLOP"),
            format::us(m.span_us),
            m.precision.map_or("?", |p| p.id())
        )
    });
    view! {
        <p data-testid="efficiency-mfu"><strong>{mfu}</strong></p>
        <p class="muted">{peaks}</p>
        <p class="muted" data-testid="efficiency-coverage">{format!(
            "Work known for {} of kernel time (from shapes, the profiler's or Inductor's counts); no model for {}; unknown {} (no launching op or no shapes){}. MFU counts the known work only.",
            share(known), share(c.unmodelled_us), share(c.unknown_us),
            if c.graph_us > 0.0 { format!("; replayed by graph launches {} (per-op work needs the capture trace)", share(c.graph_us)) } else { String::new() })}</p>
    }
}

#[component]
fn PeakForm(given: RwSignal<Figures>) -> impl IntoView {
    let field = move |label: &'static str,
                      testid: &'static str,
                      get: fn(&Figures) -> String,
                      set: fn(&mut Figures, String)| {
        view! {
            <label class="field">{label}
                <input type="text" inputmode="decimal" size="8" data-testid=testid prop:value=move || given.with(get)
                    maxlength=MAX_FIGURE.to_string()
                    on:change:target=move |ev| given.update(|g| set(g, ev.target().value().chars().take(MAX_FIGURE).collect())) />
            </label>
        }
    };
    view! {
        <div class="peak-form table-tools" data-testid="peak-form">
            {field("Peak TFLOP/s", "peak-tflops", |g| g.tflops.clone(), |g, v| g.tflops = v)}
            {field("TB/s", "peak-tbps", |g| g.tbps.clone(), |g, v| g.tbps = v)}
            {field("Parameters", "model-params", |g| g.params.clone(), |g, v| g.params = v)}
            {field("Tokens per step", "model-tokens", |g| g.tokens.clone(), |g, v| g.tokens = v)}
            <button type="button" class="button tiny" on:click=move |_| given.set(Figures::default())>"Reset"</button>
        </div>
    }
}

/// The log-log roofline: roofs, one point per kernel (area by time, colour by bucket); a click
/// picks the kernel in the table.
#[component]
fn RooflineChart(chart: Chart, selected: RwSignal<Option<String>>) -> impl IntoView {
    let Chart { x_ticks, y_ticks, roofs, points } = chart;
    let x_axis = x_ticks.into_iter().map(|(x, l)| view! {
        <line class="grid" x1=x x2=x y1=0 y2=HEIGHT - BOTTOM /><text class="tick" x=x.min(WIDTH - 14.0) y=HEIGHT - BOTTOM + 14.0>{l}</text>
    }).collect_view();
    let y_axis = y_ticks
        .into_iter()
        .map(|(y, l)| {
            view! {
                <line class="grid" x1=LEFT x2=WIDTH y1=y y2=y /><text class="tick y" x=LEFT - 6.0 y=y>{l}</text>
            }
        })
        .collect_view();
    let roofs = roofs.into_iter().map(|r| view! {
        <polyline class="roof" points=r.points /><text class="roof-label" x=r.label_at.0 y=r.label_at.1>{r.label}</text>
    }).collect_view();
    let dots = points.into_iter().map(|p| {
        let name = p.title.lines().next().unwrap_or_default().to_string();
        let pick = name.clone();
        let toggle = move || selected.update(|s| *s = if s.as_deref() == Some(pick.as_str()) { None } else { Some(pick.clone()) });
        let active = move || selected.get().as_deref() == Some(name.as_str());
        view! {
            <circle class=format!("dot {}", bucket_class(p.bucket)) class:active=active cx=p.x cy=p.y r=p.r tabindex="0" role="button"
                on:click={let toggle = toggle.clone(); move |_| toggle()}
                on:keydown=move |ev| if ev.key() == "Enter" || ev.key() == " " { ev.prevent_default(); toggle() }>
                <title>{p.title}</title>
            </circle>
        }
    }).collect_view();
    view! {
        <svg class="roofline" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" data-testid="roofline"
            aria-label="Roofline: achieved TFLOP/s against arithmetic intensity, one point per kernel">
            {x_axis}{y_axis}{roofs}{dots}
            <text class="axis" x=(LEFT + WIDTH) / 2.0 y=HEIGHT - 4.0>"FLOP per byte"</text>
            <text class="axis y" x=12 y=(HEIGHT - BOTTOM) / 2.0>"TFLOP/s"</text>
        </svg>
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Col {
    Time,
    Tflops,
    Peak,
    Tbps,
    Bandwidth,
    Intensity,
    Recoverable,
}

fn key(k: &KernelWork, c: Col) -> f64 {
    match c {
        Col::Time => k.time_us,
        Col::Tflops => k.tflops_per_s,
        Col::Peak => k.pct_of_peak.unwrap_or(-1.0),
        Col::Tbps => k.tbps,
        Col::Bandwidth => k.pct_of_bandwidth.unwrap_or(-1.0),
        Col::Intensity => k.intensity.unwrap_or(-1.0),
        Col::Recoverable => k.recoverable_us,
    }
}

/// The kernels' efficiency, sortable by any figure; a kernel picked in the chart alone.
#[component]
fn WorkTable(kernels: Vec<KernelWork>, selected: RwSignal<Option<String>>) -> impl IntoView {
    let sort = RwSignal::new((Col::Recoverable, true));
    let rows = StoredValue::new(kernels);
    let visible = move || {
        let (col, desc) = sort.get();
        let pick = selected.get();
        let mut v: Vec<KernelWork> =
            rows.with_value(|r| r.iter().filter(|k| pick.as_ref().is_none_or(|p| *p == k.short)).cloned().collect());
        v.sort_by(|a, b| if desc { key(b, col).total_cmp(&key(a, col)) } else { key(a, col).total_cmp(&key(b, col)) });
        v
    };
    let header = move |col: Col, label: &'static str| {
        let aria = move || match sort.get() {
            (c, true) if c == col => "descending",
            (c, false) if c == col => "ascending",
            _ => "none",
        };
        view! {
            <th scope="col" class="num" aria-sort=aria>
                <button type="button" class="sort" on:click=move |_| sort.update(|s| *s = if s.0 == col { (col, !s.1) } else { (col, true) })>{label}</button>
            </th>
        }
    };
    let pct = |v: Option<f64>| v.map_or("–".into(), format::pct);
    let above = rows.with_value(|r| r.iter().filter(|k| k.above_roof()).count());
    view! {
        {(above > 0).then(|| view! {
            <p class="notice info" data-testid="above-roof">{format!("{above} kernel(s) marked ▲ are {}.", crate::report::ABOVE_ROOF)}</p>
        })}
        {move || selected.get().map(|s| view! {
            <p class="chip">{format!("kernel: {s}")}<button type="button" class="chip-x" aria-label="Show every kernel" on:click=move |_| selected.set(None)>"×"</button></p>
        })}
        <div class="scroll"><table class="data" data-testid="efficiency-table">
            <thead><tr>
                <th scope="col">"Kernel"</th>
                {header(Col::Time, "Time")}{header(Col::Tflops, "TFLOP/s")}{header(Col::Peak, "% of peak")}
                {header(Col::Tbps, "TB/s")}{header(Col::Bandwidth, "% of bandwidth")}{header(Col::Intensity, "FLOP/B")}
                <th scope="col">"Bound"</th>{header(Col::Recoverable, "Recoverable")}
            </tr></thead>
            <tbody>
                {move || visible().into_iter().map(|k| view! {
                    <tr>
                        <td class="name" title=k.name.clone()>
                            {swatch(bucket_class(k.bucket))}
                            {k.above_roof().then_some("▲ ")}{k.short.clone()}
                            <span class="muted">{format!(" {} · {}{}", k.precision.map_or("?", |p| p.id()), k.source.id(), if k.split { " · split" } else { "" })}</span>
                        </td>
                        <td class="num">{format::us(k.time_us)}</td>
                        <td class="num">{format!("{:.1}", k.tflops_per_s)}</td>
                        <td class="num">{pct(k.pct_of_peak)}</td>
                        <td class="num">{format!("{:.2}", k.tbps)}</td>
                        <td class="num">{pct(k.pct_of_bandwidth)}</td>
                        <td class="num">{k.intensity.map_or("–".into(), |a| format!("{a:.1}"))}</td>
                        <td>{match k.bound { Some(Bound::Compute) => "compute", Some(Bound::Memory) => "memory", None => "–" }}</td>
                        <td class="num">{format::us(k.recoverable_us)}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table></div>
    }
}
