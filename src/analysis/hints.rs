//! Hints: a table of typed rules. Each rule reads the finished report (plus a few numbers the
//! report does not carry), and fires with a severity, a message, the numbers behind it and a
//! fix that fits the trace (training or inference, the GPU generation). The seed's
//! bucket-share rules keep its thresholds (15% / 15% / 8%).

use super::build::Extra;
use super::generation::{generation, Generation};
use super::stakes::derived_stake;
pub use super::stakes::SMALL_STAKE_PCT;
use super::taxonomy::{Backend, Bucket};
use crate::report::{Hint, Severity, TraceReport};
use crate::vocab::fmt_us;
pub use crate::vocab::HintId;

/// Thresholds, in one place so docs/definitions.md can quote them.
pub const COLLECTIVE_SHARE: f64 = 15.0;
pub const ELEMENTWISE_SHARE: f64 = 15.0;
pub const MEMORY_SHARE: f64 = 8.0;
pub const CORE_COMPUTE_LOW: f64 = 50.0;
pub const IDLE_SHARE: f64 = 10.0;
pub const IDLE_SHARE_CRITICAL: f64 = 30.0;
pub const LAUNCH_BOUND_SHARE: f64 = 50.0;
pub const LAUNCH_BOUND_MIN_KERNELS: u64 = 100;
pub const EXPOSED_COMM_SHARE: f64 = 10.0;
pub const HOST_COPY_SHARE: f64 = 10.0;
pub const DATALOADER_SHARE: f64 = 10.0;
pub const SIMT_GEMM_SHARE: f64 = 20.0;
pub const SYNC_SHARE: f64 = 10.0;

/// What a rule reads.
pub struct Facts<'a> {
    pub r: &'a TraceReport,
    pub x: &'a Extra,
}

impl Facts<'_> {
    fn share(&self, b: Bucket) -> f64 {
        self.r.buckets.iter().find(|x| x.id == b).map(|x| x.pct).unwrap_or(0.0)
    }
    fn span(&self) -> f64 {
        self.r.gpu.span_us.max(f64::MIN_POSITIVE)
    }
    fn idle_pct(&self) -> f64 {
        self.r.gpu.idle_us / self.span() * 100.0
    }
}

struct Fired {
    /// The GPU time the hint is about (what fixing it could win at most), in microseconds;
    /// None where the report's summary gives it ([`derived_stake`]).
    stake_us: Option<f64>,
    severity: Severity,
    message: String,
    evidence: Vec<String>,
    fix: String,
}

fn fired(
    stake_us: Option<f64>,
    severity: Severity,
    message: String,
    evidence: Vec<String>,
    fix: impl Into<String>,
) -> Option<Fired> {
    Some(Fired { stake_us, severity, message, evidence, fix: fix.into() })
}

type Rule = fn(&Facts) -> Option<Fired>;

/// The rules, in report order for equal time at stake.
static RULES: &[(HintId, Rule)] = &[
    (HintId::AttentionNotFlash, attention_not_flash),
    (HintId::EagerAttention, eager_attention),
    (HintId::GpuIdle, gpu_idle),
    (HintId::LaunchBound, launch_bound),
    (HintId::HostSync, host_sync),
    (HintId::CollectiveShare, collective_share),
    (HintId::ExposedComm, exposed_comm),
    (HintId::ElementwiseShare, elementwise_share),
    (HintId::MemoryShare, memory_share),
    (HintId::MemcpyShare, memcpy_share),
    (HintId::Dataloader, dataloader),
    (HintId::NoTensorCores, no_tensor_cores),
    (HintId::CoreComputeLow, core_compute_low),
];

/// Evaluates every rule. Hints are ranked by the GPU time they put at stake, largest first (table
/// order for equal stakes); a hint whose stake is under [`SMALL_STAKE_PCT`] of the span is info.
pub fn hints(r: &TraceReport, x: &Extra) -> Vec<Hint> {
    if !r.has_gpu || r.gpu.kernel_time_us <= 0.0 {
        return Vec::new();
    }
    let f = Facts { r, x };
    let small = f.span() * SMALL_STAKE_PCT / 100.0;
    let mut out: Vec<Hint> = RULES
        .iter()
        .filter_map(|(id, rule)| {
            rule(&f).map(|h| {
                // Whole microseconds: a bound, not a measurement to the nanosecond.
                let stake_us = h.stake_us.or_else(|| derived_stake(*id, r)).unwrap_or(0.0).max(0.0).round();
                Hint {
                    id: *id,
                    severity: if stake_us < small { Severity::Info } else { h.severity },
                    message: h.message,
                    evidence: h.evidence,
                    fix: h.fix,
                    stake_us,
                }
            })
        })
        .collect();
    out.sort_by(|a, b| b.stake_us.total_cmp(&a.stake_us));
    out
}

fn gpu_idle(f: &Facts) -> Option<Fired> {
    let g = &f.r.gpu;
    let idle_pct = f.idle_pct();
    if idle_pct <= IDLE_SHARE {
        return None;
    }
    let fix = if f.r.training {
        "look at the CPU timeline in the gaps: data loading, Python overhead, host syncs (.item(), .cpu(), print) or small kernels; try CUDA graphs / torch.compile(mode=\"reduce-overhead\"), larger batches, pinned-memory non_blocking copies"
    } else {
        "look at the CPU timeline in the gaps: request scheduling, sampling and Python overhead between forward passes; capture decode steps in CUDA graphs, batch more requests, overlap scheduling with GPU work"
    };
    fired(
        None,
        if idle_pct > IDLE_SHARE_CRITICAL { Severity::Critical } else { Severity::Warning },
        format!("The GPU is idle {idle_pct:.1}% of the traced span (>{IDLE_SHARE:.0}% is high): the host is not feeding it."),
        vec![
            format!("idle = {}", fmt_us(g.idle_us)),
            format!("span = {}", fmt_us(g.span_us)),
            format!("busy = {}", fmt_us(g.busy_us)),
            format!("gaps > 50 us = {} totalling {}", f.x.idle_gaps.0, fmt_us(f.x.idle_gaps.1 as f64 / 1000.0)),
        ],
        fix,
    )
}

fn launch_bound(f: &Facts) -> Option<Fired> {
    let l = &f.r.launch;
    if l.launched_kernels < LAUNCH_BOUND_MIN_KERNELS {
        return None;
    }
    let share = l.shorter_than_launch as f64 * 100.0 / l.launched_kernels as f64;
    if share <= LAUNCH_BOUND_SHARE {
        return None;
    }
    let mut evidence = vec![
        format!(
            "kernels shorter than their launch call = {} of {} launched one by one",
            l.shorter_than_launch, l.launched_kernels
        ),
        format!("time in launch calls = {}", fmt_us(l.launch_call_us)),
        format!("mean kernel = {}", fmt_us(f.r.gpu.kernel_time_us / f.r.gpu.kernel_count.max(1) as f64)),
    ];
    if l.graph_kernels > 0 {
        evidence.push(format!("kernels replayed by graph launches (not counted) = {}", l.graph_kernels));
    }
    fired(
        Some((f.r.idle.host_wait_us + f.r.idle.kernel_wait_us).min(f.r.gpu.idle_us)),
        Severity::Warning,
        format!("{share:.1}% of individually launched kernels ran shorter than the CPU call that launched them: the run is launch-bound."),
        evidence,
        "fuse small kernels (torch.compile), capture the step in CUDA graphs, or raise the batch size so each kernel does more work",
    )
}

fn host_sync(f: &Facts) -> Option<Fired> {
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
        "remove implicit syncs in the step (.item(), .cpu(), .tolist(), printing tensors, torch.cuda.synchronize()); keep values on the GPU until the step ends",
    )
}

fn collective_share(f: &Facts) -> Option<Fired> {
    let comm_pct = f.share(Bucket::Communication);
    if comm_pct <= COLLECTIVE_SHARE {
        return None;
    }
    let fix = if f.r.training {
        "wrap gradient-accumulation micro-steps in no_sync() to skip redundant all-reduces; with FSDP use ZeRO-2/3 sharding to cut the data synchronised per step; check bucket sizes (bucket_cap_mb); for expert parallelism balance experts across ranks and overlap dispatch/combine with compute"
    } else {
        "inference: lower the tensor-parallel degree or use a custom / fused all-reduce (vLLM/SGLang custom all-reduce, all-reduce fused with RMSNorm), keep tensor parallelism within one NVLink domain; for expert parallelism overlap dispatch/combine with compute (two-batch overlap)"
    };
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

fn exposed_comm(f: &Facts) -> Option<Fired> {
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

fn elementwise_share(f: &Facts) -> Option<Fired> {
    let pct = f.share(Bucket::Elementwise);
    if pct <= ELEMENTWISE_SHARE {
        return None;
    }
    fired(
        None,
        Severity::Warning,
        format!("Elementwise / norm / activation kernels take {pct:.1}% of GPU time (>{ELEMENTWISE_SHARE:.0}% is high): memory-bandwidth bound."),
        vec![format!("elementwise share = {pct:.1}%")],
        "fuse norm + activation + residual add (torch.compile, or fused RMSNorm / SiLU-and-mul kernels); fused kernels often save 50% or more of this time",
    )
}

fn memory_share(f: &Facts) -> Option<Fired> {
    // Device-side data movement only: host copies have their own rule.
    let c = &f.r.copies;
    let total = f.r.gpu.kernel_time_us.max(f64::MIN_POSITIVE);
    let host = c.host_to_device_us + c.device_to_host_us;
    let pct = f.share(Bucket::Memory) - host / total * 100.0;
    if pct <= MEMORY_SHARE {
        return None;
    }
    fired(
        Some(pct / 100.0 * total),
        Severity::Warning,
        format!("Device-side copies and layout changes take {pct:.1}% of GPU time (>{MEMORY_SHARE:.0}% is high)."),
        vec![format!("device-side memory movement = {pct:.1}% of GPU time"), format!("device-to-device memcpy = {}", fmt_us(c.device_to_device_us))],
        "check how often permute / transpose / contiguous / .to() / cat run; repeated layout conversions (NCHW <-> NHWC: use channels_last) and dtype casts can usually be removed or fused",
    )
}

fn memcpy_share(f: &Facts) -> Option<Fired> {
    let c = &f.r.copies;
    let host = c.host_to_device_us + c.device_to_host_us;
    let pct = host / f.r.gpu.busy_us.max(f64::MIN_POSITIVE) * 100.0;
    if pct <= HOST_COPY_SHARE {
        return None;
    }
    let pageable_pct = c.pageable_us / host.max(f64::MIN_POSITIVE) * 100.0;
    let fix = if pageable_pct > 50.0 {
        "most host copies use pageable memory, which is slow and blocks the host: pin the source (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with .to(device, non_blocking=True); move data once per step"
    } else {
        "move data to the device once per step and keep it there; avoid host <-> device round trips (.cpu(), .item()) inside the model; overlap copies with compute on a side stream"
    };
    fired(
        Some(host),
        Severity::Warning,
        format!("Host <-> device copies are {pct:.1}% of GPU busy time ({pageable_pct:.0}% of them from or to pageable memory)."),
        vec![
            format!("host-to-device = {}", fmt_us(c.host_to_device_us)),
            format!("device-to-host = {}", fmt_us(c.device_to_host_us)),
            format!("pageable = {}", fmt_us(c.pageable_us)),
            format!("busy = {}", fmt_us(f.r.gpu.busy_us)),
        ],
        fix,
    )
}

fn dataloader(f: &Facts) -> Option<Fired> {
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

fn no_tensor_cores(f: &Facts) -> Option<Fired> {
    let t = &f.r.tensor_cores;
    let known = t.tensor_core_us + t.simt_us;
    if known <= 0.0 {
        return None;
    }
    let simt = t.simt_us / known * 100.0;
    if simt <= SIMT_GEMM_SHARE {
        return None;
    }
    let fix = match generation(f.r) {
        // The hardware has none: nothing to switch on.
        Generation::NoTensorCores => return None,
        Generation::Fp16Only => "this GPU's tensor cores run fp16 only (no TF32 or bf16 before Ampere): train with torch.autocast(\"cuda\", dtype=torch.float16) and a GradScaler; keep GEMM dims multiples of 8",
        Generation::Tf32 => "use bf16 autocast (torch.autocast(\"cuda\", dtype=torch.bfloat16)), or at least allow TF32 for fp32 GEMMs and convolutions: torch.backends.cuda.matmul.allow_tf32 = True and torch.backends.cudnn.allow_tf32 = True (or torch.set_float32_matmul_precision(\"high\"))",
        Generation::Amd => "use bf16 autocast (torch.autocast(\"cuda\", dtype=torch.bfloat16)) so hipBLASLt/MIOpen pick MFMA kernels; on MI300 fp32 GEMMs can also use xf32 via torch.set_float32_matmul_precision(\"high\")",
        Generation::Unknown => "use reduced precision: bf16 autocast on Ampere and newer (or allow TF32 there), fp16 autocast with a GradScaler on Volta/Turing; keep GEMM dims multiples of 8",
    };
    fired(
        Some(t.simt_us),
        Severity::Warning,
        format!("{simt:.1}% of GEMM / convolution time runs in kernels that do not use tensor cores (fp32 SIMT: sgemm, gemv, fp32 cuDNN winograd / FFT / implicit GEMM)."),
        vec![
            format!("non-tensor-core GEMM/conv = {}", fmt_us(t.simt_us)),
            format!("tensor-core GEMM/conv = {}", fmt_us(t.tensor_core_us)),
            format!("matrix-vector GEMM (SIMT by shape, not counted) = {}", fmt_us(t.vector_us)),
            format!("device = {} (compute capability {})", f.r.device.name.as_deref().unwrap_or("unknown"), f.r.device.compute_capability.as_deref().unwrap_or("unknown")),
        ],
        fix,
    )
}

fn attention_not_flash(f: &Facts) -> Option<Fired> {
    let a = &f.r.attention;
    if !matches!(a.backend, Backend::Math | Backend::MemEfficient | Backend::Cudnn) {
        return None;
    }
    let severity = if a.backend == Backend::Math { Severity::Critical } else { Severity::Info };
    let mut evidence = vec![format!("{} attention = {}", a.backend.id(), fmt_us(a.time_us))];
    evidence.extend(a.not_flash_reasons.iter().cloned());
    fired(
        None,
        severity,
        format!(
            "Attention runs the {} backend, not FlashAttention{}.",
            a.backend.id(),
            f.r.device.name.as_deref().map(|d| format!(" (device: {d})")).unwrap_or_default()
        ),
        evidence,
        a.fix.clone().unwrap_or_default(),
    )
}

fn eager_attention(f: &Facts) -> Option<Fired> {
    let a = &f.r.attention;
    let eager_us: f64 = a.evidence.iter().filter(|e| e.backend == Backend::Eager).map(|e| e.time_us).sum();
    if eager_us <= 0.0 {
        return None;
    }
    let pct = eager_us / f.r.gpu.kernel_time_us * 100.0;
    let mut evidence = vec![format!("hand-written attention = {} ({pct:.1}% of GPU time)", fmt_us(eager_us))];
    evidence.extend(
        a.evidence
            .iter()
            .filter(|e| e.backend == Backend::Eager)
            .take(3)
            .map(|e| format!("in {} = {}", e.name, fmt_us(e.time_us))),
    );
    fired(
        None,
        if pct > 20.0 { Severity::Critical } else { Severity::Warning },
        format!("Attention is written by hand (matmul, softmax, matmul): {pct:.1}% of GPU time, with the attention matrix written to memory."),
        evidence,
        super::attention::EAGER_FIX,
    )
}

fn core_compute_low(f: &Facts) -> Option<Fired> {
    let core = f.share(Bucket::Gemm) + f.share(Bucket::Attention);
    if core >= CORE_COMPUTE_LOW {
        return None;
    }
    fired(
        None,
        Severity::Info,
        format!("Matmul + attention (core compute) is {core:.1}% of GPU time (<{CORE_COMPUTE_LOW:.0}%): most time goes to non-core ops, so there is large room to optimise. Llama-3-style training typically shows 60-75%."),
        vec![format!("GEMM + attention = {core:.1}%")],
        "look at the largest non-GEMM buckets above; fuse or remove them",
    )
}
