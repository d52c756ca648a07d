//! Before / after: what changed between two runs (two traces, or two sets of ranks, each
//! reduced to the mean per rank). Kernels and ops are matched by name over the full lists the
//! reports keep, so nothing outside a top-N table is missed.

use crate::analysis::rules::taxonomy::{Backend, Bucket};
use crate::report::TraceReport;
use crate::vocab::fmt_us;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// A change is reported when it is at least this share of the larger value...
pub const MIN_REL: f64 = 0.02;
/// ...and at least this many microseconds (per rank).
pub const MIN_ABS_US: f64 = 1.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Changed,
    New,
    Gone,
    Same,
}

/// One number in A and B (per rank).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub a_us: f64,
    pub b_us: f64,
    pub delta_us: f64,
    /// (B - A) / A in percent; None when A is 0.
    pub rel_pct: Option<f64>,
    pub status: Status,
}

impl Change {
    fn new(a: f64, b: f64) -> Change {
        let status = if a == 0.0 && b > 0.0 {
            Status::New
        } else if b == 0.0 && a > 0.0 {
            Status::Gone
        } else if (b - a).abs() >= MIN_ABS_US && (b - a).abs() >= MIN_REL * a.max(b) {
            Status::Changed
        } else {
            Status::Same
        };
        Change { a_us: a, b_us: b, delta_us: b - a, rel_pct: (a > 0.0).then(|| (b - a) / a * 100.0), status }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    StepTime,
    KernelTime,
    Busy,
    Idle,
    Span,
    Comm,
    ExposedComm,
}

impl Metric {
    pub fn label(self) -> &'static str {
        match self {
            Metric::StepTime => "step time (CPU, mean)",
            Metric::KernelTime => "GPU kernel time",
            Metric::Busy => "GPU busy",
            Metric::Idle => "GPU idle",
            Metric::Span => "GPU span",
            Metric::Comm => "communication",
            Metric::ExposedComm => "exposed communication",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricChange {
    pub metric: Metric,
    #[serde(flatten)]
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketChange {
    pub bucket: Bucket,
    #[serde(flatten)]
    pub change: Change,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NameChange {
    pub name: String,
    /// The bucket the name's time is in (in B, or in A when gone).
    pub bucket: Option<Bucket>,
    #[serde(flatten)]
    pub change: Change,
}

/// What changed from A to B.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    pub a_files: Vec<String>,
    pub b_files: Vec<String>,
    /// One line: which run is faster, by how much, and the changes behind it.
    pub verdict: String,
    pub metrics: Vec<MetricChange>,
    pub buckets: Vec<BucketChange>,
    pub backend_a: Backend,
    pub backend_b: Backend,
    /// Every kernel name that changed, appeared or disappeared, largest change first.
    pub kernels: Vec<NameChange>,
    /// Every launching op that changed, appeared or disappeared, largest change first.
    pub ops: Vec<NameChange>,
    /// Names present in both with no reportable change.
    pub unchanged_kernels: usize,
    pub unchanged_ops: usize,
}

/// Mean per trace of `f` over a set of traces.
fn mean(set: &[&TraceReport], f: impl Fn(&TraceReport) -> f64) -> f64 {
    if set.is_empty() {
        0.0
    } else {
        set.iter().map(|t| f(t)).sum::<f64>() / set.len() as f64
    }
}

fn step_mean(t: &TraceReport) -> Option<f64> {
    (!t.steps.is_empty()).then(|| t.steps.iter().map(|s| s.cpu_us).sum::<f64>() / t.steps.len() as f64)
}

/// The dominant attention backend of a set: the one with the most attention time.
fn backend(set: &[&TraceReport]) -> Backend {
    let mut time: FxHashMap<Backend, f64> = FxHashMap::default();
    for t in set {
        *time.entry(t.attention.backend).or_default() += t.attention.time_us;
    }
    time.into_iter()
        .filter(|(b, _)| *b != Backend::None)
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|x| x.0)
        .unwrap_or(Backend::None)
}

fn names(
    set: &[&TraceReport],
    rows: impl Fn(&TraceReport) -> Vec<(String, Option<Bucket>, f64)>,
) -> FxHashMap<String, (f64, Option<Bucket>, f64)> {
    // name -> (time per rank, bucket with the most time, that bucket's time)
    let mut m: FxHashMap<String, (f64, Option<Bucket>, f64)> = FxHashMap::default();
    let mut per_bucket: FxHashMap<(String, Option<Bucket>), f64> = FxHashMap::default();
    let n = set.len().max(1) as f64;
    for t in set {
        for (name, bucket, us) in rows(t) {
            m.entry(name.clone()).or_default().0 += us / n;
            *per_bucket.entry((name, bucket)).or_default() += us;
        }
    }
    for ((name, bucket), us) in per_bucket {
        let e = m.get_mut(&name).expect("every name was added");
        if e.1.is_none() || us > e.2 || (us == e.2 && bucket < e.1) {
            e.1 = bucket;
            e.2 = us;
        }
    }
    m
}

fn name_changes(
    a: FxHashMap<String, (f64, Option<Bucket>, f64)>,
    b: FxHashMap<String, (f64, Option<Bucket>, f64)>,
) -> (Vec<NameChange>, usize) {
    let mut all: Vec<&String> = a.keys().chain(b.keys()).collect();
    all.sort();
    all.dedup();
    let mut out = Vec::new();
    let mut same = 0;
    for n in all {
        let (ta, ba) = a.get(n).map(|x| (x.0, x.1)).unwrap_or((0.0, None));
        let (tb, bb) = b.get(n).map(|x| (x.0, x.1)).unwrap_or((0.0, None));
        let change = Change::new(ta, tb);
        if change.status == Status::Same {
            same += 1;
            continue;
        }
        out.push(NameChange { name: n.clone(), bucket: bb.or(ba), change });
    }
    out.sort_by(|x, y| y.change.delta_us.abs().total_cmp(&x.change.delta_us.abs()).then_with(|| x.name.cmp(&y.name)));
    (out, same)
}

/// Compares two runs. Each side is one trace or the ranks of one job (means per rank).
pub fn diff(a: &[TraceReport], b: &[TraceReport]) -> Diff {
    diff_refs(&a.iter().collect::<Vec<_>>(), &b.iter().collect::<Vec<_>>())
}

/// [`diff`] of traces picked out of a larger list (the page's sets A and B), without copies.
pub fn diff_refs(a: &[&TraceReport], b: &[&TraceReport]) -> Diff {
    let g = |f: fn(&TraceReport) -> f64| Change::new(mean(a, f), mean(b, f));
    let mut metrics = Vec::new();
    let steps_a: Vec<f64> = a.iter().filter_map(|t| step_mean(t)).collect();
    let steps_b: Vec<f64> = b.iter().filter_map(|t| step_mean(t)).collect();
    if steps_a.len() == a.len() && steps_b.len() == b.len() && !a.is_empty() && !b.is_empty() {
        let m = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        metrics.push(MetricChange { metric: Metric::StepTime, change: Change::new(m(&steps_a), m(&steps_b)) });
    }
    metrics.push(MetricChange { metric: Metric::KernelTime, change: g(|t| t.gpu.kernel_time_us) });
    metrics.push(MetricChange { metric: Metric::Busy, change: g(|t| t.gpu.busy_us) });
    metrics.push(MetricChange { metric: Metric::Idle, change: g(|t| t.gpu.idle_us) });
    metrics.push(MetricChange { metric: Metric::Span, change: g(|t| t.gpu.span_us) });
    metrics.push(MetricChange { metric: Metric::Comm, change: g(|t| t.gpu.comm_us) });
    metrics.push(MetricChange { metric: Metric::ExposedComm, change: g(|t| t.gpu.exposed_comm_us) });

    let bucket_time = |set: &[&TraceReport], id: Bucket| {
        mean(set, |t| t.buckets.iter().find(|x| x.id == id).map(|x| x.time_us).unwrap_or(0.0))
    };
    let mut buckets: Vec<BucketChange> = Bucket::ALL
        .iter()
        .map(|&id| BucketChange { bucket: id, change: Change::new(bucket_time(a, id), bucket_time(b, id)) })
        .filter(|c| c.change.a_us > 0.0 || c.change.b_us > 0.0)
        .collect();
    buckets.sort_by(|x, y| y.change.delta_us.abs().total_cmp(&x.change.delta_us.abs()).then(x.bucket.cmp(&y.bucket)));

    let kernel_rows = |t: &TraceReport| t.kernels.iter().map(|k| (k.name.clone(), Some(k.bucket), k.time_us)).collect();
    let op_rows = |t: &TraceReport| t.ops.iter().map(|o| (o.name.clone(), None, o.time_us)).collect();
    let (kernels, unchanged_kernels) = name_changes(names(a, kernel_rows), names(b, kernel_rows));
    let (ops, unchanged_ops) = name_changes(names(a, op_rows), names(b, op_rows));
    let (backend_a, backend_b) = (backend(a), backend(b));
    let mut d = Diff {
        a_files: a.iter().map(|t| t.file.clone()).collect(),
        b_files: b.iter().map(|t| t.file.clone()).collect(),
        verdict: String::new(),
        metrics,
        buckets,
        backend_a,
        backend_b,
        kernels,
        ops,
        unchanged_kernels,
        unchanged_ops,
    };
    d.verdict = verdict(&d);
    d
}

/// "B is 12.0% faster (step time 100 ms -> 88 ms): attention -30 ms (flash instead of math),
/// matmul (GEMM/conv) unchanged".
fn verdict(d: &Diff) -> String {
    let Some(head) = d.metrics.first() else { return String::new() };
    let c = &head.change;
    let what = format!("{} {} -> {}", head.metric.label(), fmt_us(c.a_us), fmt_us(c.b_us));
    let mut s = match (c.status, c.rel_pct) {
        (Status::Same, _) | (_, None) => format!("No measurable change ({what})"),
        (_, Some(r)) if r < 0.0 => format!("B is {:.1}% faster ({what})", -r),
        (_, Some(r)) => format!("B is {r:.1}% slower ({what})"),
    };
    let mut parts: Vec<String> = d
        .buckets
        .iter()
        .filter(|x| x.change.status != Status::Same)
        .take(3)
        .map(|x| {
            let mut p = format!(
                "{} {}{}",
                x.bucket.name(),
                if x.change.delta_us > 0.0 { "+" } else { "-" },
                fmt_us(x.change.delta_us.abs())
            );
            if x.bucket == Bucket::Attention && d.backend_a != d.backend_b {
                p.push_str(&format!(" ({} instead of {})", d.backend_b.id(), d.backend_a.id()));
            }
            p
        })
        .collect();
    if let Some(g) = d.buckets.iter().find(|x| x.bucket == Bucket::Gemm && x.change.status == Status::Same) {
        parts.push(format!("{} unchanged", g.bucket.name()));
    }
    if !parts.is_empty() {
        s.push_str(": ");
        s.push_str(&parts.join(", "));
    }
    s
}
