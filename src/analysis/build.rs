//! From collected records to the Report: attribution (kernel -> launch -> op chain), buckets,
//! attention backend, time metrics, steps, top tables. Every sum runs in record order and every
//! sort has a total order, so the native and the wasm build produce identical reports.

use super::collect::{Collector, GpuKind, GpuRow, OpRow, RuntimeCall, NAME_DATALOADER, NAME_STEP, NONE};
use super::intervals::{self, Span};
use super::names::{self, Backend, Bucket, OpContext, Tokens, BUCKETS};
use super::Options;
use crate::report::*;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;

const NO: u32 = u32::MAX;

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Why a GPU row went to its bucket.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Rule {
    /// An enclosing op (name id) set the context.
    Chain(u32),
    Kernel(&'static str),
    LeafOp(&'static str),
    CopyRow,
    Unmatched,
}

/// The op tree of one trace, reduced to the ops that matter: the ops that launched GPU work,
/// their ancestors, ProfilerStep and DataLoader spans. A trace has millions of ops that launch
/// nothing; dropping them before building the per-op arrays keeps memory bounded.
struct OpTree {
    ops: Vec<OpRow>,
    /// Innermost attention op at or above each op.
    attention: Vec<u32>,
    /// Innermost collective op at or above each op.
    collective: Vec<u32>,
    /// Innermost other context op (optimizer, embedding, dropout, rope, softmax).
    context: Vec<u32>,
    parent: Vec<u32>,
    op_context: Vec<Option<OpContext>>,
}

/// Where each GPU row was launched from.
struct Launch {
    /// Index into the sorted runtime calls, or NO.
    runtime: Vec<u32>,
    /// Index into `OpTree::ops` of the launching (leaf) op, or NO.
    leaf: Vec<u32>,
}

fn sorted_find(v: &[(i64, u32)], key: i64) -> u32 {
    match v.binary_search_by_key(&key, |x| x.0) {
        Ok(i) => v[i].1,
        Err(_) => NO,
    }
}

impl OpTree {
    fn new(mut ops: Vec<OpRow>, names: &super::collect::Interner, gpu: &[GpuRow], runtime: &[RuntimeCall]) -> (OpTree, Launch) {
        ops.sort_unstable_by_key(|o| (o.thread, o.start, Reverse(o.end), o.name, o.external));
        let n = ops.len();

        // Parents by time containment on each thread.
        let mut parent = vec![NO; n];
        let mut thread_range: FxHashMap<u32, (usize, usize)> = FxHashMap::default();
        let mut stack: Vec<u32> = Vec::new();
        let mut range_start = 0;
        for i in 0..n {
            let op = ops[i];
            if i > 0 && ops[i - 1].thread != op.thread {
                thread_range.insert(ops[i - 1].thread, (range_start, i));
                range_start = i;
                stack.clear();
            }
            while let Some(&top) = stack.last() {
                let t = ops[top as usize];
                if t.end >= op.end && t.start <= op.start && t.end > op.start {
                    break;
                }
                stack.pop();
            }
            parent[i] = stack.last().copied().unwrap_or(NO);
            stack.push(i as u32);
        }
        if n > 0 {
            thread_range.insert(ops[n - 1].thread, (range_start, n));
        }
        let containing = |thread: u32, t: i64| -> u32 {
            let Some(&(lo, hi)) = thread_range.get(&thread) else { return NO };
            let k = ops[lo..hi].partition_point(|o| o.start <= t);
            if k == 0 {
                return NO;
            }
            let mut i = (lo + k - 1) as u32;
            while i != NO {
                let o = &ops[i as usize];
                if o.start <= t && t <= o.end {
                    return i;
                }
                i = parent[i as usize];
            }
            NO
        };

        // The External ids launches refer to, and the ops that carry them.
        let runtime_of: Vec<u32> = gpu
            .iter()
            .map(|row| {
                if row.correlation == NONE {
                    return NO;
                }
                runtime.binary_search_by_key(&row.correlation, |r| r.correlation).map(|i| i as u32).unwrap_or(NO)
            })
            .collect();
        let mut wanted: Vec<i64> = gpu
            .iter()
            .zip(&runtime_of)
            .flat_map(|(row, &r)| [if r == NO { NONE } else { runtime[r as usize].external }, row.external])
            .filter(|&e| e != NONE)
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut by_external: Vec<(i64, u32)> = ops
            .iter()
            .enumerate()
            .filter(|(_, o)| o.external != NONE && wanted.binary_search(&o.external).is_ok())
            .map(|(i, o)| (o.external, i as u32))
            .collect();
        by_external.sort_unstable();
        by_external.dedup_by_key(|x| x.0);
        drop(wanted);

        // Leaf op per GPU row: the launch's External id, else the innermost op around the
        // launch call on its thread, else the row's own External id.
        let mut leaf: Vec<u32> = gpu
            .iter()
            .zip(&runtime_of)
            .map(|(row, &r)| {
                let mut l = NO;
                if r != NO {
                    let call = runtime[r as usize];
                    if call.external != NONE {
                        l = sorted_find(&by_external, call.external);
                    }
                    if l == NO {
                        l = containing(call.thread, call.start);
                    }
                }
                if l == NO && row.external != NONE {
                    l = sorted_find(&by_external, row.external);
                }
                l
            })
            .collect();
        drop(by_external);

        // Keep launching ops, their ancestors, and the spans the report reads by name.
        let mut keep = vec![false; n];
        let mut keep_with_ancestors = |mut i: u32| {
            while i != NO && !keep[i as usize] {
                keep[i as usize] = true;
                i = parent[i as usize];
            }
        };
        for (i, o) in ops.iter().enumerate() {
            if names.is(o.name, NAME_STEP) || (parent[i] == NO && names.is(o.name, NAME_DATALOADER)) {
                keep_with_ancestors(i as u32);
            }
        }
        for &l in &leaf {
            keep_with_ancestors(l);
        }
        let mut remap = vec![NO; n];
        let mut kept = 0u32;
        for i in 0..n {
            if keep[i] {
                remap[i] = kept;
                kept += 1;
            }
        }
        drop(keep);
        let mut compact_ops = Vec::with_capacity(kept as usize);
        let mut compact_parent = Vec::with_capacity(kept as usize);
        for i in 0..n {
            if remap[i] != NO {
                compact_ops.push(ops[i]);
                // Ancestors of kept ops are kept, so a kept op's parent always has a new index.
                compact_parent.push(if parent[i] == NO { NO } else { remap[parent[i] as usize] });
            }
        }
        for l in leaf.iter_mut() {
            if *l != NO {
                *l = remap[*l as usize];
            }
        }
        drop((ops, parent, remap));

        let ops = compact_ops;
        let parent = compact_parent;
        let op_context: Vec<Option<OpContext>> = names.names.iter().map(|n| names::op_context(n)).collect();
        let m = ops.len();
        let (mut attention, mut collective, mut context) = (vec![NO; m], vec![NO; m], vec![NO; m]);
        // Sorted order puts parents before children, so one pass inherits from ancestors.
        for i in 0..m {
            let p = parent[i];
            let inherit = |v: &Vec<u32>| if p == NO { NO } else { v[p as usize] };
            let ctx = op_context[ops[i].name as usize];
            attention[i] = if ctx == Some(OpContext::Attention) { i as u32 } else { inherit(&attention) };
            collective[i] = if ctx == Some(OpContext::Collective) { i as u32 } else { inherit(&collective) };
            context[i] = match ctx {
                Some(OpContext::Attention | OpContext::Collective) | None => inherit(&context),
                Some(_) => i as u32,
            };
        }
        (OpTree { ops, attention, collective, context, parent, op_context }, Launch { runtime: runtime_of, leaf })
    }
}

/// What a kernel name says: its bucket rule, attention backend, and tensor-core use.
type KernelFacts = (Option<(Bucket, &'static str)>, Option<Backend>, Option<bool>);

/// A ProfilerStep window on the CPU.
struct StepWindow {
    name: String,
    start: i64,
    end: i64,
}

fn step_windows(tree: &OpTree, names: &super::collect::Interner) -> Vec<StepWindow> {
    let mut steps: Vec<StepWindow> = Vec::new();
    let mut index: FxHashMap<u32, usize> = FxHashMap::default();
    for o in &tree.ops {
        if !names.is(o.name, NAME_STEP) {
            continue;
        }
        let name = names.get(o.name);
        match index.get(&o.name) {
            Some(&k) => {
                steps[k].start = steps[k].start.min(o.start);
                steps[k].end = steps[k].end.max(o.end);
            }
            None => {
                index.insert(o.name, steps.len());
                steps.push(StepWindow { name: name.to_string(), start: o.start, end: o.end });
            }
        }
    }
    steps.sort_by(|a, b| (a.start, a.end, &a.name).cmp(&(b.start, b.end, &b.name)));
    steps
}

fn step_of(steps: &[StepWindow], t: i64) -> u32 {
    let k = steps.partition_point(|s| s.start <= t);
    // Steps do not overlap in practice; check the latest one that started, then its neighbour.
    for i in (k.saturating_sub(2)..k).rev() {
        if steps[i].start <= t && t <= steps[i].end {
            return i as u32;
        }
    }
    NO
}

/// Interval metrics over a set of GPU rows.
#[derive(Default)]
struct Lanes {
    all: Vec<Span>,
    compute: Vec<Span>,
    comm: Vec<Span>,
    memory: Vec<Span>,
    kernel_ns: i64,
    count: u64,
}

impl Lanes {
    fn add(&mut self, row: &GpuRow, bucket: Bucket) {
        let span = (row.start, row.start + row.dur);
        self.all.push(span);
        self.kernel_ns += row.dur;
        self.count += 1;
        if row.kind != GpuKind::Kernel {
            self.memory.push(span);
        } else if bucket == Bucket::Collective {
            self.comm.push(span);
        } else {
            self.compute.push(span);
        }
    }

    fn time(self) -> GpuTime {
        self.time_and_gaps().0
    }

    /// The metrics, plus the gaps between busy intervals longer than 50 us (host-side waits:
    /// count and total), read off the same union.
    fn time_and_gaps(self) -> (GpuTime, (u64, i64)) {
        let first = self.all.iter().map(|s| s.0).min().unwrap_or(0);
        let last = self.all.iter().map(|s| s.1).max().unwrap_or(0);
        let all = intervals::union(self.all);
        let compute = intervals::union(self.compute);
        let comm = intervals::union(self.comm);
        let memory = intervals::union(self.memory);
        let busy = intervals::total(&all);
        let mut gaps = (0u64, 0i64);
        for w in all.windows(2) {
            let gap = w[1].0 - w[0].1;
            if gap > 50_000 {
                gaps.0 += 1;
                gaps.1 += gap;
            }
        }
        let span = last - first;
        let comm_ns = intervals::total(&comm);
        let overlap = intervals::intersection(&comm, &compute);
        let time = GpuTime {
            kernel_time_us: us(self.kernel_ns),
            busy_us: us(busy),
            span_us: us(span),
            idle_us: us(span - busy),
            compute_us: us(intervals::total(&compute)),
            comm_us: us(comm_ns),
            exposed_comm_us: us(comm_ns - overlap),
            overlap_pct: pct(overlap, comm_ns),
            memory_us: us(intervals::total(&memory)),
            kernel_count: self.count,
            est_sm_efficiency_pct: None,
            achieved_occupancy_pct: None,
        };
        (time, gaps)
    }
}

#[derive(Default, Clone, Copy)]
struct Agg {
    ns: i64,
    count: u64,
    max: i64,
}

impl Agg {
    fn add(&mut self, ns: i64) {
        self.ns += ns;
        self.count += 1;
        self.max = self.max.max(ns);
    }
    fn merge(&mut self, o: &Agg) {
        self.ns += o.ns;
        self.count += o.count;
        self.max = self.max.max(o.max);
    }
}

/// Picks the key with the most time (ties: smallest key), for "launched mostly by" columns.
fn argmax<K: Copy + Ord>(it: impl Iterator<Item = (K, i64)>) -> Option<K> {
    it.max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|(k, _)| k)
}

pub struct Built {
    pub gpu: GpuTime,
    pub devices: Vec<DeviceTime>,
    pub buckets: Vec<super::super::report::Bucket>,
    pub attention: Attention,
    pub top_kernels: Vec<TopRow>,
    pub top_ops: Vec<TopRow>,
    pub steps: Vec<Step>,
    pub launch: LaunchStats,
    pub extra: Extra,
}

/// Numbers the hints and diagnostics read that are not fields of the report.
pub struct Extra {
    pub unattributed: (u64, i64),
    pub dangling_correlation: u64,
    pub gemm_simt_ns: i64,
    pub gemm_ns: i64,
    pub dataloader_ns: i64,
    pub cpu_step_ns: i64,
    pub idle_gaps: (u64, i64),
}

pub fn build(c: &mut Collector, opts: &Options) -> Built {
    let names = &c.names;
    let mut runtime = std::mem::take(&mut c.runtime);
    runtime.sort_unstable_by_key(|r| (r.correlation, r.start, r.thread));
    let (tree, launches) = OpTree::new(std::mem::take(&mut c.ops), names, &c.gpu, &runtime);
    let steps = step_windows(&tree, names);

    // Per-name cache: classification runs once per distinct name, not per event.
    let mut kernel_rule_cache: FxHashMap<u32, KernelFacts> = FxHashMap::default();

    let mut lanes = Lanes::default();
    let mut device_lanes: Vec<(i32, Lanes)> = Vec::new();
    let mut step_lanes: Vec<Lanes> = (0..steps.len()).map(|_| Lanes::default()).collect();
    // One map per row on the hot path; every per-bucket / per-kernel / per-op table is
    // derived from it afterwards (a few hundred distinct keys).
    let mut rows_by_key: FxHashMap<(u32, u32, Bucket, Rule), Agg> = FxHashMap::default();
    let mut op_gpu: Vec<i64> = vec![0; tree.ops.len()];
    let mut evidence: FxHashMap<(Backend, bool, u32), Agg> = FxHashMap::default();
    let mut launch = LaunchStats::default();
    let mut unattributed = (0u64, 0i64);
    let mut dangling = 0u64;
    let mut gemm_simt_ns = 0i64;
    let mut gemm_ns = 0i64;

    for (i, row) in c.gpu.iter().enumerate() {
        let rt = match launches.runtime[i] {
            NO => None,
            r => Some(runtime[r as usize]),
        };
        if rt.is_none() && row.correlation != NONE {
            dangling += 1;
        }
        let leaf = launches.leaf[i];
        if let Some(r) = rt {
            if row.kind == GpuKind::Kernel {
                launch.launched_kernels += 1;
                if row.dur < r.dur {
                    launch.shorter_than_launch += 1;
                }
            }
        }

        let (kernel_rule, kernel_backend, tensor_cores) = *kernel_rule_cache.entry(row.name).or_insert_with(|| {
            let t = Tokens::new(names.get(row.name));
            (names::kernel_bucket(&t), names::kernel_backend(&t), names::gemm_uses_tensor_cores(&t))
        });

        // Bucket: enclosing op context first, then the kernel name, then the leaf op.
        let at = |v: &Vec<u32>| if leaf == NO { NO } else { v[leaf as usize] };
        let (attn_op, comm_op, ctx_op) = (at(&tree.attention), at(&tree.collective), at(&tree.context));
        let (bucket, rule) = if attn_op != NO {
            (Bucket::Attention, Rule::Chain(tree.ops[attn_op as usize].name))
        } else if comm_op != NO {
            (Bucket::Collective, Rule::Chain(tree.ops[comm_op as usize].name))
        } else if row.kind != GpuKind::Kernel {
            (Bucket::Memory, Rule::CopyRow)
        } else if ctx_op != NO {
            let name = tree.ops[ctx_op as usize].name;
            let b = tree.op_context[name as usize].map(OpContext::bucket).unwrap_or(Bucket::Other);
            (b, Rule::Chain(name))
        } else if let Some((b, label)) = kernel_rule {
            (b, Rule::Kernel(label))
        } else if let Some((b, label)) = (leaf != NO).then(|| names::op_bucket(names.get(tree.ops[leaf as usize].name))).flatten() {
            (b, Rule::LeafOp(label))
        } else {
            (Bucket::Other, Rule::Unmatched)
        };

        // Attention backend evidence: the kernel's own signature, else the enclosing op.
        if bucket == Bucket::Attention {
            if let Some(b) = kernel_backend {
                evidence.entry((b, true, row.name)).or_default().add(row.dur);
            } else if attn_op != NO {
                let op_name = tree.ops[attn_op as usize].name;
                let b = names::op_backend(names.get(op_name)).unwrap_or(Backend::Math);
                evidence.entry((b, false, op_name)).or_default().add(row.dur);
            } else {
                evidence.entry((Backend::Vendor, true, row.name)).or_default().add(row.dur);
            }
        }
        if bucket == Bucket::Gemm && row.kind == GpuKind::Kernel {
            gemm_ns += row.dur;
            if tensor_cores == Some(false) {
                gemm_simt_ns += row.dur;
            }
        }

        let leaf_name = if leaf == NO { NO } else { tree.ops[leaf as usize].name };
        rows_by_key.entry((row.name, leaf_name, bucket, rule)).or_default().add(row.dur);
        if leaf != NO {
            op_gpu[leaf as usize] += row.dur;
        } else {
            unattributed.0 += 1;
            unattributed.1 += row.dur;
        }

        lanes.add(row, bucket);
        match device_lanes.iter_mut().find(|(d, _)| *d == row.device) {
            Some((_, l)) => l.add(row, bucket),
            None => {
                let mut l = Lanes::default();
                l.add(row, bucket);
                device_lanes.push((row.device, l));
            }
        }
        if !steps.is_empty() {
            let s = step_of(&steps, rt.map(|r| r.start).unwrap_or(row.start));
            if s != NO {
                step_lanes[s as usize].add(row, bucket);
            }
        }
    }
    let mut bucket_agg: FxHashMap<Bucket, Agg> = FxHashMap::default();
    let mut rule_agg: FxHashMap<(Bucket, Rule), Agg> = FxHashMap::default();
    let mut bucket_names: FxHashMap<(Bucket, u32), Agg> = FxHashMap::default();
    let mut kernel_agg: FxHashMap<u32, Agg> = FxHashMap::default();
    let mut kernel_op: FxHashMap<(u32, u32), i64> = FxHashMap::default();
    let mut kernel_bucket: FxHashMap<(u32, Bucket), i64> = FxHashMap::default();
    let mut op_bucket_time: FxHashMap<(u32, Bucket), i64> = FxHashMap::default();
    for (&(kernel, op, bucket, rule), a) in &rows_by_key {
        bucket_agg.entry(bucket).or_default().merge(a);
        rule_agg.entry((bucket, rule)).or_default().merge(a);
        bucket_names.entry((bucket, kernel)).or_default().merge(a);
        kernel_agg.entry(kernel).or_default().merge(a);
        *kernel_bucket.entry((kernel, bucket)).or_default() += a.ns;
        if op != NO {
            *kernel_op.entry((kernel, op)).or_default() += a.ns;
            *op_bucket_time.entry((op, bucket)).or_default() += a.ns;
        }
    }
    launch.launch_call_us = us(c.launch_ns);
    launch.sync_call_us = us(c.sync_ns);

    let total_ns = lanes.kernel_ns;
    let (mut gpu, idle_gaps) = lanes.time_and_gaps();
    if c.sm_eff_dur > 0.0 {
        gpu.est_sm_efficiency_pct = Some(c.sm_eff_weighted / c.sm_eff_dur * 100.0);
    }
    if c.occupancy_dur > 0.0 {
        gpu.achieved_occupancy_pct = Some(c.occupancy_weighted / c.occupancy_dur);
    }

    let mut devices: Vec<DeviceTime> = if device_lanes.len() > 1 {
        device_lanes.into_iter().map(|(d, l)| DeviceTime { device: d as i64, time: l.time() }).collect()
    } else {
        Vec::new()
    };
    devices.sort_by_key(|d| d.device);

    // Buckets: all eleven, largest first; empty ones dropped.
    let mut buckets: Vec<crate::report::Bucket> = BUCKETS
        .iter()
        .filter_map(|&b| {
            let a = bucket_agg.get(&b).copied()?;
            let mut matched: Vec<RuleHit> = rule_agg
                .iter()
                .filter(|((bb, _), _)| *bb == b)
                .map(|((_, r), a)| RuleHit { rule: rule_label(*r, names), time_us: us(a.ns), count: a.count })
                .collect();
            matched.sort_by(|x, y| y.time_us.total_cmp(&x.time_us).then_with(|| x.rule.cmp(&y.rule)));
            let mut tops: Vec<(u32, Agg)> =
                bucket_names.iter().filter(|((bb, _), _)| *bb == b).map(|((_, n), a)| (*n, *a)).collect();
            tops.sort_by(|x, y| y.1.ns.cmp(&x.1.ns).then_with(|| names.get(x.0).cmp(names.get(y.0))));
            let top_names = tops
                .iter()
                .take(5)
                .map(|(n, a)| NameTime { name: names.get(*n).to_string(), time_us: us(a.ns), count: a.count })
                .collect();
            Some(crate::report::Bucket {
                name: b.name().to_string(),
                time_us: us(a.ns),
                pct: pct(a.ns, total_ns),
                count: a.count,
                rule: b.rule().to_string(),
                matched,
                top_names,
            })
        })
        .collect();
    buckets.sort_by(|x, y| y.time_us.total_cmp(&x.time_us).then_with(|| x.name.cmp(&y.name)));

    // Top kernels.
    let mut kernels: Vec<(u32, Agg)> = kernel_agg.into_iter().collect();
    kernels.sort_by(|x, y| y.1.ns.cmp(&x.1.ns).then_with(|| names.get(x.0).cmp(names.get(y.0))));
    let best_bucket = |name: u32, m: &FxHashMap<(u32, Bucket), i64>| {
        argmax(m.iter().filter(|((n, _), _)| *n == name).map(|((_, b), t)| (*b, *t)))
            .map(|b| b.name().to_string())
            .unwrap_or_default()
    };
    let top_kernels = kernels
        .iter()
        .take(opts.top_n)
        .map(|(n, a)| {
            let op = argmax(
                kernel_op.iter().filter(|((k, _), _)| k == n).map(|((_, o), t)| (names.get(*o), *t)),
            )
            .map(str::to_string);
            top_row(names.get(*n), a, total_ns, op, best_bucket(*n, &kernel_bucket))
        })
        .collect();

    // Top ops: leaf ops by the GPU time they launched.
    let mut op_agg: FxHashMap<u32, Agg> = FxHashMap::default();
    let mut op_parent: FxHashMap<(u32, u32), i64> = FxHashMap::default();
    for (i, &ns) in op_gpu.iter().enumerate() {
        if ns == 0 {
            continue;
        }
        let o = tree.ops[i];
        op_agg.entry(o.name).or_default().add(ns);
        let p = tree.parent[i];
        if p != NO {
            *op_parent.entry((o.name, tree.ops[p as usize].name)).or_default() += ns;
        }
    }
    let mut ops: Vec<(u32, Agg)> = op_agg.into_iter().collect();
    ops.sort_by(|x, y| y.1.ns.cmp(&x.1.ns).then_with(|| names.get(x.0).cmp(names.get(y.0))));
    let top_ops = ops
        .iter()
        .take(opts.top_n)
        .map(|(n, a)| {
            let parent =
                argmax(op_parent.iter().filter(|((o, _), _)| o == n).map(|((_, p), t)| (names.get(*p), *t)))
                    .map(str::to_string);
            top_row(names.get(*n), a, total_ns, parent, best_bucket(*n, &op_bucket_time))
        })
        .collect();

    // Steps.
    let mut cpu_step_ns = 0;
    let steps_out = steps
        .iter()
        .zip(step_lanes)
        .map(|(w, l)| {
            cpu_step_ns += w.end - w.start;
            let t = l.time();
            Step {
                name: w.name.clone(),
                span_us: t.span_us,
                busy_us: t.busy_us,
                idle_us: t.idle_us,
                kernel_time_us: t.kernel_time_us,
                comm_us: t.comm_us,
                exposed_comm_us: t.exposed_comm_us,
                cpu_us: us(w.end - w.start),
                kernel_count: t.kernel_count,
            }
        })
        .collect();

    let dataloader_ns: i64 = tree
        .ops
        .iter()
        .zip(&tree.parent)
        .filter(|(o, &p)| p == NO && names.is(o.name, NAME_DATALOADER))
        .map(|(o, _)| o.end - o.start)
        .sum();

    let attention = attention_verdict(&evidence, names, c);
    Built {
        gpu,
        devices,
        buckets,
        attention,
        top_kernels,
        top_ops,
        steps: steps_out,
        launch,
        extra: Extra {
            unattributed,
            dangling_correlation: dangling,
            gemm_simt_ns,
            gemm_ns,
            dataloader_ns,
            cpu_step_ns,
            idle_gaps,
        },
    }
}

fn top_row(name: &str, a: &Agg, total_ns: i64, op: Option<String>, bucket: String) -> TopRow {
    TopRow {
        name: name.to_string(),
        time_us: us(a.ns),
        pct: pct(a.ns, total_ns),
        count: a.count,
        mean_us: if a.count > 0 { us(a.ns) / a.count as f64 } else { 0.0 },
        max_us: us(a.max),
        op,
        bucket,
    }
}

fn rule_label(r: Rule, names: &super::collect::Interner) -> String {
    match r {
        Rule::Chain(op) => format!("op chain: {}", names.get(op)),
        Rule::Kernel(l) | Rule::LeafOp(l) => l.to_string(),
        Rule::CopyRow => "gpu_memcpy / gpu_memset row".to_string(),
        Rule::Unmatched => "no rule matched".to_string(),
    }
}

const FLASH_FIX: &str = "wrap the attention call in `with torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION):` (it raises an error that says why flash cannot run), then fix that reason: fp16/bf16 inputs, head dim <= 256 and a multiple of 8, no explicit attn_mask (use is_causal=True)";

fn attention_verdict(
    evidence: &FxHashMap<(Backend, bool, u32), Agg>,
    names: &super::collect::Interner,
    c: &Collector,
) -> Attention {
    let mut per_backend: Vec<(Backend, i64)> = Vec::new();
    for ((b, _, _), a) in evidence {
        match per_backend.iter_mut().find(|(x, _)| x == b) {
            Some(e) => e.1 += a.ns,
            None => per_backend.push((*b, a.ns)),
        }
    }
    per_backend.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    let total: i64 = per_backend.iter().map(|x| x.1).sum();
    let mut rows: Vec<Evidence> = evidence
        .iter()
        .map(|((b, is_kernel, n), a)| Evidence {
            backend: b.id().to_string(),
            kind: if *is_kernel { "kernel" } else { "op" }.to_string(),
            name: names.get(*n).to_string(),
            time_us: us(a.ns),
            count: a.count,
        })
        .collect();
    rows.sort_by(|x, y| y.time_us.total_cmp(&x.time_us).then_with(|| x.name.cmp(&y.name)));
    rows.truncate(12);
    let Some(&(winner, ns)) = per_backend.first() else {
        return Attention {
            backend: "none".into(),
            time_us: 0.0,
            total_us: 0.0,
            evidence: rows,
            not_flash_reasons: Vec::new(),
            fix: None,
        };
    };
    let is_flash_like = matches!(winner, Backend::Flash | Backend::FlashAttn | Backend::Vendor);
    let (reasons, fix) = if is_flash_like {
        (Vec::new(), None)
    } else {
        (not_flash_reasons(c), Some(FLASH_FIX.to_string()))
    };
    Attention {
        backend: winner.id().to_string(),
        time_us: us(ns),
        total_us: us(total),
        evidence: rows,
        not_flash_reasons: reasons,
        fix,
    }
}

/// Reads the SDPA op's recorded shapes and dtypes (present with record_shapes=True) for the
/// usual reasons PyTorch skips the flash kernel.
fn not_flash_reasons(c: &Collector) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for call in &c.sdpa_calls {
        if let Some(types) = call.input_types.as_deref() {
            let types: Vec<String> = serde_json::from_str(types).unwrap_or_default();
            if let Some(t) = types.first() {
                if t == "float" || t == "double" {
                    push(format!("{} inputs are {t} (fp32): flash needs fp16 or bf16", call.op));
                }
            }
        }
        if let Some(dims) = call.input_dims.as_deref() {
            let dims: Vec<Vec<i64>> = serde_json::from_str(dims).unwrap_or_default();
            if let Some(q) = dims.first() {
                if let Some(&d) = q.last() {
                    if d > 256 || d % 8 != 0 {
                        push(format!("head dim {d} (query shape {q:?}): flash needs head dim <= 256 and a multiple of 8"));
                    }
                }
            }
            if dims.get(3).is_some_and(|m| !m.is_empty()) {
                push(format!("an explicit attn_mask of shape {:?} is passed: flash supports no mask except is_causal", dims[3]));
            }
        }
        if let Some(ci) = call.concrete_inputs.as_deref() {
            let ci: Vec<String> = serde_json::from_str(ci).unwrap_or_default();
            if let Some(p) = ci.get(4).and_then(|p| p.parse::<f64>().ok()) {
                if p > 0.0 {
                    push(format!("dropout_p = {p}: dropout in attention limits the fused kernels on some GPUs"));
                }
            }
        }
    }
    if c.sdpa_calls.is_empty() {
        out.push("no SDPA op arguments recorded (profile with record_shapes=True to see dtypes and shapes)".into());
    }
    out
}
