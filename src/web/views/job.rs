//! Several traces: the ranks of one job side by side (table, chart, spread, straggler and the
//! collectives that waited).

use super::critical_path::JobPath;
use super::widgets::{csv_button, swatch};
use crate::report::{JobView, MatchedCollective, MetricSpread, RankMetric, RankRow};
use crate::web::format;
use leptos::prelude::*;
use std::sync::Arc;

fn rank_name(rows: &[RankRow], row: usize) -> String {
    match rows.get(row) {
        Some(r) => r.rank.map(|x| format!("rank {x}")).unwrap_or_else(|| r.file.clone()),
        None => "–".into(),
    }
}

const BAR_W: f64 = 460.0;
const LABEL_W: f64 = 90.0;
/// Row height up to 16 ranks; more ranks share `MANY_H` (down to `MIN_H` a row), so 128
/// ranks stay one screen high.
const ROW_H: f64 = 24.0;
const MANY_H: f64 = 400.0;
const MIN_H: f64 = 3.0;
/// Labels are at least this far apart; rows in between are named on hover.
const LABEL_GAP: f64 = 14.0;

/// Per rank, the GPU span split into busy work, time waiting in collectives, and idle.
#[component]
fn RankChart(rows: Vec<RankRow>) -> impl IntoView {
    let max = rows.iter().map(|r| r.span_us).fold(0.0, f64::max);
    let scale = if max > 0.0 { BAR_W / max } else { 0.0 };
    let row_h = if rows.len() <= 16 { ROW_H } else { (MANY_H / rows.len() as f64).max(MIN_H) };
    let label_every = (LABEL_GAP / row_h).ceil().max(1.0) as usize;
    let pad = if row_h >= ROW_H { 3.0 } else { row_h * 0.1 };
    // Room above the first row and below the last for a label taller than its row.
    let top = if row_h < LABEL_GAP { LABEL_GAP / 2.0 } else { 2.0 };
    let height = row_h * rows.len() as f64 + 2.0 * top;
    let bars = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let y = i as f64 * row_h + top;
            let wait = r.wait_us.min(r.busy_us);
            let work = (r.busy_us - wait) * scale;
            let wait_w = wait * scale;
            let idle = r.idle_us * scale;
            let label = r.rank.map(|x| format!("rank {x}")).unwrap_or_else(|| format!("file {}", i + 1));
            let title = format!(
                "{label}: busy {} (waiting in collectives {}), idle {}",
                format::us(r.busy_us),
                format::us(r.wait_us),
                format::us(r.idle_us)
            );
            view! {
                <g>
                    <title>{title}</title>
                    {(i % label_every == 0).then(|| view! { <text class="label" x=LABEL_W - 8.0 y=y + row_h / 2.0>{label}</text> })}
                    <rect class="seg work" x=LABEL_W y=y + pad width=work height=row_h - 2.0 * pad />
                    <rect class="seg wait" x=LABEL_W + work y=y + pad width=wait_w height=row_h - 2.0 * pad />
                    <rect class="seg idle" x=LABEL_W + work + wait_w y=y + pad width=idle height=row_h - 2.0 * pad />
                </g>
            }
        })
        .collect_view();
    view! {
        <svg class="ranks-chart" viewBox=format!("0 0 {} {height}", LABEL_W + BAR_W + 10.0) role="img"
             aria-label="GPU span per rank: busy work, waiting in collectives, idle">
            {bars}
        </svg>
        <p class="legend muted">
            {swatch("seg-work")}"busy (working) "
            {swatch("seg-wait")}"waiting for other ranks in collectives "
            {swatch("seg-idle")}"idle"
        </p>
    }
}

/// A column the ranks table can be sorted by.
#[derive(Clone, Copy, PartialEq)]
enum RankCol {
    Rank,
    Metric(RankMetric),
    Waited,
    Mfu,
}

impl RankCol {
    const ALL: [RankCol; 9] = [
        RankCol::Rank,
        RankCol::Metric(RankMetric::Busy),
        RankCol::Metric(RankMetric::Idle),
        RankCol::Metric(RankMetric::Compute),
        RankCol::Metric(RankMetric::Comm),
        RankCol::Metric(RankMetric::ExposedComm),
        RankCol::Metric(RankMetric::Step),
        RankCol::Waited,
        RankCol::Mfu,
    ];

    fn label(self) -> &'static str {
        match self {
            RankCol::Rank => "Rank",
            RankCol::Metric(RankMetric::Busy) => "Busy",
            RankCol::Metric(RankMetric::Idle) => "Idle",
            RankCol::Metric(RankMetric::Compute) => "Compute",
            RankCol::Metric(RankMetric::Comm) => "Comm",
            RankCol::Metric(RankMetric::ExposedComm) => "Exposed comm",
            RankCol::Metric(RankMetric::Step) => "Step",
            RankCol::Waited => "Waited",
            RankCol::Mfu => "MFU",
        }
    }

    /// The row's value in this column (rows without a rank keep their place at the end).
    fn value(self, r: &RankRow, row: usize) -> Option<f64> {
        match self {
            RankCol::Rank => Some(r.rank.map_or(f64::MAX - row as f64, |x| x as f64)),
            RankCol::Metric(m) => m.of(r),
            RankCol::Waited => Some(r.wait_us),
            RankCol::Mfu => r.mfu_pct,
        }
    }
}

/// Row indices in the table's order: by `col`, rows without a value last, then by row.
fn rank_order(rows: &[RankRow], col: RankCol, desc: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (col.value(&rows[a], a), col.value(&rows[b], b));
        let by_value = match (x, y) {
            (Some(x), Some(y)) if desc => y.total_cmp(&x),
            (Some(x), Some(y)) => x.total_cmp(&y),
            (x, y) => x.is_none().cmp(&y.is_none()),
        };
        by_value.then(a.cmp(&b))
    });
    order
}

/// One rank's row.
fn rank_row(r: &RankRow, straggler: bool) -> impl IntoView {
    let flags: Vec<&str> = r.outlier.iter().map(|m| m.label()).collect();
    let buckets_title =
        r.top_buckets.iter().map(|(b, p)| format!("{} {}", b.name(), format::pct(*p))).collect::<Vec<_>>().join(" · ");
    let top_bucket = r.top_buckets.first().map(|(b, p)| format!("{} {:.0}%", b.id(), p)).unwrap_or_default();
    view! {
        <tr class:outlier=!flags.is_empty() class:straggler=straggler>
            <th scope="row" title=r.file.clone()>{r.rank.map_or_else(|| r.file.clone(), |x| x.to_string())}</th>
            <td class="num">{format::us(r.busy_us)}</td>
            <td class="num">{format::us(r.idle_us)}</td>
            <td class="num">{format::us(r.compute_us)}</td>
            <td class="num">{format::us(r.comm_us)}</td>
            <td class="num">{format::us(r.exposed_comm_us)}</td>
            <td class="num">{r.step_us.map(format::us).unwrap_or_else(|| "–".into())}</td>
            <td class="num">{format::us(r.wait_us)}</td>
            <td class="num" title="measured FLOPs over the rank's GPU span, against its device's peak">{r.mfu_pct.map_or_else(|| "–".into(), format::pct)}</td>
            <td title=buckets_title>{top_bucket}</td>
            <td>
                {straggler.then(|| view! { <span class="badge sev-critical">"straggler"</span>" " })}
                {(!flags.is_empty()).then(|| view! { <span class="badge sev-warning">{format!("outlier: {}", flags.join(", "))}</span> })}
            </td>
        </tr>
    }
}

/// The ranks table, sortable by any number column (sorting moves the rows, it does not
/// redraw them).
#[component]
fn RankTable(rows: Arc<Vec<RankRow>>, straggler: Option<usize>) -> impl IntoView {
    let sort = RwSignal::new((RankCol::Rank, false));
    let many = rows.len() > 16;
    let order = {
        let rows = rows.clone();
        move || {
            let (col, desc) = sort.get();
            rank_order(&rows, col, desc)
        }
    };
    let header = move |col: RankCol| {
        let aria = move || match sort.get() {
            (c, true) if c == col => "descending",
            (c, false) if c == col => "ascending",
            _ => "none",
        };
        view! {
            <th scope="col" class:num=col != RankCol::Rank aria-sort=aria>
                <button type="button" class="sort" on:click=move |_| sort.update(|s| {
                    // Numbers sort largest first: the rank to look at is on top.
                    *s = if s.0 == col { (col, !s.1) } else { (col, col != RankCol::Rank) };
                })>
                    {col.label()}
                    <span class="arrow" aria-hidden="true">{move || match aria() { "descending" => "▼", "ascending" => "▲", _ => "" }}</span>
                </button>
            </th>
        }
    };
    view! {
        // Many ranks: the table scrolls under its header, so the job summary below stays near.
        <div class="scroll" class:tall=many>
        <table class="data" data-testid="ranks">
            <thead><tr>
                {RankCol::ALL.into_iter().map(header).collect_view()}
                <th scope="col">"Top bucket"</th><th scope="col">"Flags"</th>
            </tr></thead>
            <tbody>
                <For each=order key=|i| *i children=move |i| rank_row(&rows[i], straggler == Some(i)) />
            </tbody>
        </table>
        </div>
    }
}

/// The rank that arrived last most often, and the waiting it caused.
fn straggler_text(rows: &[RankRow], j: &JobView) -> Option<String> {
    j.straggler.map(|s| {
        let w = &j.waits[s];
        format!(
            "{} arrived last at {} collectives and made the other ranks wait {} in all.",
            rank_name(rows, s),
            w.last_count,
            format::us(w.caused_us)
        )
    })
}

/// The ranks of one job.
#[component]
pub fn JobSection(rows: Vec<RankRow>, job: Option<JobView>, csv: Callback<(), String>) -> impl IntoView {
    let straggler = job.as_ref().and_then(|j| j.straggler);
    let rows = Arc::new(rows);
    let job_part = job.map(|j| view! { <JobFindings job=j rows=rows.clone() /> });
    view! {
        <section class="panel" aria-labelledby="ranks-h">
            <h2 id="ranks-h">"Ranks " {csv_button("ranks.csv".into(), move || csv.run(()))}</h2>
            <RankChart rows=rows.to_vec() />
            <RankTable rows=rows straggler=straggler />
            {job_part}
        </section>
    }
}

/// What the ranks say as one job: the verdict, the straggler, the spread of each metric, the
/// collectives that waited and the job's critical path.
#[component]
fn JobFindings(job: JobView, rows: Arc<Vec<RankRow>>) -> impl IntoView {
    let j = job;
    let verdict = if j.one_job {
        format!(
            "{} ranks{}, one job.",
            rows.len(),
            j.world_size.map(|w| format!(" of world size {w}")).unwrap_or_default()
        )
    } else {
        "These files are not the ranks of one job.".to_string()
    };
    let spread = view! { <SpreadTable metrics=j.metrics.clone() rows=rows.clone() /> };
    let straggler = straggler_text(&rows, &j);
    let how =
        if j.matched_by_seq { "matched by sequence number" } else { "matched by order of name per process group" };
    let colls = (!j.collectives.is_empty()).then(|| {
        view! { <CollectivesTable collectives=j.collectives.clone() how=how unmatched=j.unmatched rows=rows.clone() /> }
    });
    let job_path = (j.critical_path_len() > 0)
        .then(|| view! { <JobPath stretches=j.critical_path.clone() not_carried=j.critical_path_not_carried /> });
    view! {
        <p data-testid="job-verdict"><strong>{verdict}</strong></p>
        {(!j.notes.is_empty()).then(|| view! { <ul class="muted">{j.notes.iter().map(|n| view! { <li>{n.clone()}</li> }).collect_view()}</ul> })}
        {straggler.map(|s| view! { <p class="notice warning" data-testid="straggler">{s}</p> })}
        {spread}
        {colls}
        {job_path}
    }
}

/// Each metric's spread across the ranks: least, median, most, and the outliers.
#[component]
fn SpreadTable(metrics: Vec<MetricSpread>, rows: Arc<Vec<RankRow>>) -> impl IntoView {
    let spread = metrics
        .iter()
        .map(|m| {
            view! {
                <tr>
                    <th scope="row">{m.metric.label()}</th>
                    <td class="num">{format!("{} ({})", format::us(m.min), rank_name(&rows, m.min_row))}</td>
                    <td class="num">{format::us(m.median)}</td>
                    <td class="num">{format!("{} ({})", format::us(m.max), rank_name(&rows, m.max_row))}</td>
                    <td>{m.outliers.iter().map(|&i| rank_name(&rows, i)).collect::<Vec<_>>().join(", ")}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="scroll">
        <table class="data" data-testid="rank-spread">
            <caption>"Spread across ranks"</caption>
            <thead><tr><th scope="col">"Metric"</th><th scope="col" class="num">"Min"</th><th scope="col" class="num">"Median"</th>
                <th scope="col" class="num">"Max"</th><th scope="col">"Outliers"</th></tr></thead>
            <tbody>{spread}</tbody>
        </table>
        </div>
    }
}

/// The collectives matched across the ranks, most waiting first (the first
/// `COLLECTIVES_SHOWN`).
#[component]
fn CollectivesTable(
    collectives: Vec<MatchedCollective>,
    /// How the ranks' calls were matched.
    how: &'static str,
    /// Collectives seen on one rank only.
    unmatched: u64,
    rows: Arc<Vec<RankRow>>,
) -> impl IntoView {
    let colls = collectives
        .iter()
        .take(crate::analysis::job::ranks::COLLECTIVES_SHOWN)
        .map(|c| {
            view! {
                <tr>
                    <td>{c.name.clone()}</td>
                    <td class="num">{c.seq.unwrap_or(c.index)}</td>
                    <td class="num">{c.ranks}</td>
                    <td class="num">{format::us(c.transfer_us)}</td>
                    <td class="num">{format::us(c.wait_us)}</td>
                    <td class="num">{format::us(c.skew_us)}</td>
                    <td class="num">{c.algbw_gbps.map(|b| format!("{b:.1} GB/s")).unwrap_or_else(|| "–".into())}</td>
                    <td class="num">{c.busbw_gbps().map(|b| format!("{b:.1} GB/s")).unwrap_or_else(|| "–".into())}</td>
                    <td>{rank_name(&rows, c.last_row)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="scroll">
        <table class="data" data-testid="collectives">
            <caption>{format!("Collectives across ranks, most waiting first ({how}; {} on one rank only)", unmatched)}</caption>
            <thead><tr><th scope="col">"Collective"</th><th scope="col" class="num">"#"</th><th scope="col" class="num">"Ranks"</th>
                <th scope="col" class="num">"Transfer"</th><th scope="col" class="num">"Waited (all ranks)"</th>
                <th scope="col" class="num">"Start skew"</th><th scope="col" class="num">"Alg. bandwidth"</th><th scope="col" class="num" title="algorithm bandwidth x NCCL's factor for the collective (nccl-tests)">"Bus bandwidth"</th><th scope="col">"Last to arrive"</th></tr></thead>
            <tbody>{colls}</tbody>
        </table>
        </div>
    }
}
