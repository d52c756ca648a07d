//! Hints about how the GPU computed: bucket shares, copies, tensor cores, attention.

use super::facts::*;
use crate::analysis::passes::generation::{generation, Generation};
use crate::analysis::rules::taxonomy::{Backend, Bucket};
use crate::report::Severity;
use crate::vocab::fmt_us;

pub(super) fn elementwise_share(f: &Facts) -> Option<Fired> {
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

pub(super) fn memory_share(f: &Facts) -> Option<Fired> {
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
        crate::analysis::passes::attention::EAGER_FIX,
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
        format!("Matmul + attention (core compute) is {core:.1}% of GPU time (<{CORE_COMPUTE_LOW:.0}%): most time goes to non-core ops, so there is large room to optimise. Llama-3-style training typically shows 60-75%."),
        vec![format!("GEMM + attention = {core:.1}%")],
        "look at the largest non-GEMM buckets above; fuse or remove them",
    )
}
