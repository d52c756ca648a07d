//! From collected records to the report's parts. First the model is finished and frozen:
//! attribution (which op launched each row), classification (its bucket), hand-written
//! attention, then the two passes over every row (row_passes: time and totals). Then the
//! passes over the frozen model (`passes`: each a function of the [`Model`] returning one
//! part), and the parts put together as the trace's report.

use super::model::frozen::{step_windows, Model, RowSums, StepWindow};
use super::options::Options;
use super::passes::{idle, layers, memory, timeline};
use crate::analysis::model::attribution::{attribute, Attribution};
use crate::analysis::model::capture::{import, Capture};
use crate::analysis::model::classify::Chains;
use crate::analysis::model::collect::{Call, CallIds, Collector, NAME_BACKWARD};
use crate::analysis::model::sort::sort_nearly_sorted;
use crate::analysis::passes::attention::{find_eager, launch_order};
pub use crate::analysis::passes::extra::{Extra, LaunchingOps};
use crate::analysis::passes::hints::{launch_verdict, TRAINING_OPTIMIZER_PCT};
use crate::analysis::passes::roofline::{self, OpKernelTable};
use crate::analysis::passes::row_passes::{classify_rows, time_pass, totals_pass, TimePass, Totals};
use crate::analysis::passes::steps::{step_times, us};
use crate::analysis::passes::tables::{tables, Tables};
use crate::analysis::rules::taxonomy::Bucket;
use crate::report::*;

/// The report's parts that the passes make, and what the hints and the roofline read besides.
pub struct Built {
    /// Every part of the trace's report that comes from its rows; the file, the device and
    /// the diagnostics, efficiency and hints are filled in by `conclude`.
    pub report: TraceReport,
    /// The ops' work summed per kernel and step, measured against the device in `conclude`.
    pub work: roofline::WorkSums,
    pub extra: Extra,
}

/// The parts made by the passes over the frozen model.
struct Parts {
    step_times: Vec<GpuTime>,
    tables: Tables,
    layers: Vec<LayerNode>,
    memory: Option<MemoryView>,
    work: roofline::WorkSums,
    idle: IdleCauses,
    step_waits: idle::StepWaits,
    /// Idle ending at kernels ops launched one by one (ns).
    eager_idle_ns: i64,
    timeline: Option<Timeline>,
    critical_path: Option<CriticalPath>,
}

/// The passes over the frozen model, each a function of it returning one part of the report.
/// The fork runs the two groups at once; idle and timeline share the rows per stream.
fn passes(m: &Model) -> Parts {
    let rows_and_ops = || {
        let (step_times, tables, memory) = (step_times(m), tables(m), memory::memory(m));
        // The layers and the sums split each op's work over its kernels by the same table.
        let per_op = OpKernelTable::new(m);
        (step_times, tables, layers::layers(m, &per_op), memory, roofline::sums(m, &per_op))
    };
    let streams = || {
        // The rows per stream (4 bytes a row) made after the path where the jobs run one after
        // the other (the page): the path's own lists hold the most of the whole build, and in
        // the page's memory (which only grows) every byte live beside them counts (2 GB of
        // trace: 6 MiB). With threads, beside it.
        let path = || crate::analysis::passes::cpath::pass(m);
        let idle_and_timeline = || {
            let streams = idle::streams(m.c);
            (idle::idle_causes(m, &streams), timeline::timeline(m, &streams))
        };
        let (path, (idle, timeline)) = m.opts.fork.join(path, idle_and_timeline);
        (idle, timeline, path)
    };
    let ((step_times, tables, layers, memory, work), ((idle, step_waits, eager_idle_ns), timeline, critical_path)) =
        m.opts.fork.join(rows_and_ops, streams);
    Parts { step_times, tables, layers, memory, work, idle, step_waits, eager_idle_ns, timeline, critical_path }
}

pub fn build(mut c: Collector, opts: &Options, capture: Option<Capture>) -> (Built, Collector) {
    c.shrink_to_fit();
    let window = opts.window.map(|r| r.resolve((0..c.gpu.len()).map(|i| c.gpu.start(i)).min().unwrap_or(0)));
    if let Some(w) = window {
        c.restrict_to(w);
    }
    // Replayed rows mapped to the launches that captured them (the capture's ops copied in).
    let (captured, capture) = capture.map_or((Vec::new(), None), |k| {
        let (rows, summary) = import(&mut c, k);
        (rows, Some(summary))
    });
    let mut runtime = std::mem::take(&mut c.runtime);
    sort_nearly_sorted(&mut runtime, |r| (r.correlation, r.start, r.thread, r.dur, r.name, r.external));
    let by_external = (std::mem::take(&mut c.op_work), std::mem::take(&mut c.op_comm));
    let at = attribute(
        (std::mem::take(&mut c.ops), by_external),
        std::mem::take(&mut c.modules),
        &c.names,
        &mut c.gpu,
        &runtime,
        &c.memory,
        captured,
        &opts.fork,
    );
    // Attribution was the last to read the calls' ids but for the few the `cuda_sync` rows name:
    // the rest read 24-byte calls, made in the 40-byte calls' own block (the standard library
    // collects in place when the items shrink), then shrunk. A second list beside the first was
    // the page worker's peak (500 MB of trace: 9 of 77 MiB).
    let call_ids = CallIds::new(&runtime, &c.gpu_syncs);
    let runtime: Vec<Call> = {
        let mut calls: Vec<Call> = runtime.into_iter().map(|r| Call::from(&r)).collect();
        calls.shrink_to_fit();
        calls
    };
    let names = &c.names;
    let tree = &at.ops;
    let chains = Chains::new(tree, names, &opts.fork);
    let steps = step_windows(tree, names);

    // Per distinct name: what the kernel name says (demangled and matched once). Beside it,
    // when there is a second thread, the rows' launch order that hand-written attention is
    // looked for in: worked out ahead, though only used when there is softmax.
    let classify = || classify_rows(&c, &at, &runtime, &chains, opts);
    let order = || opts.fork.at_once().then(|| launch_order(c.gpu.len(), &at, &runtime));
    let ((facts, copy_kind, mut classes), order) = opts.fork.join(classify, order);
    find_eager(&c, &at, &runtime, order, &mut classes);

    // The rows' two passes read the same rows and write different things: time (intervals
    // per lane and step) and totals (tables, launch, copy, tensor-core and attention figures).
    let time_pass = || time_pass(&c, &at, &runtime, &classes, &steps);
    let totals_pass = || totals_pass(&c, &at, &runtime, &classes, (&facts, &copy_kind), &steps);
    let (time, mut totals) = opts.fork.join(time_pass, totals_pass);
    let (rows, op_gpu) = (std::mem::take(&mut totals.rows), std::mem::take(&mut totals.op_gpu));
    let sums = RowSums { rows, op_gpu, total_ns: time.total_ns };
    let row_buckets: Vec<Bucket> = classes.buckets();
    drop(classes);
    let m = Model {
        c: &c,
        at: &at,
        runtime: &runtime,
        call_ids: &call_ids,
        steps: &steps,
        facts: &facts,
        buckets: &row_buckets,
        row_step: &time.row_step,
        step_extent: &time.step_extent,
        gpu_extent: time.gpu_extent,
        busy_union: &time.busy_union,
        sums: &sums,
        window,
        opts,
    };
    let made = Made { parts: passes(&m), time, totals };
    let short = |n| facts.get(&n).map(|f| f.name.short.clone()).unwrap_or_else(|| c.names.get(n).to_string());
    let graphs = crate::analysis::passes::graphs::graph_replays(&c, &at, &runtime, &short, capture);
    let mut built = assemble(&c, &at, &steps, made, window, opts);
    built.report.graphs = graphs;
    (built, c)
}

/// What the row passes and the model passes made.
struct Made {
    time: TimePass,
    totals: Totals,
    parts: Parts,
}

/// The report's parts from what the passes made.
fn assemble(
    c: &Collector,
    at: &Attribution,
    steps: &[StepWindow],
    made: Made,
    window: Option<TimeWindow>,
    opts: &Options,
) -> Built {
    let Made { time, mut totals, parts } = made;
    let (names, tree) = (&c.names, &at.ops);
    let (launching_ops, per_step) = std::mem::take(&mut totals.launching);
    let mut extra =
        extra_of(at, &totals, time.idle_gaps, LaunchingOps { idle_ns: parts.eager_idle_ns, ..launching_ops });
    let Totals { evidence, mut launch, copies, tensor_cores, mut collectives, coverage, .. } = totals;
    let TimePass { mut gpu, mut devices, .. } = time;
    let Parts { step_times, tables: t, layers, memory, mut work, idle, step_waits, timeline, critical_path, .. } =
        parts;
    launch.launch_call_us = us(c.launch_ns);
    launch.sync_call_us = us(c.sync_ns);
    sm_counters(c, &mut gpu);
    devices.sort_by_key(|d| d.device);

    // In a range, only the steps that ran GPU work inside it.
    let kept: Vec<bool> = step_times.iter().map(|t| opts.window.is_none() || t.kernel_count > 0).collect();
    work.retain_steps(&kept);
    let steps_out = step_rows(steps, step_times, step_waits, per_step, &kept, &mut extra);
    extra.cpu_extent_ns = c.cpu_extent.map(|(a, b)| b - a).unwrap_or(0);
    // Training shows backward ops or optimizer work; inference shows neither. The optimizer
    // must hold a real share of the GPU time: one 3 us kernel under an op named like an
    // optimizer (an EMA update in an inference server) does not make a training run.
    let training = tree.spans.iter().any(|o| names.is(o.name, NAME_BACKWARD))
        || t.buckets.iter().any(|b| b.id == Bucket::Optimizer && b.pct >= TRAINING_OPTIMIZER_PCT);
    collectives.sort_by_key(|x| (x.start_ns, x.dur_ns));
    let collective_bandwidth = crate::analysis::passes::collectives::bandwidth(&collectives);
    let report = TraceReport {
        has_gpu: !c.gpu.is_empty(),
        gpu,
        devices,
        buckets: t.buckets,
        attention: evidence.verdict(names, c, crate::analysis::passes::attention::hf_model(names, &at.modules)),
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
        collective_bandwidth,
        steps: steps_out,
        launch,
        launch_coverage: coverage,
        bucket_evidence: t.evidence,
        training,
        copies,
        tensor_cores,
        critical_path,
        ..TraceReport::default()
    };
    Built { report, work, extra }
}

/// What the hints and diagnostics read besides the report (the steps' CPU time and the CPU
/// extent are added later).
fn extra_of(at: &Attribution, totals: &Totals, idle_gaps: (u64, i64, i64), launching_ops: LaunchingOps) -> Extra {
    Extra {
        external_mismatch: at.external_mismatch,
        dangling_correlation: at.dangling_correlation,
        dataloader_ns: at.dataloader_ns,
        unattributed: totals.unattributed,
        idle_gaps,
        external_only_us: totals.coverage.external_only_us,
        launching_ops,
        inductor_elementwise_ns: totals.unfusable_ns.0,
        index_copy_ns: totals.unfusable_ns.1,
        ..Default::default()
    }
}

/// The SM efficiency and achieved occupancy, weighted by kernel time, where the trace has them.
fn sm_counters(c: &Collector, gpu: &mut GpuTime) {
    if c.sm_eff_dur > 0.0 {
        gpu.est_sm_efficiency_pct = Some(c.sm_eff_weighted / c.sm_eff_dur * 100.0);
    }
    if c.occupancy_dur > 0.0 {
        gpu.achieved_occupancy_pct = Some(c.occupancy_weighted / c.occupancy_dur);
    }
    gpu.occupancy_unknown_us = c.occupancy_unknown_dur / 1000.0;
}

/// One report row per kept step (its GPU time, CPU span and waits); every step's CPU span
/// counts in `extra`, kept or not.
fn step_rows(
    steps: &[StepWindow],
    step_times: Vec<GpuTime>,
    step_waits: idle::StepWaits,
    launching: Vec<LaunchingOps>,
    kept: &[bool],
    extra: &mut Extra,
) -> Vec<Step> {
    steps
        .iter()
        .zip(step_times)
        .zip(step_waits)
        .zip(launching)
        .map(|(((w, t), waits), launching)| {
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
                // The gap before a step's first kernel is one of its waits but lies outside
                // its GPU extent: the stake is at most the step's own idle.
                launch: launch_verdict(
                    &LaunchingOps { idle_ns: waits.3.min((t.idle_us * 1000.0).round() as i64), ..launching },
                    t.span_us,
                ),
            }
        })
        .zip(kept)
        .filter_map(|(s, &keep)| keep.then_some(s))
        .collect()
}
