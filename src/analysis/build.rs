//! From collected records to the report's parts, in passes with one job each:
//! attribution (which op launched each row), classification (its bucket), attention (hand-
//! written attention, backend verdict), tables, and time (interval metrics per device and step).

use super::attention::{find_eager, launch_order, AttentionEvidence};
use super::attribution::{attribute, NO};
use super::classify::{Chains, Classes, CopyKind, Why};
use super::collect::{Collector, GpuKind, RuntimeCall, NAME_BACKWARD, NAME_GRAPH_LAUNCH};
use super::collectives::collective_call;
pub use super::extra::Extra;
use super::options::Options;
use super::steps::{step_of, step_times, step_windows, us, Lanes};
use super::tables::{tables, RowMap};
use super::taxonomy::{Backend, Bucket, KernelFacts, TensorCore, OP_CONTEXT_RULES};
use super::{idle, layers, memory, timeline};
use crate::report::*;
use rustc_hash::FxHashMap;

/// The optimizer's share of GPU time (%) that, without backward ops, says the run trains.
pub const TRAINING_OPTIMIZER_PCT: f64 = 1.0;

pub struct Built {
    pub gpu: GpuTime,
    pub devices: Vec<DeviceTime>,
    pub buckets: Vec<crate::report::Bucket>,
    pub attention: Attention,
    pub top_kernels: Vec<TopRow>,
    pub top_ops: Vec<TopRow>,
    pub steps: Vec<Step>,
    pub launch: LaunchStats,
    pub launch_coverage: LaunchCoverage,
    pub training: bool,
    pub copies: Copies,
    pub tensor_cores: TensorCoreUse,
    pub kernels: Vec<KernelTotal>,
    pub ops: Vec<OpTotal>,
    pub collectives: Vec<CollectiveCall>,
    pub idle: IdleCauses,
    pub layers: Vec<LayerNode>,
    pub memory: Option<MemoryView>,
    pub timeline: Option<Timeline>,
    pub window: Option<TimeWindow>,
    /// The ops' work summed per kernel and step, measured against the device in `conclude`.
    pub work: super::roofline::WorkSums,
    pub extra: Extra,
}

pub fn build(mut c: Collector, opts: &Options) -> (Built, Collector) {
    c.shrink_to_fit();
    let window = opts.window.map(|r| r.resolve((0..c.gpu.len()).map(|i| c.gpu.start(i)).min().unwrap_or(0)));
    if let Some(w) = window {
        c.restrict_to(w);
    }
    let mut runtime = std::mem::take(&mut c.runtime);
    runtime.sort_unstable_by_key(|r| (r.correlation, r.start, r.thread));
    let at = attribute(
        std::mem::take(&mut c.ops),
        std::mem::take(&mut c.modules),
        &c.names,
        &mut c.gpu,
        &runtime,
        &c.memory,
        &opts.fork,
    );
    let names = &c.names;
    let tree = &at.ops;
    let chains = Chains::new(tree, names);
    let steps = step_windows(tree, names);

    // Per distinct name: what the kernel name says (demangled and matched once). Beside it,
    // when there is a second thread, the rows' launch order that hand-written attention is
    // looked for in: worked out ahead, though only used when there is softmax.
    let classify = || classify_rows(&c, &at, &chains, opts);
    let order = || opts.fork.at_once().then(|| launch_order(c.gpu.len(), &at, &runtime));
    let ((facts, copy_kind, mut classes), order) = opts.fork.join(classify, order);
    find_eager(&c, &at, &runtime, order, &mut classes);

    // The rows' two passes read the same rows and write different things: time (intervals
    // per lane and step) and totals (tables, launch, copy, tensor-core and attention figures).
    let time_pass = || time_pass(&c, &at, &runtime, &classes, &steps);
    let totals_pass = || totals_pass(&c, &at, &runtime, &classes, &facts, &copy_kind);
    let (time, totals) = opts.fork.join(time_pass, totals_pass);
    let Totals {
        rows,
        op_gpu,
        evidence,
        mut launch,
        copies,
        tensor_cores: tc,
        mut collectives,
        unattributed,
        coverage,
    } = totals;
    let TimePass { total_ns, mut gpu, idle_gaps, busy_union, mut devices, row_step, step_extent } = time;
    let mut extra = Extra {
        external_mismatch: at.external_mismatch,
        dangling_correlation: at.dangling_correlation,
        dataloader_ns: at.dataloader_ns,
        unattributed,
        idle_gaps,
        external_only_us: coverage.external_only_us,
        ..Default::default()
    };
    launch.launch_call_us = us(c.launch_ns);
    launch.sync_call_us = us(c.sync_ns);
    if c.sm_eff_dur > 0.0 {
        gpu.est_sm_efficiency_pct = Some(c.sm_eff_weighted / c.sm_eff_dur * 100.0);
    }
    if c.occupancy_dur > 0.0 {
        gpu.achieved_occupancy_pct = Some(c.occupancy_weighted / c.occupancy_dur);
    }
    gpu.occupancy_unknown_us = c.occupancy_unknown_dur / 1000.0;
    devices.sort_by_key(|d| d.device);

    let row_buckets: Vec<Bucket> = classes.buckets();
    drop(classes);
    let marks = steps
        .iter()
        .zip(&step_extent)
        .filter(|(_, e)| e.0 <= e.1)
        .map(|(w, e)| StepMark { name: w.name.clone(), start_ns: e.0, end_ns: e.1 })
        .collect();
    // Two sets of passes that read what is built so far and nothing of each other's.
    let tables_and_layers = || {
        let step_times = step_times(&c, &row_step, &row_buckets, steps.len());
        let t = tables(&rows, &op_gpu, tree, names, &facts, total_ns, opts);
        let layers = layers::layers(&c, &at, &runtime, &row_buckets);
        let memory = memory::memory(&c, &at);
        let work = super::roofline::sums(&c, &at, &runtime, &row_buckets, &facts, &row_step, steps.len());
        (step_times, t, layers, memory, work)
    };
    let idle_and_timeline = || {
        let streams = idle::streams(&c);
        let idle = idle::idle_causes(&c, &at, &runtime, &streams, &steps, &busy_union);
        let timeline = timeline::timeline(
            &c,
            timeline::Inputs {
                at: &at,
                runtime: &runtime,
                streams: &streams,
                buckets: &row_buckets,
                name_of: &|n| facts.get(&n).map(|f| f.name.short.clone()).unwrap_or_else(|| names.get(n).to_string()),
                steps: marks,
                window,
            },
        );
        (idle, timeline)
    };
    let ((step_times, t, layers, memory, work), ((idle, step_waits), timeline)) =
        opts.fork.join(tables_and_layers, idle_and_timeline);
    extra.critical_path = super::cpath::pass(&c, &at, &runtime, &row_buckets, &steps, opts.what_if.as_ref());
    drop((row_buckets, row_step, busy_union));
    // In a range, only the steps that ran GPU work inside it.
    let kept: Vec<bool> = step_times.iter().map(|t| opts.window.is_none() || t.kernel_count > 0).collect();
    let mut work = work;
    work.retain_steps(&kept);
    let steps_out = steps
        .iter()
        .zip(step_times)
        .zip(step_waits)
        .map(|((w, t), waits)| {
            extra.cpu_step_ns += w.end - w.start;
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
                host_wait_us: us(waits.0),
                kernel_wait_us: us(waits.1),
                other_wait_us: us(waits.2),
            }
        })
        .zip(&kept)
        .filter_map(|(s, &keep)| keep.then_some(s))
        .collect();
    extra.cpu_extent_ns = c.cpu_extent.map(|(a, b)| b - a).unwrap_or(0);
    // Training shows backward ops or optimizer work; inference shows neither. The optimizer
    // must hold a real share of the GPU time: one 3 us kernel under an op named like an
    // optimizer (an EMA update in an inference server) does not make a training run.
    let training = tree.spans.iter().any(|o| names.is(o.name, NAME_BACKWARD))
        || t.buckets.iter().any(|b| b.id == Bucket::Optimizer && b.pct >= TRAINING_OPTIMIZER_PCT);
    let attention = evidence.verdict(names, &c);
    collectives.sort_by_key(|x| (x.start_ns, x.dur_ns));
    let built = Built {
        gpu,
        devices,
        buckets: t.buckets,
        attention,
        top_kernels: t.top_kernels,
        top_ops: t.top_ops,
        kernels: t.kernels,
        ops: t.ops,
        idle,
        layers,
        memory,
        timeline,
        window,
        collectives,
        steps: steps_out,
        launch,
        launch_coverage: coverage,
        training,
        copies,
        tensor_cores: tc,
        work,
        extra,
    };
    (built, c)
}

/// Each row's class, and what each distinct name says as a kernel and as a copy.
fn classify_rows(
    c: &Collector,
    at: &super::attribution::Attribution,
    chains: &Chains,
    opts: &Options,
) -> (FxHashMap<u32, KernelFacts>, FxHashMap<u32, CopyKind>, Classes) {
    let (names, tree) = (&c.names, &at.ops);
    let mut facts: FxHashMap<u32, KernelFacts> = FxHashMap::default();
    let mut copy_kind: FxHashMap<u32, CopyKind> = FxHashMap::default();
    let mut user_rule: FxHashMap<u32, Option<usize>> = FxHashMap::default();
    let mut classes = Classes::with_capacity(c.gpu.len());
    for (i, row) in c.gpu.iter().enumerate() {
        let f = facts.entry(row.name).or_insert_with(|| KernelFacts::of(names.get(row.name)));
        let copy = *copy_kind.entry(row.name).or_insert_with(|| CopyKind::of(names.get(row.name), row.kind));
        let user = if opts.rules.is_empty() {
            None
        } else {
            *user_rule.entry(row.name).or_insert_with(|| opts.rules.iter().position(|r| r.matches(&f.name)))
        };
        classes.push(match user {
            Some(u) => (opts.rules[u].bucket, Why::User(u as u16)),
            None => chains.classify(tree, names, row.kind, copy, f, at.leaf[i]),
        });
    }
    (facts, copy_kind, classes)
}

/// The rows' time: their lanes' interval metrics (whole trace and per device), each row's
/// step, and each step's GPU extent.
struct TimePass {
    total_ns: i64,
    gpu: GpuTime,
    idle_gaps: (u64, i64, i64),
    busy_union: Vec<super::intervals::Span>,
    devices: Vec<DeviceTime>,
    /// Per row: its step, or NO (empty when there are no steps). The steps' interval metrics
    /// are worked out one step at a time later: lanes for every step at once held more than
    /// the rows themselves.
    row_step: Vec<u32>,
    /// Per step: the GPU extent of its rows (the timeline's step marks).
    step_extent: Vec<(i64, i64)>,
}

fn time_pass(
    c: &Collector,
    at: &super::attribution::Attribution,
    runtime: &[RuntimeCall],
    classes: &Classes,
    steps: &[super::steps::StepWindow],
) -> TimePass {
    let mut lanes = Lanes::default();
    let mut device_lanes: Vec<(i32, Lanes)> = Vec::new();
    // Per-device lanes only when the file has several devices: with one they would copy the
    // whole trace's intervals for the same numbers.
    let several_devices = c.gpu.lanes().first().is_some_and(|l0| c.gpu.lanes().iter().any(|l| l.0 != l0.0));
    let mut row_step: Vec<u32> = Vec::with_capacity(if steps.is_empty() { 0 } else { c.gpu.len() });
    let mut step_extent: Vec<(i64, i64)> = vec![(i64::MAX, i64::MIN); steps.len()];
    for (i, row) in c.gpu.iter().enumerate() {
        let bucket = classes.get(i).0;
        lanes.add(&row, bucket);
        if several_devices {
            match device_lanes.iter_mut().find(|(d, _)| *d == row.device) {
                Some((_, l)) => l.add(&row, bucket),
                None => {
                    let mut l = Lanes::default();
                    l.add(&row, bucket);
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
    let total_ns = lanes.kernel_ns;
    let (gpu, idle_gaps, busy_union) = lanes.time_and_union();
    let devices = if device_lanes.len() > 1 {
        device_lanes.into_iter().map(|(d, l)| DeviceTime { device: d as i64, time: l.time() }).collect()
    } else {
        Vec::new()
    };
    TimePass { total_ns, gpu, idle_gaps, busy_union, devices, row_step, step_extent }
}

/// The rows' totals: per (kernel, op, class) for the tables, per op, and the launch, copy,
/// tensor-core, attention and collective figures.
struct Totals {
    rows: RowMap,
    op_gpu: Vec<i64>,
    evidence: AttentionEvidence,
    launch: LaunchStats,
    copies: Copies,
    tensor_cores: TensorCoreUse,
    collectives: Vec<CollectiveCall>,
    /// Rows with no launching op: count and time.
    unattributed: (u64, i64),
    coverage: LaunchCoverage,
}

fn totals_pass(
    c: &Collector,
    at: &super::attribution::Attribution,
    runtime: &[RuntimeCall],
    classes: &Classes,
    facts: &FxHashMap<u32, KernelFacts>,
    copy_kind: &FxHashMap<u32, CopyKind>,
) -> Totals {
    let names = &c.names;
    let tree = &at.ops;
    let mut rows: RowMap = FxHashMap::default();
    let mut op_gpu: Vec<i64> = vec![0; tree.spans.len()];
    let mut evidence = AttentionEvidence::default();
    let mut launch = LaunchStats::default();
    let mut coverage = LaunchCoverage::default();
    let mut copies = Copies::default();
    let mut tc = TensorCoreUse::default();
    let mut collectives: Vec<CollectiveCall> = Vec::new();
    let mut unattributed = (0u64, 0i64);
    let mut graph_launch_ns = 0;
    for r in runtime.iter().filter(|r| names.is(r.name, NAME_GRAPH_LAUNCH)) {
        launch.graph_launches += 1;
        graph_launch_ns += r.dur;
    }
    launch.graph_launch_call_us = us(graph_launch_ns);
    for (i, row) in c.gpu.iter().enumerate() {
        let rt = match at.runtime[i] {
            NO => None,
            r => Some(runtime[r as usize]),
        };
        if let (Some(r), GpuKind::Kernel) = (rt, row.kind) {
            // One graph launch replays many kernels: comparing each with that call says nothing.
            if names.is(r.name, NAME_GRAPH_LAUNCH) {
                launch.graph_kernels += 1;
            } else {
                launch.launched_kernels += 1;
                if row.dur < r.dur {
                    launch.shorter_than_launch += 1;
                }
            }
        }
        let leaf = at.leaf[i];
        let t = us(row.dur);
        match rt {
            Some(r) if names.is(r.name, NAME_GRAPH_LAUNCH) => coverage.graph_us += t,
            Some(_) if leaf != NO => coverage.op_us += t,
            Some(_) => coverage.no_op_us += t,
            None if leaf != NO => coverage.external_only_us += t,
            None => coverage.no_launch_us += t,
        }
        let (bucket, why) = classes.get(i);
        let f = &facts[&row.name];

        match copy_kind[&row.name] {
            _ if row.kind == GpuKind::Kernel => {}
            CopyKind::HostToDevice { pageable } => {
                copies.host_to_device_us += us(row.dur);
                if pageable {
                    copies.pageable_us += us(row.dur);
                }
            }
            CopyKind::DeviceToHost { pageable } => {
                copies.device_to_host_us += us(row.dur);
                if pageable {
                    copies.pageable_us += us(row.dur);
                }
            }
            CopyKind::DeviceToDevice | CopyKind::Other => copies.device_to_device_us += us(row.dur),
            CopyKind::PeerToPeer => copies.peer_to_peer_us += us(row.dur),
            CopyKind::Memset => copies.memset_us += us(row.dur),
        }
        if bucket == Bucket::Gemm && row.kind == GpuKind::Kernel {
            match f.tensor_cores {
                Some(TensorCore::Yes) => tc.tensor_core_us += us(row.dur),
                Some(TensorCore::Simt) => tc.simt_us += us(row.dur),
                Some(TensorCore::VectorShaped) => tc.vector_us += us(row.dur),
                None => tc.unknown_us += us(row.dur),
            }
        }

        // Attention backend evidence: eager shape, the kernel's own signature, else the op.
        if bucket == Bucket::Attention {
            match (why, f.backend()) {
                (Why::Eager(scope), _) => evidence.add(Backend::Eager, EvidenceKind::Scope, scope, "", row.dur),
                (_, Some((b, lib))) => evidence.add(b, EvidenceKind::Kernel, row.name, lib, row.dur),
                (Why::Op { op, rule }, None) => {
                    let b = OP_CONTEXT_RULES[rule as usize].backend.unwrap_or(Backend::Math);
                    evidence.add(b, EvidenceKind::Op, op, "", row.dur)
                }
                _ => evidence.add(Backend::Vendor, EvidenceKind::Kernel, row.name, "", row.dur),
            }
        }

        // Kernels that are collectives by name (not helpers launched under a collective op).
        if bucket == Bucket::Communication && f.kernel_rule().is_some_and(|r| r.bucket == Bucket::Communication) {
            collectives.push(collective_call(c, tree, i, leaf, &f.name.short));
        }

        let leaf_name = if leaf == NO { NO } else { tree.spans[leaf as usize].name };
        rows.entry((row.name, leaf_name, bucket, why)).or_default().add(row.dur);
        if leaf != NO {
            op_gpu[leaf as usize] += row.dur;
        } else {
            unattributed.0 += 1;
            unattributed.1 += row.dur;
        }
    }
    Totals { rows, op_gpu, evidence, launch, copies, tensor_cores: tc, collectives, unattributed, coverage }
}
