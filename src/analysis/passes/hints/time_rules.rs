//! Hints about time the GPU did not compute: idle, launch-bound, syncs, collectives, input.

use super::facts::*;
use crate::analysis::rules::name_flags::{blocking_call, BlockingCall};
use crate::analysis::rules::taxonomy::Bucket;
use crate::report::Severity;
use crate::vocab::fmt_us;

pub(super) fn gpu_idle(f: &Facts) -> Option<Fired> {
    let g = &f.r.gpu;
    let idle_pct = f.idle_pct();
    if idle_pct <= IDLE_SHARE {
        return None;
    }
    let graphs = f.graph_share() >= GRAPH_REPLAY_SHARE;
    let mut fix = match (graphs, f.r.training) {
        // Graphs already replay the work: more graphs or batching inside them change nothing.
        (true, _) => "graphs already replay the kernels, so the idle lies between replays: look at the CPU work between graph launches (scheduling, sampling, input preparation, Python), overlap it with the replay (asynchronous scheduling), or give each replay more work (larger batches)".to_string(),
        (false, true) => "look at the CPU timeline in the gaps: data loading, Python overhead, host syncs (.item(), .cpu(), print) or small kernels; try CUDA graphs / torch.compile(mode=\"reduce-overhead\"), larger batches, pinned-memory non_blocking copies".to_string(),
        (false, false) => "look at the CPU timeline in the gaps: input preparation, request scheduling, sampling and Python overhead between forward passes; capture the forward pass in CUDA graphs (torch.compile(mode=\"reduce-overhead\"), or a server's graph mode for decode steps), batch more requests, overlap scheduling with GPU work".to_string(),
    };
    let mut evidence = vec![
        format!("idle = {}", fmt_us(g.idle_us)),
        format!("span = {}", fmt_us(g.span_us)),
        format!("busy = {}", fmt_us(g.busy_us)),
        format!("gaps > 50 us = {} totalling {}", f.x.idle_gaps.0, fmt_us(f.x.idle_gaps.1 as f64 / 1000.0)),
    ];
    let largest_us = f.x.idle_gaps.2 as f64 / 1000.0;
    let largest_pct = largest_us / g.idle_us.max(f64::MIN_POSITIVE) * 100.0;
    if largest_pct > ONE_GAP_SHARE {
        evidence.push(format!("largest gap = {} ({largest_pct:.0}% of the idle)", fmt_us(largest_us)));
        fix = format!("one gap holds {largest_pct:.0}% of the idle: likely one-time work (warm-up, the first iteration, a one-off encoder, a blocking copy or cudaFree); narrow the window to steady-state steps (--range, or torch.profiler.schedule(wait=1, warmup=1, active=3)) before acting on it; then {fix}");
    }
    evidence.extend(f.graph_line().map(|l| format!("graphs: {l}")));
    // When the host was blocked in syncs for most of the idle, feeding the GPU faster changes
    // nothing until those go: say so first.
    let sync_idle_us: f64 = f.r.idle.syncs.iter().map(|s| s.time_us).sum();
    if sync_idle_us > 0.5 * g.idle_us {
        evidence.push(format!("of it, the CPU blocked in synchronising calls = {}", fmt_us(sync_idle_us)));
        fix = format!("{:.0}% of the idle is the CPU blocked in synchronising calls (see host_sync): remove those first; then {fix}", sync_idle_us / g.idle_us * 100.0);
    }
    fired(
        None,
        if idle_pct > IDLE_SHARE_CRITICAL { Severity::Critical } else { Severity::Warning },
        format!("The GPU is idle {idle_pct:.1}% of the traced span (>{IDLE_SHARE:.0}% is high): the host is not feeding it."),
        evidence,
        fix,
    )
}

pub(super) fn launch_bound(f: &Facts) -> Option<Fired> {
    let l = &f.r.launch;
    if l.launched_kernels < LAUNCH_BOUND_MIN_KERNELS {
        return None;
    }
    let share = l.shorter_than_launch as f64 * 100.0 / l.launched_kernels as f64;
    // Beside the launch call: the CPU time of each op that launches kernels against the GPU
    // time of its kernels. When the CPU takes longer per op than the GPU and the GPU runs dry
    // between those kernels, the host sets the pace, whatever one launch call costs.
    let o = f.x.launching_ops;
    let v = launch_verdict(&o, f.span());
    let (cpu_per_op, kernel_per_op) = v.as_ref().map_or((0.0, 0.0), |v| (v.cpu_per_op_us, v.kernel_per_op_us));
    let idle_us = o.idle_ns as f64 / 1000.0;
    let idle_pct = idle_us / f.span() * 100.0;
    let by_op = v.is_some_and(|v| v.launch_bound);
    // Steps judged one by one: a launch-bound step among steps that are not can be averaged
    // away over the trace.
    let bound_steps: Vec<&crate::report::StepLaunch> =
        f.r.steps.iter().filter_map(|s| s.launch.as_ref().filter(|l| l.launch_bound)).collect();
    let steps_idle_us: f64 = bound_steps.iter().map(|l| l.idle_us).sum();
    if !by_op && bound_steps.is_empty() && share <= LAUNCH_BOUND_SHARE {
        return None;
    }
    let mut evidence = Vec::new();
    if o.ops > 0 {
        // One line: a link carries every rank's hints.
        evidence.push(format!(
            "per launching op: CPU {} vs kernels {} ({} ops, sync waits left out); GPU idle between their kernels {} ({idle_pct:.1}%)",
            fmt_us(cpu_per_op),
            fmt_us(kernel_per_op),
            o.ops,
            fmt_us(idle_us)
        ));
    }
    evidence.extend([
        format!(
            "kernels shorter than their launch call = {} of {} launched one by one",
            l.shorter_than_launch, l.launched_kernels
        ),
        format!("time in launch calls = {}", fmt_us(l.launch_call_us)),
        format!("mean kernel = {}", fmt_us(f.r.gpu.kernel_time_us / f.r.gpu.kernel_count.max(1) as f64)),
    ]);
    evidence.extend(f.graph_line().map(|l| format!("graphs (their kernels not counted above): {l}")));
    evidence.extend(launch_bound_steps(f));
    let fix = if l.graph_kernels > 0 {
        "graphs replay part of the work already: capture the kernels still launched one by one between replays into the graph as well, or fuse them (torch.compile)"
    } else {
        "fuse small kernels (torch.compile), capture the step in CUDA graphs, or raise the batch size so each kernel does more work"
    };
    let message = if by_op {
        format!(
            "Each op that launches kernels takes {} of CPU time against {} of kernel time, and the GPU idles {} ({idle_pct:.1}% of the span) between those kernels: the run is launch-bound ({share:.1}% of the kernels ran shorter than their launch call).",
            fmt_us(cpu_per_op),
            fmt_us(kernel_per_op),
            fmt_us(idle_us)
        )
    } else if !bound_steps.is_empty() {
        format!(
            "{} of {} steps are launch-bound (their ops take more CPU time than their kernels take GPU time, and the GPU idles {} between those kernels), though the trace as a whole is not.",
            bound_steps.len(),
            f.r.steps.len(),
            fmt_us(steps_idle_us)
        )
    } else {
        format!("{share:.1}% of individually launched kernels ran shorter than the CPU call that launched them: the run is launch-bound.")
    };
    // At stake: the GPU's idle between the kernels those ops launched (in the launch-bound
    // steps only, when only they are).
    let stake = match (by_op, bound_steps.is_empty()) {
        (false, false) => steps_idle_us,
        _ if o.ops > 0 => idle_us,
        _ => (f.r.idle.host_wait_us + f.r.idle.kernel_wait_us).min(f.r.gpu.idle_us),
    };
    fired(Some(stake), Severity::Warning, message, evidence, fix)
}

/// "launch-bound steps: 1 of 2 (ProfilerStep#0: 1.20 ms idle between one-by-one kernels)",
/// when the trace has steps judged.
fn launch_bound_steps(f: &Facts) -> Option<String> {
    let judged = f.r.steps.iter().filter(|s| s.launch.is_some()).count();
    if judged == 0 {
        return None;
    }
    let bound: Vec<String> =
        f.r.steps
            .iter()
            .filter_map(|s| {
                s.launch.as_ref().filter(|l| l.launch_bound).map(|l| format!("{}: {}", s.name, fmt_us(l.idle_us)))
            })
            .collect();
    let listed: Vec<&str> = bound.iter().take(5).map(String::as_str).collect();
    Some(format!(
        "launch-bound steps: {} of {judged}{}",
        bound.len(),
        if listed.is_empty() {
            String::new()
        } else {
            format!(
                " ({}{}; idle between their one-by-one kernels)",
                listed.join(", "),
                if bound.len() > 5 { ", ..." } else { "" }
            )
        }
    ))
}

pub(super) fn host_sync(f: &Facts) -> Option<Fired> {
    // Waiting on the GPU costs something only when the GPU then runs dry: a CPU that is
    // ahead and blocks in cudaDeviceSynchronize while the GPU stays busy is fine.
    let l = &f.r.launch;
    let sync_idle_us: f64 = f.r.idle.syncs.iter().map(|s| s.time_us).sum();
    let sync_pct = sync_idle_us / f.span() * 100.0;
    let idle_pct = f.idle_pct();
    if sync_pct <= SYNC_SHARE || idle_pct <= IDLE_SHARE {
        return None;
    }
    let top = f.r.idle.syncs.iter().max_by(|a, b| a.time_us.total_cmp(&b.time_us));
    fired(
        Some(sync_idle_us),
        Severity::Warning,
        format!("The GPU idles {} while the CPU is blocked in synchronising calls ({sync_pct:.1}% of the GPU span; the GPU is idle {idle_pct:.1}% of it): syncs serialise host and device.", fmt_us(sync_idle_us)),
        {
            let mut e = vec![
                format!("sync time overlapping GPU idle = {}", fmt_us(sync_idle_us)),
                format!("all synchronising calls = {}", fmt_us(l.sync_call_us)),
                format!("GPU idle = {}", fmt_us(f.r.gpu.idle_us)),
            ];
            if let Some(t) = top {
                e.push(format!("largest: {} = {} in {} calls", t.name, fmt_us(t.time_us), t.count));
            }
            e
        },
        top.map_or(SYNC_FIX, |t| sync_fix(blocking_call(&t.name))),
    )
}

const SYNC_FIX: &str = "remove implicit syncs in the step (.item(), .cpu(), .tolist(), printing tensors, torch.cuda.synchronize()); keep values on the GPU until the step ends";

/// The fix for the kind of call that holds most of the sync time: a free and a blocking copy
/// are not removed the way an explicit synchronize is.
fn sync_fix(kind: BlockingCall) -> &'static str {
    match kind {
        BlockingCall::Free => "most of it is device frees, each of which waits for the whole device: PyTorch's caching allocator frees memory when torch.cuda.empty_cache() is called and when an allocation fails and is retried after freeing its cache (torch.cuda.memory_stats()['num_alloc_retries'] counts those): remove empty_cache() calls from the step, lower peak memory (smaller batch, activation checkpointing) or reduce fragmentation (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True); a library calling cudaFree/hipFree itself (workspaces) needs its own caching",
        BlockingCall::BlockingCopy => "most of it is blocking copies: copy from pinned memory with non_blocking=True (DataLoader(pin_memory=True)), and avoid device-to-host copies in the step (.cpu(), .item(), .tolist()); keep values on the GPU until the step ends",
        BlockingCall::Synchronize => SYNC_FIX,
    }
}

pub(super) fn collective_share(f: &Facts) -> Option<Fired> {
    let comm_pct = f.share(Bucket::Communication);
    if comm_pct <= COLLECTIVE_SHARE {
        return None;
    }
    let fix = collective_fix(f);
    fired(
        None,
        Severity::Warning,
        format!("Communication takes {comm_pct:.1}% of GPU kernel time (>{COLLECTIVE_SHARE:.0}% is high)."),
        vec![
            format!("communication kernel time = {comm_pct:.1}%"),
            format!("exposed communication = {}", fmt_us(f.r.gpu.exposed_comm_us)),
        ],
        fix,
    )
}

/// The collective advice, each part only where the trace shows what it is about.
fn collective_fix(f: &Facts) -> String {
    let count =
        |pred: &dyn Fn(&str) -> bool| f.r.ops.iter().filter(|o| pred(&o.name)).map(|o| o.count).max().unwrap_or(0);
    // Gradient accumulation: more loss backward passes than ProfilerSteps (one optimizer step
    // each); without steps it cannot be told.
    let loss_backward = count(&|n| {
        n.ends_with("_loss_backward") || n.ends_with("nll_loss2d_backward") || n == "aten::_log_softmax_backward_data"
    });
    let steps = f.r.steps.len() as u64;
    let accumulation = steps > 0 && loss_backward > steps;
    let expert_parallel = f.r.collectives.iter().any(|c| c.name == "alltoall");
    let mut parts: Vec<&str> = Vec::new();
    if f.r.training {
        if accumulation {
            parts.push("gradients are accumulated (more loss backward passes than profiler steps): wrap the micro-steps before the last in no_sync() so only the last all-reduces");
        }
        parts.push("check DDP's bucket size (bucket_cap_mb) and that the all-reduce overlaps the backward pass; with FSDP, overlap its all-gather / reduce-scatter (forward and backward prefetch): sharding moves as many bytes as an all-reduce, it does not cut them");
        if expert_parallel {
            parts.push("for the expert-parallel all-to-all, balance experts across ranks and overlap dispatch/combine with compute");
        }
    } else {
        parts.push("inference: lower the tensor-parallel degree or use a custom / fused all-reduce (vLLM/SGLang custom all-reduce, all-reduce fused with RMSNorm), keep tensor parallelism within one NVLink domain");
        if expert_parallel {
            parts.push("for the expert-parallel all-to-all, overlap dispatch/combine with compute (two-batch overlap)");
        }
    }
    parts.join("; ")
}

pub(super) fn exposed_comm(f: &Facts) -> Option<Fired> {
    let g = &f.r.gpu;
    if g.comm_us <= 0.0 {
        return None;
    }
    let exposed_pct = g.exposed_comm_us / f.span() * 100.0;
    if exposed_pct <= EXPOSED_COMM_SHARE {
        return None;
    }
    let fix = if f.r.training {
        "overlap communication with compute: DDP bucketing / gradient_as_bucket_view, FSDP prefetch (forward_prefetch, backward_prefetch), avoid syncs that serialise the NCCL stream"
    } else {
        "overlap communication with compute (micro-batch / two-batch overlap, async tensor parallelism), or fuse the all-reduce with the following norm"
    };
    fired(
        None,
        Severity::Warning,
        format!("{exposed_pct:.1}% of the span is communication not hidden behind computation ({:.1}% of communication overlaps compute).", g.overlap_pct),
        vec![
            format!("exposed communication = {}", fmt_us(g.exposed_comm_us)),
            format!("communication = {}", fmt_us(g.comm_us)),
            format!("overlap = {:.1}%", g.overlap_pct),
        ],
        fix,
    )
}

pub(super) fn dataloader(f: &Facts) -> Option<Fired> {
    let x = f.x;
    // ProfilerStep spans when there are some, else the CPU extent of the trace.
    let (whole, what) =
        if x.cpu_step_ns > 0 { (x.cpu_step_ns, "step time") } else { (x.cpu_extent_ns, "traced CPU time") };
    if whole <= 0 || x.dataloader_ns <= 0 {
        return None;
    }
    let pct = x.dataloader_ns as f64 * 100.0 / whole as f64;
    if pct <= DATALOADER_SHARE {
        return None;
    }
    fired(
        Some((x.dataloader_ns as f64 / 1000.0).min(f.r.gpu.idle_us)),
        Severity::Warning,
        format!("The data loader takes {pct:.1}% of {what} on the CPU."),
        vec![format!("DataLoader time = {}", fmt_us(x.dataloader_ns as f64 / 1000.0)), format!("{what} = {}", fmt_us(whole as f64 / 1000.0))],
        "raise num_workers, set pin_memory=True and persistent_workers=True, prefetch; move decoding/augmentation off the training process",
    )
}
