//! Pass 4, tables: buckets with the rules that matched, top kernels (per bucket), top ops.
//! Built from one map keyed by (kernel, launching op, bucket, why), filled per row; every sort
//! has a total order so the native and the wasm build give identical reports.

use super::steps::{pct, us};
use crate::analysis::model::attribution::NO;
use crate::analysis::model::classify::{why_label, Why};
use crate::analysis::model::frozen::{Agg, Model};
use crate::analysis::rules::taxonomy::Bucket;
use crate::report::{self, BucketEvidence, KernelTotal, NameTime, OpTotal, RuleHit, TopRow};
use rustc_hash::FxHashMap;

/// Picks the key with the most time (ties: smallest key), for "launched mostly by" columns.
fn argmax<K: Copy + Ord>(it: impl Iterator<Item = (K, i64)>) -> Option<K> {
    it.max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|(k, _)| k)
}

pub struct Tables {
    pub buckets: Vec<report::Bucket>,
    pub top_kernels: Vec<TopRow>,
    pub top_ops: Vec<TopRow>,
    pub kernels: Vec<KernelTotal>,
    pub ops: Vec<OpTotal>,
    pub evidence: BucketEvidence,
}

/// The rows' totals regrouped: per bucket, per (bucket, rule), per (kernel, bucket), and the
/// time each op launched per (kernel, bucket) and per bucket.
#[derive(Default)]
struct Groups {
    bucket: FxHashMap<Bucket, Agg>,
    rule: FxHashMap<(Bucket, Why), Agg>,
    kernel: FxHashMap<(u32, Bucket), Agg>,
    kernel_op: FxHashMap<(u32, Bucket, u32), i64>,
    op_bucket_time: FxHashMap<(u32, Bucket), i64>,
}

/// `facts` holds every GPU row name's parsed (demangled) name, worked out once in the build.
pub fn tables(m: &Model) -> Tables {
    let g = groups(m);
    let buckets = buckets(m, &g);
    let evidence = evidence(&g);
    let Groups { kernel, kernel_op, op_bucket_time, .. } = g;
    let (kernels, top_kernels) = kernel_tables(m, kernel, &kernel_op);
    let (ops, top_ops) = op_tables(m, &op_bucket_time);
    Tables { buckets, top_kernels, top_ops, kernels, ops, evidence }
}

/// The rows' time by the kind of rule that bucketed them.
fn evidence(g: &Groups) -> BucketEvidence {
    // Summed in ns and converted once (a sum of microseconds prints float noise).
    let mut ns = [0i64; 5];
    for (&(_, why), a) in &g.rule {
        ns[match why {
            Why::Op { .. } | Why::LeafOp(_) | Why::Eager(_) | Why::Routing(_) => 0,
            Why::Kernel(_) => 1,
            Why::CopyRow(_) => 2,
            Why::User(_) => 3,
            Why::Unmatched => 4,
        }] += a.ns;
    }
    let [op_context_us, kernel_name_us, row_kind_us, user_rule_us, unmatched_us] = ns.map(us);
    BucketEvidence { op_context_us, kernel_name_us, row_kind_us, user_rule_us, unmatched_us }
}

fn groups(m: &Model) -> Groups {
    let mut g = Groups::default();
    for (&(kernel, op, bucket, why), a) in &m.sums.rows {
        g.bucket.entry(bucket).or_default().merge(a);
        g.rule.entry((bucket, why)).or_default().merge(a);
        g.kernel.entry((kernel, bucket)).or_default().merge(a);
        if op != NO {
            *g.kernel_op.entry((kernel, bucket, op)).or_default() += a.ns;
            *g.op_bucket_time.entry((op, bucket)).or_default() += a.ns;
        }
    }
    g
}

/// Most time first, ties by name.
fn by_time_then_name(m: &Model, x: &(u32, Agg), y: &(u32, Agg)) -> std::cmp::Ordering {
    y.1.ns.cmp(&x.1.ns).then_with(|| m.c.names.get(x.0).cmp(m.c.names.get(y.0)))
}

/// One entry per bucket with time: the rules that matched in it and its five largest kernels.
fn buckets(m: &Model, g: &Groups) -> Vec<report::Bucket> {
    let (names, facts, opts, total_ns) = (&m.c.names, m.facts, m.opts, m.sums.total_ns);
    let mut buckets: Vec<report::Bucket> = Bucket::ALL
        .iter()
        .filter_map(|&b| {
            let a = g.bucket.get(&b).copied()?;
            let mut matched: Vec<RuleHit> = g
                .rule
                .iter()
                .filter(|((bb, _), _)| *bb == b)
                .map(|((_, w), a)| RuleHit {
                    rule: why_label(*w, names, &opts.rules),
                    time_us: us(a.ns),
                    count: a.count,
                })
                .collect();
            matched.sort_by(|x, y| y.time_us.total_cmp(&x.time_us).then_with(|| x.rule.cmp(&y.rule)));
            let mut tops: Vec<(u32, Agg)> =
                g.kernel.iter().filter(|((_, bb), _)| *bb == b).map(|((n, _), a)| (*n, *a)).collect();
            tops.sort_by(|x, y| by_time_then_name(m, x, y));
            let top_names = tops
                .iter()
                .take(5)
                .map(|(n, a)| NameTime {
                    name: facts[n].name.full.clone(),
                    short: facts[n].name.short.clone(),
                    time_us: us(a.ns),
                    count: a.count,
                })
                .collect();
            Some(report::Bucket {
                id: b,
                name: b.name().to_string(),
                time_us: us(a.ns),
                pct: pct(a.ns, total_ns),
                count: a.count,
                rule: b.definition(),
                matched,
                top_names,
            })
        })
        .collect();
    buckets.sort_by(|x, y| y.time_us.total_cmp(&x.time_us).then_with(|| x.id.cmp(&y.id)));
    buckets
}

/// Every kernel's total, and the top kernels: one row per (kernel, bucket), with the op that
/// launched it most.
fn kernel_tables(
    m: &Model,
    kernel_agg: FxHashMap<(u32, Bucket), Agg>,
    kernel_op: &FxHashMap<(u32, Bucket, u32), i64>,
) -> (Vec<KernelTotal>, Vec<TopRow>) {
    let (names, facts, total_ns) = (&m.c.names, m.facts, m.sums.total_ns);
    let mut kernels: Vec<((u32, Bucket), Agg)> = kernel_agg.into_iter().collect();
    kernels.sort_by(|x, y| {
        y.1.ns.cmp(&x.1.ns).then_with(|| names.get(x.0 .0).cmp(names.get(y.0 .0))).then(x.0 .1.cmp(&y.0 .1))
    });
    let top_kernels = kernels
        .iter()
        .take(m.opts.top_n)
        .map(|((n, b), a)| {
            let op = argmax(
                kernel_op.iter().filter(|((k, bb, _), _)| k == n && bb == b).map(|((_, _, o), t)| (names.get(*o), *t)),
            )
            .map(str::to_string);
            top_row(&facts[n].name.full, facts[n].name.short.clone(), a, total_ns, op, *b)
        })
        .collect();
    let kernels = kernels
        .iter()
        .map(|((n, b), a)| KernelTotal {
            name: facts[n].name.full.clone(),
            bucket: *b,
            time_us: us(a.ns),
            count: a.count,
        })
        .collect();
    (kernels, top_kernels)
}

/// Every leaf op's total and the top ops, by the GPU time they launched, each with the parent
/// and the bucket that most of its time went to.
fn op_tables(m: &Model, op_bucket_time: &FxHashMap<(u32, Bucket), i64>) -> (Vec<OpTotal>, Vec<TopRow>) {
    let (tree, names, total_ns) = (&m.at.ops, &m.c.names, m.sums.total_ns);
    let mut op_agg: FxHashMap<u32, Agg> = FxHashMap::default();
    let mut op_parent: FxHashMap<(u32, u32), i64> = FxHashMap::default();
    for (i, &ns) in m.sums.op_gpu.iter().enumerate() {
        if ns == 0 {
            continue;
        }
        let o = tree.spans[i];
        op_agg.entry(o.name).or_default().add(ns);
        let p = tree.parent[i];
        if p != NO {
            *op_parent.entry((o.name, tree.spans[p as usize].name)).or_default() += ns;
        }
    }
    let mut ops: Vec<(u32, Agg)> = op_agg.into_iter().collect();
    ops.sort_by(|x, y| by_time_then_name(m, x, y));
    let top_ops = ops
        .iter()
        .take(m.opts.top_n)
        .map(|(n, a)| {
            let parent = argmax(op_parent.iter().filter(|((o, _), _)| o == n).map(|((_, p), t)| (names.get(*p), *t)))
                .map(str::to_string);
            let bucket = argmax(op_bucket_time.iter().filter(|((o, _), _)| o == n).map(|((_, b), t)| (*b, *t)))
                .unwrap_or(Bucket::Other);
            top_row(names.get(*n), names.get(*n).to_string(), a, total_ns, parent, bucket)
        })
        .collect();
    let ops = ops
        .iter()
        .map(|(n, a)| OpTotal { name: names.get(*n).to_string(), time_us: us(a.ns), count: a.count })
        .collect();
    (ops, top_ops)
}

fn top_row(name: &str, short: String, a: &Agg, total_ns: i64, op: Option<String>, bucket: Bucket) -> TopRow {
    TopRow {
        name: name.to_string(),
        short,
        time_us: us(a.ns),
        pct: pct(a.ns, total_ns),
        count: a.count,
        mean_us: if a.count > 0 { us(a.ns) / a.count as f64 } else { 0.0 },
        max_us: us(a.max),
        op,
        bucket,
    }
}
