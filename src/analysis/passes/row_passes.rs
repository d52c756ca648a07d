//! The two passes over every GPU row that finish the model: time (each lane's intervals, each
//! row's step, the busy union) and totals (the rows summed for the tables, and the launch,
//! copy, tensor-core, attention and collective figures); and each row's class before them.

use crate::analysis::model::attribution::OpSpan;
use crate::analysis::model::attribution::{Attribution, SpanTree, NO};
use crate::analysis::model::classify::{moe_module, Chains, Classes, CopyKind, Why};
use crate::analysis::model::collect::{Call, Collector, GpuKind, NAME_GRAPH_LAUNCH};
use crate::analysis::model::frozen::{step_of, RowMap, StepWindow};
use crate::analysis::options::Options;
use crate::analysis::passes::attention::AttentionEvidence;
use crate::analysis::passes::collectives::collective_call;
use crate::analysis::passes::extra::LaunchingOps;
use crate::analysis::passes::steps::{us, Lanes};
use crate::analysis::rules::taxonomy::{
    self, Backend, Bucket, KernelFacts, TensorCore, Unfusable, OP_CONTEXT_RULES, TE_LIBRARY,
};
use crate::report::*;
use rustc_hash::FxHashMap;

/// Each row's class, and what each distinct name says as a kernel and as a copy.
pub(crate) fn classify_rows(
    c: &Collector,
    at: &Attribution,
    runtime: &[Call],
    chains: &Chains,
    opts: &Options,
) -> (FxHashMap<u32, KernelFacts>, FxHashMap<u32, CopyKind>, Classes) {
    let (names, tree) = (&c.names, &at.ops);
    let mut facts: FxHashMap<u32, KernelFacts> = FxHashMap::default();
    let mut copy_kind: FxHashMap<u32, CopyKind> = FxHashMap::default();
    let mut user_rule: FxHashMap<u32, Option<usize>> = FxHashMap::default();
    let mut classes = Classes::with_capacity(c.gpu.len());
    for (i, row) in c.gpu.briefs().enumerate() {
        let f = facts.entry(row.name).or_insert_with(|| KernelFacts::of(names.get(row.name)));
        let copy = *copy_kind.entry(row.name).or_insert_with(|| CopyKind::of(names.get(row.name), row.kind));
        let user = if opts.rules.is_empty() {
            None
        } else {
            *user_rule.entry(row.name).or_insert_with(|| opts.rules.iter().position(|r| r.matches(&f.name)))
        };
        classes.push(match user {
            Some(u) => (opts.rules[u].bucket, Why::User(u as u16)),
            None => chains.classify(tree, names, row.kind, copy, f, at.leaf[i], || moe_module(names, at, runtime, i)),
        });
    }
    (facts, copy_kind, classes)
}

/// The rows' time: their lanes' interval metrics (whole trace and per device), each row's
/// step, and each step's GPU extent.
pub(crate) struct TimePass {
    pub(crate) total_ns: i64,
    pub(crate) gpu: GpuTime,
    pub(crate) idle_gaps: (u64, i64, i64),
    pub(crate) busy_union: Vec<crate::analysis::model::intervals::Span>,
    pub(crate) devices: Vec<DeviceTime>,
    /// Per row: its step, or NO (empty when there are no steps). The steps' interval metrics
    /// are worked out one step at a time later: lanes for every step at once held more than
    /// the rows themselves.
    pub(crate) row_step: Vec<u32>,
    /// Per step: the GPU extent of its rows (the timeline's step marks).
    pub(crate) step_extent: Vec<(i64, i64)>,
    /// First start and last end of any row (the timeline's extent); None without rows.
    pub(crate) gpu_extent: Option<(i64, i64)>,
}

pub(crate) fn time_pass(
    c: &Collector,
    at: &Attribution,
    runtime: &[Call],
    classes: &Classes,
    steps: &[StepWindow],
) -> TimePass {
    // Not sized for every row up front: each list is merged into its union as it doubles, so
    // rows that touch or overlap keep it far below the rows' count (a gzip bomb of 15 M tiny
    // kernels: sized up front, the page worker's memory went from 272 to 400 MiB).
    let mut lanes = Lanes::default();
    let mut device_lanes: Vec<(i32, Lanes)> = Vec::new();
    // Per-device lanes only when the file has several devices: with one they would copy the
    // whole trace's intervals for the same numbers.
    let several_devices = c.gpu.lanes().first().is_some_and(|l0| c.gpu.lanes().iter().any(|l| l.0 != l0.0));
    let mut row_step: Vec<u32> = Vec::with_capacity(if steps.is_empty() { 0 } else { c.gpu.len() });
    let mut step_extent: Vec<(i64, i64)> = vec![(i64::MAX, i64::MIN); steps.len()];
    for (i, row) in c.gpu.iter().enumerate() {
        let bucket = classes.get(i).0;
        lanes.add((row.start, row.dur), row.kind, bucket);
        if several_devices {
            match device_lanes.iter_mut().find(|(d, _)| *d == row.device) {
                Some((_, l)) => l.add((row.start, row.dur), row.kind, bucket),
                None => {
                    let mut l = Lanes::default();
                    l.add((row.start, row.dur), row.kind, bucket);
                    device_lanes.push((row.device, l));
                }
            }
        }
        if !steps.is_empty() {
            // A row belongs to the step its launch call (else the row itself) falls in.
            let launched = match at.runtime[i] {
                NO => row.start,
                r => runtime[r as usize].start,
            };
            let s = step_of(steps, launched);
            row_step.push(s);
            if s != NO {
                let e = &mut step_extent[s as usize];
                *e = (e.0.min(row.start), e.1.max(row.start + row.dur));
            }
        }
    }
    let (total_ns, gpu_extent) = (lanes.kernel_ns, lanes.extent());
    let (gpu, idle_gaps, busy_union) = lanes.time_and_union();
    let devices = if device_lanes.len() > 1 {
        device_lanes.into_iter().map(|(d, l)| DeviceTime { device: d as i64, time: l.time() }).collect()
    } else {
        Vec::new()
    };
    TimePass { total_ns, gpu, idle_gaps, busy_union, devices, row_step, step_extent, gpu_extent }
}

/// The rows' totals: per (kernel, op, class) for the tables, per op, and the launch, copy,
/// tensor-core, attention and collective figures.
#[derive(Default)]
pub(crate) struct Totals {
    pub(crate) rows: RowMap,
    pub(crate) op_gpu: Vec<i64>,
    pub(crate) evidence: AttentionEvidence,
    pub(crate) launch: LaunchStats,
    pub(crate) copies: Copies,
    pub(crate) tensor_cores: TensorCoreUse,
    pub(crate) collectives: Vec<CollectiveCall>,
    /// Rows with no launching op: count and time.
    pub(crate) unattributed: (u64, i64),
    pub(crate) coverage: LaunchCoverage,
    /// The ops that launched kernels one by one, over the trace and per step
    /// ([`launching_ops`]).
    pub(crate) launching: (LaunchingOps, Vec<LaunchingOps>),
    /// Elementwise time Inductor already fused, memory time in index copies (ns).
    pub(crate) unfusable_ns: (i64, i64),
}

pub(crate) fn totals_pass(
    c: &Collector,
    at: &Attribution,
    runtime: &[Call],
    classes: &Classes,
    (facts, copy_kind): (&FxHashMap<u32, KernelFacts>, &FxHashMap<u32, CopyKind>),
    steps: &[StepWindow],
) -> Totals {
    let names = &c.names;
    let tree = &at.ops;
    let mut out = Totals { op_gpu: vec![0; tree.spans.len()], ..Totals::default() };
    let mut graph_launch_ns = 0;
    let mut ns = RowNs::default();
    // Per op: the time (ns) of the kernels it launched one by one, or NOT_LAUNCHING. A
    // column, not a map: 8 bytes an op against a hash map's ~22 (35 MB at 2 GB of trace).
    let mut launching = vec![NOT_LAUNCHING; tree.spans.len()];
    for r in runtime.iter().filter(|r| names.is(r.name, NAME_GRAPH_LAUNCH)) {
        out.launch.graph_launches += 1;
        graph_launch_ns += r.dur;
    }
    out.launch.graph_launch_call_us = us(graph_launch_ns);
    for (i, row) in c.gpu.briefs().enumerate() {
        let rt = match at.runtime[i] {
            NO => None,
            r => Some(runtime[r as usize]),
        };
        let leaf = at.leaf[i];
        let graph = rt.is_some_and(|r| names.is(r.name, NAME_GRAPH_LAUNCH));
        if let (Some(r), GpuKind::Kernel) = (rt, row.kind) {
            count_launch(&mut out.launch, graph, row.dur, r.dur);
            if !graph && leaf != NO {
                let ns = &mut launching[leaf as usize];
                *ns = (*ns).max(0) + row.dur;
            }
        }
        *coverage_slot(&mut ns.coverage, rt.is_some(), graph, at.captured(i).is_some(), leaf != NO) += row.dur;
        let (bucket, why) = classes.get(i);
        let f = &facts[&row.name];
        match (f.unfusable, bucket) {
            (Some(Unfusable::Inductor), Bucket::Elementwise) => out.unfusable_ns.0 += row.dur,
            (Some(Unfusable::IndexCopy), Bucket::Memory) => out.unfusable_ns.1 += row.dur,
            _ => {}
        }
        if row.kind != GpuKind::Kernel {
            count_copy(&mut ns.copies, copy_kind[&row.name], row.dur);
        }
        if bucket == Bucket::Gemm && row.kind == GpuKind::Kernel {
            *tensor_core_slot(&mut ns.tensor_cores, f.tensor_cores) += row.dur;
        }
        if bucket == Bucket::Attention {
            // cuDNN's SDPA kernels launched by TransformerEngine's FusedAttnFunc are TE's.
            let te = || tree.chain(leaf).any(|o| taxonomy::is_te_attention_op(names.get(tree.spans[o as usize].name)));
            add_attention_evidence(&mut out.evidence, why, f, row.name, row.dur, te);
        }

        // Kernels that are collectives by name (not helpers launched under a collective op).
        if bucket == Bucket::Communication && f.kernel_rule().is_some_and(|r| r.then.bucket == Bucket::Communication) {
            out.collectives.push(collective_call(c, at, i, leaf, &f.name.short));
        }

        let leaf_name = if leaf == NO { NO } else { tree.spans[leaf as usize].name };
        out.rows.entry((row.name, leaf_name, bucket, why)).or_default().add(row.dur);
        if leaf != NO {
            out.op_gpu[leaf as usize] += row.dur;
        } else {
            out.unattributed.0 += 1;
            out.unattributed.1 += row.dur;
        }
    }
    (out.coverage, out.copies, out.tensor_cores) = ns.into_us();
    // Counted here so that the column (8 bytes an op) is gone before the model's passes.
    out.launching = launching_ops(c, tree, &launching, steps);
    out
}

/// The rows' time by launch, copy direction and tensor-core use, summed in ns and converted
/// once: a sum of millions of microsecond figures prints float noise (1234.5670000000002).
/// Slots in the order [`RowNs::into_us`] names them.
#[derive(Default)]
struct RowNs {
    coverage: [i64; 6],
    copies: [i64; 6],
    tensor_cores: [i64; 4],
}

impl RowNs {
    fn into_us(self) -> (LaunchCoverage, Copies, TensorCoreUse) {
        let [graph_matched_us, graph_us, op_us, no_op_us, external_only_us, no_launch_us] = self.coverage.map(us);
        let [host_to_device_us, device_to_host_us, pageable_us, device_to_device_us, peer_to_peer_us, memset_us] =
            self.copies.map(us);
        let [tensor_core_us, simt_us, vector_us, unknown_us] = self.tensor_cores.map(us);
        (
            LaunchCoverage { graph_matched_us, graph_us, op_us, no_op_us, external_only_us, no_launch_us },
            Copies {
                host_to_device_us,
                device_to_host_us,
                pageable_us,
                device_to_device_us,
                peer_to_peer_us,
                memset_us,
            },
            TensorCoreUse { tensor_core_us, simt_us, vector_us, unknown_us },
        )
    }
}

/// An op that launched no kernel one by one.
const NOT_LAUNCHING: i64 = -1;

/// The ops that launched kernels one by one, over the trace and per step (by the op's
/// start): their CPU time less the time they spent blocked in synchronising calls (waiting on
/// the GPU is not the cost of issuing work), and their kernels' time. The idle between them
/// is the idle pass's.
fn launching_ops(
    c: &Collector,
    tree: &SpanTree,
    launching: &[i64],
    steps: &[StepWindow],
) -> (LaunchingOps, Vec<LaunchingOps>) {
    let blocked = Blocked::new(c);
    let (mut all, mut per_step) = (LaunchingOps::default(), vec![LaunchingOps::default(); steps.len()]);
    for (o, &ns) in tree.spans.iter().zip(launching).filter(|(_, &ns)| ns != NOT_LAUNCHING) {
        blocked.add(&mut all, o, ns);
        let s = step_of(steps, o.start);
        if s != NO {
            blocked.add(&mut per_step[s as usize], o, ns);
        }
    }
    (all, per_step)
}

/// Each thread's synchronising calls, by start: built once, not per step (a trace of
/// thousands of steps and syncs made that quadratic).
struct Blocked(FxHashMap<u32, Vec<(i64, i64)>>);

impl Blocked {
    fn new(c: &Collector) -> Self {
        let mut syncs: FxHashMap<u32, Vec<(i64, i64)>> = FxHashMap::default();
        for s in &c.syncs {
            syncs.entry(s.thread).or_default().push((s.start, s.end));
        }
        syncs.values_mut().for_each(|v| v.sort_unstable());
        Blocked(syncs)
    }

    /// Op `o`, which launched kernels of `kernel_ns`, counted into `to`.
    fn add(&self, to: &mut LaunchingOps, o: &OpSpan, kernel_ns: i64) {
        let blocked = self.0.get(&o.thread).map_or(0, |v| {
            let first = v.partition_point(|s| s.0 < o.start);
            v[first..].iter().take_while(|s| s.0 < o.end).map(|s| s.1.min(o.end) - s.0).sum()
        });
        to.ops += 1;
        to.cpu_ns += (o.end - o.start - blocked).max(0);
        to.kernel_ns += kernel_ns;
    }
}

/// Where a row's time counts by how it was launched: `launched` (a launch call found), by a
/// graph launch (and matched to its capture), under an op.
fn coverage_slot(ns: &mut [i64; 6], launched: bool, graph: bool, captured: bool, op: bool) -> &mut i64 {
    &mut ns[match (launched, graph) {
        (true, true) if captured => 0,
        (true, true) => 1,
        (true, false) if op => 2,
        (true, false) => 3,
        (false, _) if op => 4,
        (false, _) => 5,
    }]
}

/// A kernel against its launch call; one graph launch replays many kernels, so comparing each
/// with that call says nothing.
fn count_launch(launch: &mut LaunchStats, graph_launch: bool, kernel_ns: i64, call_ns: i64) {
    if graph_launch {
        launch.graph_kernels += 1;
    } else {
        launch.launched_kernels += 1;
        if kernel_ns < call_ns {
            launch.shorter_than_launch += 1;
        }
    }
}

/// A copy or memset row's time, by direction (and pageable host memory).
fn count_copy(copies: &mut [i64; 6], kind: CopyKind, ns: i64) {
    let (slot, pageable) = match kind {
        CopyKind::HostToDevice { pageable } => (0, pageable),
        CopyKind::DeviceToHost { pageable } => (1, pageable),
        CopyKind::DeviceToDevice | CopyKind::Other => (3, false),
        CopyKind::PeerToPeer => (4, false),
        CopyKind::Memset => (5, false),
    };
    copies[slot] += ns;
    if pageable {
        copies[2] += ns;
    }
}

/// A matmul kernel's time, by whether its name says it runs on tensor cores.
fn tensor_core_slot(ns: &mut [i64; 4], use_: Option<TensorCore>) -> &mut i64 {
    &mut ns[match use_ {
        Some(TensorCore::Yes) => 0,
        Some(TensorCore::Simt) => 1,
        Some(TensorCore::VectorShaped) => 2,
        None => 3,
    }]
}

/// Attention backend evidence: eager shape, the kernel's own signature, else the op. `te` says
/// whether TransformerEngine launched the row (asked only for cuDNN kernels).
fn add_attention_evidence(
    evidence: &mut AttentionEvidence,
    why: Why,
    f: &KernelFacts,
    name: u32,
    ns: i64,
    te: impl Fn() -> bool,
) {
    match (why, f.backend()) {
        (Why::Eager(scope), _) => evidence.add(Backend::Eager, EvidenceKind::Scope, scope, "", ns),
        (_, Some((b, lib))) => {
            let lib = if b == Backend::Cudnn && te() { TE_LIBRARY } else { lib };
            evidence.add(b, EvidenceKind::Kernel, name, lib, ns)
        }
        (Why::Op { op, rule }, None) => {
            let b = OP_CONTEXT_RULES[rule as usize].then.backend.unwrap_or(Backend::Math);
            evidence.add(b, EvidenceKind::Op, op, "", ns)
        }
        _ => evidence.add(Backend::Vendor, EvidenceKind::Kernel, name, "", ns),
    }
}
