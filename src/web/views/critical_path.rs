//! The critical path (the report's `critical_path`, HTA's lightweight model): per step, the
//! path's length against the step, its CPU / GPU / launch / gap split, GPU time on it per
//! bucket and its largest pieces; across ranks, who arrived last at each collective and what
//! held it. The wording follows the text report's; what the model cannot see is said.

use super::widgets::{bucket_class, swatch};
use crate::analysis::WhatIfSpec;
use crate::report::{CriticalPath, JobStretch, StepPath};
use crate::web::format;
use leptos::prelude::*;

/// Steps and pieces listed (the JSON export has every one).
const STEPS_SHOWN: usize = 8;
const PIECES_SHOWN: usize = 5;

fn step_row(path: &CriticalPath, s: &StepPath) -> impl IntoView {
    let p = s.path_us.max(f64::MIN_POSITIVE);
    let share = |v: f64| format!("{:.0}%", v / p * 100.0);
    let split = format!(
        "CPU {} · GPU {} · launch delay {} · queue gaps {}",
        share(s.cpu_us),
        share(s.gpu_us),
        share(s.launch_us),
        share(s.gap_us)
    );
    let syncs = (s.syncs > 0).then(|| format!("through {} synchronisation(s)", s.syncs));
    let buckets = s
        .buckets
        .iter()
        .take(3)
        .map(|b| {
            view! {
                <li>{swatch(bucket_class(b.bucket))}{format!("{} {}", b.bucket.id(), format::pct(b.pct_of_path))}</li>
            }
        })
        .collect_view();
    let pieces = s
        .pieces
        .iter()
        .take(PIECES_SHOWN)
        .map(|x| {
            let name = path.name(x.name).to_string();
            let title = name.clone();
            view! {
                <li><span class="num">{format!("{} {} ", format::us(x.us), format::pct(x.pct_of_path))}</span>
                    <span class="muted">{x.side.label()}" "</span><span class="kname" title=title>{name}</span></li>
            }
        })
        .collect_view();
    view! {
        <tr>
            <th scope="row">{s.step.clone()}</th>
            <td class="num">{format::us(s.path_us)}</td>
            <td class="num">{format::us(s.span_us)}</td>
            <td class="num">{format!("{:.0}%", s.path_us / s.span_us.max(f64::MIN_POSITIVE) * 100.0)}</td>
            <td>{split}{syncs.map(|t| view! { <br /><span class="muted">{t}</span> })}</td>
            <td><ul class="plain">{buckets}</ul></td>
            <td class="name"><ol class="plain">{pieces}</ol></td>
        </tr>
    }
}

/// The what-if field (`gemm=30%`, as the CLI's `--what-if`): checked as typed, applied by
/// analysing the trace again; an empty field takes the what-if away.
#[component]
fn WhatIfField(applied: String, on_apply: Callback<String>) -> impl IntoView {
    let text = RwSignal::new(applied.clone());
    let error = move || text.with(|t| (!t.trim().is_empty()).then(|| WhatIfSpec::parse(t).err()).flatten());
    let applied = StoredValue::new(applied);
    let can_apply = move || error().is_none() && text.with(|t| applied.with_value(|a| t.trim() != a.trim()));
    let apply = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if can_apply() {
            on_apply.run(text.get_untracked().trim().to_string());
        }
    };
    view! {
        <form class="what-if peak-form" on:submit=apply>
            <label class="field">"What if "<input type="text" data-testid="what-if-input" placeholder="gemm=30%" size="16" maxlength="80"
                prop:value=move || text.get() on:input:target=move |ev| text.set(ev.target().value()) />
                " faster? (a bucket id or a text that kernel and op names contain)"</label>" "
            <button type="submit" class="button" data-testid="what-if-apply" disabled=move || !can_apply()>"Recompute"</button>
            {move || error().map(|e| view! { <p class="notice warning" data-testid="what-if-error">{e}</p> })}
        </form>
    }
}

/// A line of `text::unseen` as a sentence: capitalised, with its full stop.
fn sentence(line: &str) -> String {
    let mut c = line.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect::<String>() + ".").unwrap_or_default()
}

/// Per step, what its time waited on; the what-if when one was asked for, and its field when
/// the trace can be read again (`on_what_if`).
#[component]
pub fn CriticalPathSection(path: CriticalPath, on_what_if: Option<Callback<String>>) -> impl IntoView {
    let applied = path.what_if.as_ref().map(|w| format!("{}={}%", w.target, w.faster_pct)).unwrap_or_default();
    let shown = path.steps.len().min(STEPS_SHOWN);
    // A what-if recomputes paths: none when every step was too large for one.
    let has_path = !path.steps.is_empty();
    let more = path.step_count() - shown as u64;
    let where_rest = if path.steps_not_carried > 0 {
        format!("this share link carries the first {}; the JSON export of the trace has every one", path.steps.len())
    } else {
        "the JSON export has every one".to_string()
    };
    let rows = path.steps.iter().take(STEPS_SHOWN).map(|s| step_row(&path, s)).collect_view();
    let what_if = path.what_if.as_ref().map(|w| {
        format!(
        "What if {} were {:.0}% faster: the steps take {} -> {} along the critical path (the naive sum says {} saved).",
        w.target, w.faster_pct, format::us(w.step_before_us), format::us(w.step_after_us), format::us(w.naive_saving_us)
    )
    });
    view! {
        <section class="panel" aria-labelledby="cpath-h" data-testid="critical-path">
            <h2 id="cpath-h">"Critical path"</h2>
            <p class="muted">"What each step waited on: the longest chain through CPU op nesting and order on each thread, \
                launch call → GPU row, stream order, and GPU row → the synchronising call that waited for it \
                (HTA's lightweight model; see docs/definitions.md). A wait between streams (cudaStreamWaitEvent) is an \
                edge where the trace's cuda_sync rows name it; ops that launch nothing count as their parent's time; a path is never longer \
                than its step nor shorter than its longest GPU row."</p>
            {(path.steps.is_empty() && path.steps_too_large.is_empty()).then(|| view! { <p class="notice info" data-testid="critical-path-not-carried">{format!(
                "This share link of several ranks carries the job's critical path (in the ranks view), not each rank's \
                 {more} step path(s): open the trace for them.")}</p> })}
            {(!path.steps.is_empty()).then(|| view! {
            <div class="scroll">
            <table class="data" data-testid="critical-path-steps">
                <thead><tr><th scope="col">"Step"</th><th scope="col" class="num">"Path"</th><th scope="col" class="num">"Step"</th>
                    <th scope="col" class="num">"Path / step"</th><th scope="col">"Split of the path"</th>
                    <th scope="col">"GPU on the path"</th><th scope="col">"Largest pieces"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            </div>
            })}
            {(path.segments_not_carried > 0 && !path.steps.is_empty()).then(|| view! { <p class="notice info" data-testid="critical-path-not-drawn">
                "This share link carries neither the GPU timeline nor the path's pieces in time, so the path cannot be \
                 drawn here: open the trace to see it on the timeline."</p> })}
            {(more > 0 && !path.steps.is_empty()).then(|| view! { <p class="muted" data-testid="critical-path-more">{format!("… {more} more steps ({where_rest}).")}</p> })}
            {crate::text::unseen(&path).into_iter().map(|l| view! { <p class="muted" data-testid="critical-path-unseen">{sentence(&l)}</p> }).collect_view()}
            {what_if.map(|w| view! { <p data-testid="what-if"><strong>{w}</strong></p> })}
            {on_what_if.filter(|_| has_path).map(|cb| view! { <WhatIfField applied=applied on_apply=cb /> })}
        </section>
    }
}

/// Across ranks: at each matched collective, the rank that arrived last and what held it.
#[component]
pub fn JobPath(stretches: Vec<JobStretch>, not_carried: u64) -> impl IntoView {
    // As many as a share link carries, so the table reads the same from one.
    let shown = stretches.len().min(JobStretch::LINK_STRETCHES);
    let more = (stretches.len() - shown) as u64 + not_carried;
    let rows = stretches.iter().take(shown).map(|s| view! {
        <tr>
            <td>{s.collective.clone()}</td>
            <td class="num">{s.seq.map(|q| q.to_string()).unwrap_or_default()}</td>
            <td>{s.rank.map_or_else(|| format!("row {}", s.row), |r| format!("rank {r}"))}</td>
            <td class="name"><span class="muted">{s.side.label()}" "</span><span class="kname" title=s.held_by.clone()>{s.held_by.clone()}</span></td>
            <td class="num">{format::us(s.held_us)}</td>
            <td class="num">{format::us(s.stretch_us)}</td>
            <td class="num">{format::us(s.wait_us)}</td>
        </tr>
    }).collect_view();
    view! {
        <JobStrip stretches=stretches[..shown].to_vec() />
        <div class="scroll">
        <table class="data" data-testid="job-critical-path">
            <caption>"The job's critical path: at each collective, the rank everyone waited for and the largest piece of \
                its own path since its previous collective (from that rank's trace alone: a rank's wait for the network \
                is not told from its work)"</caption>
            <thead><tr><th scope="col">"Collective"</th><th scope="col" class="num">"#"</th><th scope="col">"Last to arrive"</th>
                <th scope="col">"Held by"</th><th scope="col" class="num">"Held"</th><th scope="col" class="num">"Its stretch"</th>
                <th scope="col" class="num">"Others waited"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
        </div>
        {(more > 0).then(|| view! { <p class="muted" data-testid="job-critical-path-more">{format!(
            "… {more} more stretches (the first {shown} are listed, as a share link carries them; the JSON export of the traces has every one).")}</p> })}
    }
}

/// A stretch this share of the strip (percent) or more has its rank written inside.
const LABEL_PCT: f64 = 6.0;
/// Colours for ranks (by row, repeating past eight).
const RANK_COLOURS: usize = 8;

fn who(s: &JobStretch) -> String {
    s.rank.map_or_else(|| format!("row {}", s.row), |r| format!("rank {r}"))
}

/// The job's path as one strip: its stretches end to end, each as wide as its time on the path
/// and coloured by the rank that held it. Stretches follow the collectives' order; the ranks'
/// clocks are never compared.
#[component]
fn JobStrip(stretches: Vec<JobStretch>) -> impl IntoView {
    let total: f64 = stretches.iter().map(|s| s.stretch_us.max(0.0)).sum();
    let marks = stretches
        .iter()
        .map(|s| {
            let pct = if total > 0.0 { s.stretch_us.max(0.0) / total * 100.0 } else { 0.0 };
            let name = who(s);
            let label = (pct >= LABEL_PCT).then(|| name.clone());
            let title = format!(
                "{}{}: {name} arrived last, held by {} {} for {}; its stretch {}, the others waited {}",
                s.collective,
                s.seq.map(|q| format!(" #{q}")).unwrap_or_default(),
                s.side.label(),
                s.held_by,
                format::us(s.held_us),
                format::us(s.stretch_us),
                format::us(s.wait_us)
            );
            view! {
                <div class=format!("job-stretch rank-c{}", s.row % RANK_COLOURS) data-testid="job-path-stretch" data-rank=name.clone()
                    style:flex-grow=format!("{pct:.4}") title=title>
                    {label}
                </div>
            }
        })
        .collect_view();
    // Each rank once, with its time on the path.
    let mut ranks: Vec<(usize, String, f64)> = Vec::new();
    for s in &stretches {
        match ranks.iter_mut().find(|r| r.0 == s.row) {
            Some(r) => r.2 += s.stretch_us,
            None => ranks.push((s.row, who(s), s.stretch_us)),
        }
    }
    let legend = ranks
        .into_iter()
        .map(|(row, name, t)| view! { {swatch(format!("rank-c{}", row % RANK_COLOURS))}{format!("{name} {} ", format::us(t))} })
        .collect_view();
    view! {
        <figure class="job-strip" data-testid="job-path-strip">
            <figcaption>{format!("The job's critical path, stretch after stretch ({} in all), coloured by the rank that held \
                each (hover a stretch for its collective and what held it):", format::us(total))}</figcaption>
            <div class="job-strip-bar" role="img" aria-label="The job's critical path by stretch, coloured by the rank that held each">{marks}</div>
            <p class="legend">{legend}</p>
        </figure>
    }
}
