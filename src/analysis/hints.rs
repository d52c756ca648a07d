//! Hints: a table of rules, each with an id, a threshold, the numbers that triggered it, and
//! a fix. The seed's bucket-share rules keep their thresholds (15% / 15% / 8%).

use super::build::Extra;
use crate::report::{Hint, TraceReport};
use crate::text::fmt_us;

/// Thresholds, in one place so the README can quote them.
pub const COLLECTIVE_SHARE: f64 = 15.0;
pub const ELEMENTWISE_SHARE: f64 = 15.0;
pub const MEMORY_SHARE: f64 = 8.0;
pub const CORE_COMPUTE_LOW: f64 = 50.0;
pub const IDLE_SHARE: f64 = 10.0;
pub const IDLE_SHARE_CRITICAL: f64 = 30.0;
pub const LAUNCH_BOUND_SHARE: f64 = 50.0;
pub const LAUNCH_BOUND_MIN_KERNELS: u64 = 100;
pub const EXPOSED_COMM_SHARE: f64 = 10.0;
pub const MEMCPY_SHARE: f64 = 10.0;
pub const DATALOADER_SHARE: f64 = 10.0;
pub const SIMT_GEMM_SHARE: f64 = 20.0;
pub const SYNC_SHARE: f64 = 10.0;

fn bucket_pct(r: &TraceReport, name: &str) -> f64 {
    r.buckets.iter().find(|b| b.name == name).map(|b| b.pct).unwrap_or(0.0)
}

fn hint(id: &str, severity: &str, message: String, evidence: Vec<String>, fix: &str) -> Hint {
    Hint { id: id.into(), severity: severity.into(), message, evidence, fix: fix.into() }
}

/// Evaluates every rule on a finished report (plus the build's extra numbers).
pub fn hints(r: &TraceReport, b: &Extra) -> Vec<Hint> {
    let mut out = Vec::new();
    if !r.has_gpu || r.gpu.kernel_time_us <= 0.0 {
        return out;
    }
    let g = &r.gpu;
    let span = g.span_us.max(f64::MIN_POSITIVE);

    let idle_pct = g.idle_us / span * 100.0;
    if idle_pct > IDLE_SHARE {
        out.push(hint(
            "gpu_idle",
            if idle_pct > IDLE_SHARE_CRITICAL { "critical" } else { "warning" },
            format!("The GPU is idle {idle_pct:.1}% of the traced span (>{IDLE_SHARE:.0}% is high): the host is not feeding it."),
            vec![
                format!("idle = {}", fmt_us(g.idle_us)),
                format!("span = {}", fmt_us(g.span_us)),
                format!("busy = {}", fmt_us(g.busy_us)),
                format!("gaps > 50 us = {} totalling {}", b.idle_gaps.0, fmt_us(b.idle_gaps.1 as f64 / 1000.0)),
            ],
            "look at the CPU timeline in the gaps: data loading, Python overhead, host syncs (.item(), .cpu(), print) or small kernels; try CUDA graphs / torch.compile(mode=\"reduce-overhead\"), larger batches, pinned-memory non_blocking copies",
        ));
    }

    let l = &r.launch;
    if l.launched_kernels >= LAUNCH_BOUND_MIN_KERNELS {
        let share = l.shorter_than_launch as f64 * 100.0 / l.launched_kernels as f64;
        if share > LAUNCH_BOUND_SHARE {
            out.push(hint(
                "launch_bound",
                "warning",
                format!("{share:.1}% of kernels ran shorter than the CPU call that launched them: the run is launch-bound."),
                vec![
                    format!("kernels shorter than their launch = {} of {}", l.shorter_than_launch, l.launched_kernels),
                    format!("time in launch calls = {}", fmt_us(l.launch_call_us)),
                    format!("mean kernel = {}", fmt_us(g.kernel_time_us / g.kernel_count.max(1) as f64)),
                ],
                "fuse small kernels (torch.compile), capture the step in CUDA graphs, or raise the batch size so each kernel does more work",
            ));
        }
    }

    // Waiting on the GPU costs something only when the GPU then runs dry: a CPU that is
    // ahead and blocks in cudaDeviceSynchronize while the GPU stays busy is fine.
    let sync_pct = l.sync_call_us / span * 100.0;
    if sync_pct > SYNC_SHARE && idle_pct > IDLE_SHARE {
        out.push(hint(
            "host_sync",
            "warning",
            format!("The CPU spends {} in synchronising calls ({sync_pct:.1}% of the GPU span) while the GPU is idle {idle_pct:.1}% of the span: syncs serialise host and device.", fmt_us(l.sync_call_us)),
            vec![format!("synchronize calls = {}", fmt_us(l.sync_call_us)), format!("span = {}", fmt_us(g.span_us)), format!("GPU idle = {}", fmt_us(g.idle_us))],
            "remove implicit syncs in the step (.item(), .cpu(), .tolist(), printing tensors, torch.cuda.synchronize()); keep values on the GPU until the step ends",
        ));
    }

    let comm_pct = bucket_pct(r, "reduce (all-reduce/gather)");
    if comm_pct > COLLECTIVE_SHARE {
        out.push(hint(
            "collective_share",
            "warning",
            format!("Collectives take {comm_pct:.1}% of GPU kernel time (>{COLLECTIVE_SHARE:.0}% is high)."),
            vec![format!("collective kernel time = {comm_pct:.1}%"), format!("exposed communication = {}", fmt_us(g.exposed_comm_us))],
            "wrap gradient-accumulation micro-steps in no_sync() to skip redundant all-reduces; with FSDP use ZeRO-2/3 sharding to cut the data synchronised per step; check bucket sizes (bucket_cap_mb)",
        ));
    }
    if g.comm_us > 0.0 {
        let exposed_pct = g.exposed_comm_us / span * 100.0;
        if exposed_pct > EXPOSED_COMM_SHARE {
            out.push(hint(
                "exposed_comm",
                "warning",
                format!("{exposed_pct:.1}% of the span is communication not hidden behind computation ({:.1}% of communication overlaps compute).", g.overlap_pct),
                vec![
                    format!("exposed communication = {}", fmt_us(g.exposed_comm_us)),
                    format!("communication = {}", fmt_us(g.comm_us)),
                    format!("overlap = {:.1}%", g.overlap_pct),
                ],
                "overlap communication with compute: DDP bucketing / gradient_as_bucket_view, FSDP prefetch (forward_prefetch, backward_prefetch), avoid syncs that serialise the NCCL stream",
            ));
        }
    }

    let elem_pct = bucket_pct(r, "elementwise (norm/act)");
    if elem_pct > ELEMENTWISE_SHARE {
        out.push(hint(
            "elementwise_share",
            "warning",
            format!("Elementwise / norm / activation kernels take {elem_pct:.1}% of GPU time (>{ELEMENTWISE_SHARE:.0}% is high): memory-bandwidth bound."),
            vec![format!("elementwise share = {elem_pct:.1}%")],
            "fuse norm + activation + residual add (torch.compile, apex or Triton fused RMSNorm/SiLU kernels); fused kernels often save 50% or more of this time",
        ));
    }
    let mem_pct = bucket_pct(r, "memory (copy/permute/view)");
    if mem_pct > MEMORY_SHARE {
        out.push(hint(
            "memory_share",
            "warning",
            format!("Memory movement takes {mem_pct:.1}% of GPU time (>{MEMORY_SHARE:.0}% is high): a layout problem."),
            vec![format!("memory movement share = {mem_pct:.1}%"), format!("memcpy/memset busy = {}", fmt_us(g.memory_us))],
            "check how often permute / transpose / contiguous / .to() run; repeated layout conversions and dtype casts can usually be removed",
        ));
    }
    let memcpy_pct = g.memory_us / g.busy_us.max(f64::MIN_POSITIVE) * 100.0;
    if memcpy_pct > MEMCPY_SHARE {
        out.push(hint(
            "memcpy_share",
            "warning",
            format!("memcpy / memset rows are {memcpy_pct:.1}% of GPU busy time."),
            vec![format!("memcpy/memset busy = {}", fmt_us(g.memory_us)), format!("busy = {}", fmt_us(g.busy_us))],
            "use pinned memory with non_blocking=True, move data once per step, avoid host<->device round trips inside the model",
        ));
    }

    if b.cpu_step_ns > 0 {
        let dl_pct = b.dataloader_ns as f64 * 100.0 / b.cpu_step_ns as f64;
        if dl_pct > DATALOADER_SHARE {
            out.push(hint(
                "dataloader",
                "warning",
                format!("The data loader takes {dl_pct:.1}% of step time on the CPU."),
                vec![
                    format!("DataLoader time = {}", fmt_us(b.dataloader_ns as f64 / 1000.0)),
                    format!("step time = {}", fmt_us(b.cpu_step_ns as f64 / 1000.0)),
                ],
                "raise num_workers, set pin_memory=True and persistent_workers=True, prefetch; move decoding/augmentation off the training process",
            ));
        }
    }

    if b.gemm_ns > 0 {
        let simt = b.gemm_simt_ns as f64 * 100.0 / b.gemm_ns as f64;
        if simt > SIMT_GEMM_SHARE {
            out.push(hint(
                "no_tensor_cores",
                "warning",
                format!("{simt:.1}% of GEMM time runs in kernels that do not use tensor cores (fp32 SIMT sgemm/gemv)."),
                vec![format!("non-tensor-core GEMM = {}", fmt_us(b.gemm_simt_ns as f64 / 1000.0)), format!("GEMM = {}", fmt_us(b.gemm_ns as f64 / 1000.0))],
                "train in bf16/fp16 autocast, or allow TF32: torch.backends.cuda.matmul.allow_tf32 = True / torch.set_float32_matmul_precision(\"high\"); pad dims to multiples of 8",
            ));
        }
    }

    let a = &r.attention;
    if matches!(a.backend.as_str(), "math" | "memory-efficient" | "cudnn") {
        let severity = if a.backend == "math" { "critical" } else { "info" };
        let mut evidence = vec![format!("{} attention = {}", a.backend, fmt_us(a.time_us))];
        evidence.extend(a.not_flash_reasons.iter().cloned());
        out.push(hint(
            "attention_not_flash",
            severity,
            format!("Attention runs the {} backend, not FlashAttention{}.", a.backend, match r.device.name.as_deref() {
                Some(d) => format!(" (device: {d})"),
                None => String::new(),
            }),
            evidence,
            a.fix.as_deref().unwrap_or(""),
        ));
    }

    let core = bucket_pct(r, "matmul (GEMM)") + bucket_pct(r, "attention (SDPA/FA)");
    if core < CORE_COMPUTE_LOW {
        out.push(hint(
            "core_compute_low",
            "info",
            format!("Matmul + attention (core compute) is {core:.1}% of GPU time (<{CORE_COMPUTE_LOW:.0}%): most time goes to non-core ops, so there is large room to optimise. Llama-3-style training typically shows 60-75%."),
            vec![format!("GEMM + attention = {core:.1}%")],
            "look at the largest non-GEMM buckets above; fuse or remove them",
        ));
    }
    // Most severe first; the rule order above breaks ties.
    let rank = |s: &str| match s {
        "critical" => 0,
        "warning" => 1,
        _ => 2,
    };
    out.sort_by_key(|h| rank(&h.severity));
    out
}
