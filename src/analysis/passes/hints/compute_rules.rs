//! Hints about how the GPU computed: bucket shares, copies, tensor cores, attention.

use super::facts::*;
use crate::analysis::passes::generation::{generation, Generation};
use crate::analysis::rules::taxonomy::{Backend, Bucket, KernelFacts, Unfusable, TE_LIBRARY};
use crate::report::Severity;
use crate::vocab::fmt_us;

pub(super) fn elementwise_share(f: &Facts) -> Option<Fired> {
    let pct = f.share(Bucket::Elementwise);
    if pct <= ELEMENTWISE_SHARE {
        return None;
    }
    let total = f.r.gpu.kernel_time_us.max(f64::MIN_POSITIVE);
    let fused_us = f.x.inductor_elementwise_ns as f64 / 1000.0;
    let fused_pct = fused_us / total * 100.0;
    let mut evidence = vec![format!("elementwise share = {pct:.1}%")];
    if fused_us > 0.0 {
        evidence.push(format!("already fused by torch.compile (Inductor triton_poi/red/per_fused_* kernels) = {} ({fused_pct:.1}% of GPU time)", fmt_us(fused_us)));
    }
    // Fusing fits only the time not fused yet; Inductor's kernels are fused already, and what
    // they cost is the bytes they move.
    if pct - fused_pct > ELEMENTWISE_SHARE {
        let elementwise_us = pct / 100.0 * total;
        let batch_norm_us: f64 = f.r.ops.iter().filter(|o| o.name.contains("batch_norm")).map(|o| o.time_us).sum();
        // A CNN's elementwise time is mostly BatchNorm, whose fixes are not an LLM's.
        let fix = if batch_norm_us > 0.5 * elementwise_us {
            evidence.push(format!(
                "BatchNorm ops (forward and backward) = {} ({:.0}% of the elementwise time)",
                fmt_us(batch_norm_us),
                batch_norm_us / elementwise_us * 100.0
            ));
            if f.r.training {
                "most of it is BatchNorm: torch.compile fuses its normalisation with the activation and residual add that follow; try channels_last memory format (NHWC), for which the convolution and BatchNorm libraries have their own kernels"
            } else {
                "most of it is BatchNorm: in inference, fold it into the convolution before it (torch.fx / torch.ao.quantization.fuse_modules, or torch.compile), which removes these kernels"
            }
        } else {
            "fuse norm + activation + residual add (torch.compile, or fused RMSNorm / SiLU-and-mul kernels); fused kernels often save 50% or more of this time"
        };
        return fired(
            None,
            Severity::Warning,
            format!("Elementwise / norm / activation kernels take {pct:.1}% of GPU time (>{ELEMENTWISE_SHARE:.0}% is high): memory-bandwidth bound."),
            evidence,
            fix,
        );
    }
    let bandwidth = bandwidth_of(f, Unfusable::Inductor);
    evidence.extend(bandwidth.as_ref().map(|b| b.line()));
    fired(
        None,
        Severity::Warning,
        format!("Elementwise / norm / activation kernels take {pct:.1}% of GPU time, {fused_pct:.1}% in kernels torch.compile already fused: memory-bandwidth bound, not unfused."),
        evidence,
        format!(
            "these kernels are fused already, so fusing is not the fix: their cost is the bytes they move{}; move fewer bytes (bf16 activations, fewer saved activations: activation checkpointing trades them for recompute), and where they run far below the bandwidth, let Inductor tune them (torch.compile(mode=\"max-autotune\"), coordinate_descent_tuning) and keep their inputs contiguous",
            bandwidth.map(|b| format!(" ({:.0}% of the bandwidth, time-weighted)", b.pct)).unwrap_or_default()
        ),
    )
}

/// The time-weighted % of the memory bandwidth of the kernels of one kind among those whose
/// work is known, and the time that covers.
struct Bandwidth {
    pct: f64,
    covered_us: f64,
    kernels: usize,
}

impl Bandwidth {
    fn line(&self) -> String {
        format!(
            "their bandwidth = {:.0}% of the device's (time-weighted over {} kernels, {} with known bytes)",
            self.pct,
            self.kernels,
            fmt_us(self.covered_us)
        )
    }
}

fn bandwidth_of(f: &Facts, kind: Unfusable) -> Option<Bandwidth> {
    let e = f.r.efficiency.as_ref()?;
    let (mut weighted, mut covered, mut kernels) = (0.0, 0.0, 0);
    for k in &e.kernels {
        let Some(p) = k.pct_of_bandwidth else { continue };
        if KernelFacts::of(&k.name).unfusable == Some(kind) {
            weighted += p * k.time_us;
            covered += k.time_us;
            kernels += 1;
        }
    }
    (covered > 0.0).then(|| Bandwidth { pct: weighted / covered, covered_us: covered, kernels })
}

pub(super) fn memory_share(f: &Facts) -> Option<Fired> {
    // Device-side data movement only: host copies have their own rule.
    let c = &f.r.copies;
    let total = f.r.gpu.kernel_time_us.max(f64::MIN_POSITIVE);
    let host = c.host_to_device_us + c.device_to_host_us;
    let pct = f.share(Bucket::Memory) - host / total * 100.0;
    if pct <= MEMORY_SHARE {
        return None;
    }
    let device_us = pct / 100.0 * total;
    let index_us = f.x.index_copy_ns as f64 / 1000.0;
    let mut evidence = vec![
        format!("device-side memory movement = {pct:.1}% of GPU time"),
        format!("device-to-device memcpy = {}", fmt_us(c.device_to_device_us)),
    ];
    if index_us > 0.0 {
        evidence.push(format!(
            "index copies (ATen index / gather / scatter kernels) = {} ({:.0}% of it)",
            fmt_us(index_us),
            index_us / device_us * 100.0
        ));
    }
    // Index copies are the data movement the indexing asks for, not layout conversions to remove.
    let fix = if index_us > device_us / 2.0 {
        evidence.extend(bandwidth_of(f, Unfusable::IndexCopy).map(|b| b.line()));
        "most of it is index copies (indexing, gather, scatter, index_put, masked ops): data movement the indexing asks for, not elementwise math to fuse; gather less (index once and reuse the result, select whole contiguous rows, sort the indices), avoid boolean masks that call nonzero and sync, and keep tensors in the order they are read"
    } else {
        "check how often permute / transpose / contiguous / .to() / cat run; repeated layout conversions (NCHW <-> NHWC: use channels_last) and dtype casts can usually be removed or fused"
    };
    fired(
        Some(device_us),
        Severity::Warning,
        format!("Device-side copies and layout changes take {pct:.1}% of GPU time (>{MEMORY_SHARE:.0}% is high)."),
        evidence,
        fix,
    )
}

pub(super) fn memcpy_share(f: &Facts) -> Option<Fired> {
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

pub(super) fn no_tensor_cores(f: &Facts) -> Option<Fired> {
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

pub(super) fn attention_not_flash(f: &Facts) -> Option<Fired> {
    let a = &f.r.attention;
    if a.backend == Backend::Cudnn {
        return cudnn_attention(f);
    }
    if !matches!(a.backend, Backend::Math | Backend::MemEfficient) {
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

/// PyTorch's SDPA ran cuDNN attention. On compute capability 9.x and 10.x PyTorch tries cuDNN
/// before flash (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp,
/// check_prefer_cudnn_attention / priority_order), and it is often the fastest there: it is
/// only named. Elsewhere flash comes first, so cuDNN ran by request (sdpa_kernel) or with
/// flash disabled: comparing with flash is worth it, unless the inputs rule flash out anyway.
/// TransformerEngine's cuDNN attention is TE's own choice and gets nothing.
fn cudnn_attention(f: &Facts) -> Option<Fired> {
    let a = &f.r.attention;
    let cc = f.r.device.compute_capability.as_deref();
    let major = cc.and_then(|c| c.split('.').next()).and_then(|m| m.parse::<u32>().ok());
    if a.library.as_deref() == Some(TE_LIBRARY) || matches!(major, Some(9 | 10)) {
        return None;
    }
    // Inputs flash cannot take (fp32, head dim, a mask) settle it; a missing record does not.
    let blockers: Vec<&String> =
        a.not_flash_reasons.iter().filter(|r| !r.starts_with("no SDPA op arguments")).collect();
    if !blockers.is_empty() {
        return None;
    }
    let mut evidence = vec![
        format!("cudnn attention = {}", fmt_us(a.time_us)),
        format!(
            "device = {} (compute capability {})",
            f.r.device.name.as_deref().unwrap_or("unknown"),
            cc.unwrap_or("unknown")
        ),
    ];
    evidence.extend(a.not_flash_reasons.iter().cloned());
    fired(
        None,
        Severity::Info,
        "Attention runs PyTorch SDPA's cuDNN backend; on this GPU PyTorch tries flash first, so cuDNN ran by request (sdpa_kernel) or with flash disabled.".to_string(),
        evidence,
        "compare: time the step under `with torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION):` and under SDPBackend.CUDNN_ATTENTION, and keep the faster (cuDNN attention is often the fastest on H100 and newer, less often elsewhere)",
    )
}

pub(super) fn eager_attention(f: &Facts) -> Option<Fired> {
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
        crate::analysis::passes::attention::eager_fix(a.hf_model.as_ref()),
    )
}

pub(super) fn core_compute_low(f: &Facts) -> Option<Fired> {
    let core = f.share(Bucket::Gemm) + f.share(Bucket::Attention);
    if core >= CORE_COMPUTE_LOW {
        return None;
    }
    fired(
        None,
        Severity::Info,
        format!(
            "Matmul + attention (core compute) is {core:.1}% of GPU time (<{CORE_COMPUTE_LOW:.0}%): most time goes to non-core ops, so there is large room to optimise.{}",
            // The comparison holds for transformers, which a trace with attention kernels is.
            if f.r.attention.total_us > 0.0 { " Llama-3-style training typically shows 60-75%." } else { "" }
        ),
        {
            let mut e = vec![format!("GEMM + attention = {core:.1}%")];
            let comm = f.share(Bucket::Communication);
            if comm > 0.0 {
                e.push(format!("communication = {comm:.1}% (not in this stake: its own hints count it)"));
            }
            e
        },
        "look at the largest non-GEMM buckets above; fuse or remove them",
    )
}
