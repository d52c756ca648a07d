//! Hints about how far kernels run from the device's roofs, and about what the trace lacks to
//! tell.

use super::facts::*;
use crate::analysis::rules::taxonomy::{KernelFacts, Unfusable};
use crate::report::{Bound, KernelWork, Peaks, Severity, TARGET_PCT};
use crate::vocab::{fmt_us, Bucket};

/// A kernel's name short enough for a hint (cuBLAS names run past 100 characters).
fn clipped(name: &str) -> String {
    const MAX: usize = 64;
    match name.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    }
}

/// One kernel's figures, with where they came from.
fn kernel_line(k: &KernelWork) -> String {
    let of_peak = k.pct_of_peak.map(|p| format!(" ({p:.0}% of the {} peak)", k.precision.map_or("?", |p| p.id())));
    let of_bw = k.pct_of_bandwidth.map(|p| format!(" ({p:.0}% of the bandwidth)"));
    let bound = match k.bound {
        Some(Bound::Compute) => "compute-bound",
        Some(Bound::Memory) => "memory-bound",
        None => "bound unknown",
    };
    format!(
        "{}: {} in {} calls, {:.1} TFLOP/s{}, {:.2} TB/s{}, {}; work from {}{}",
        clipped(&k.short),
        fmt_us(k.time_us),
        k.count,
        k.tflops_per_s,
        of_peak.unwrap_or_default(),
        k.tbps,
        of_bw.unwrap_or_default(),
        bound,
        k.source.id(),
        if k.split { ", split by time between the kernels of one op" } else { "" }
    )
}

pub(super) fn below_roof(f: &Facts) -> Option<Fired> {
    let e = f.r.efficiency.as_ref()?;
    let peaks = e.peaks.as_ref()?;
    let top: Vec<&KernelWork> = e.kernels.iter().filter(|k| k.recoverable_us > 0.0).take(BELOW_ROOF_LISTED).collect();
    let stake: f64 = top.iter().map(|k| k.recoverable_us).sum();
    if stake <= f.span() * BELOW_ROOF_SHARE / 100.0 {
        return None;
    }
    let k = top[0];
    let (pct, roof) = match k.bound {
        Some(Bound::Compute) => (k.pct_of_peak?, "its precision's peak"),
        _ => (k.pct_of_bandwidth?, "the memory bandwidth"),
    };
    let mut evidence: Vec<String> = top.iter().map(|k| kernel_line(k)).collect();
    evidence.extend(ridge_line(k, peaks));
    evidence.push(format!("peaks: {} ({})", peaks.device, peaks.source));
    let fix = match (k.bound, k.bucket, KernelFacts::of(&k.name).unfusable) {
        (Some(Bound::Compute), Bucket::Gemm, _) => "GEMMs far below peak are usually too small or oddly shaped for the tiles: make M, N and K multiples of 64 (128 on Hopper and later), batch small GEMMs together (larger batch, grouped GEMM), keep them in bf16/fp16 (fp8 where accuracy allows), and let torch.compile(mode=\"max-autotune\") pick the kernels",
        (Some(Bound::Compute), Bucket::Attention, _) => "attention far below peak: short sequences or few heads leave the GPU underfilled; pack variable-length sequences (varlen / nested tensors), raise the batch, and use the newest backend for the device (FlashAttention-3 on Hopper, cuDNN / FA on Blackwell, aiter / CK on MI300)",
        // Above the ridge, outside GEMM and attention: what limits it is its math, not its bytes.
        (Some(Bound::Compute), ..) => COMPUTE_BOUND_FIX,
        // Fusing fits neither a kernel Inductor fused already nor an index copy.
        (_, _, None) => "a memory-bound kernel far below the bandwidth is small or badly laid out: fuse it with its neighbours (torch.compile) so its data is read once, and avoid strided or transposed inputs",
        (_, _, Some(Unfusable::Inductor)) => "torch.compile fused this kernel already: it is slow at moving its bytes, not unfused; let Inductor tune it (torch.compile(mode=\"max-autotune\"), coordinate_descent_tuning), keep its inputs contiguous, and move fewer bytes (lower-precision activations)",
        (_, _, Some(Unfusable::IndexCopy)) => "an index copy (index / gather / scatter): data movement whose speed the access pattern sets; gather less, select whole contiguous rows, sort the indices so reads coalesce",
    };
    fired(
        Some(stake),
        Severity::Warning,
        format!(
            "{} took {} at {pct:.0}% of {roof}; at {TARGET_PCT:.0}% of its roof it would take {} (the {} kernels furthest below their roofs: {} recoverable).",
            clipped(&k.short),
            fmt_us(k.time_us),
            fmt_us(k.time_us - k.recoverable_us),
            top.len(),
            fmt_us(stake)
        ),
        evidence,
        fix,
    )
}

/// What limits a compute-bound kernel that is neither a GEMM nor attention.
const COMPUTE_BOUND_FIX: &str = "a compute-bound kernel (its arithmetic intensity is above the ridge point) outside GEMM and attention, far below its precision's peak: its math runs on the CUDA cores, not the tensor cores (no tensor-core path for its dtype or its shape: fp32, fp64, integer, or a loop of small dot products), or too few warps keep the SMs busy (low occupancy: too few blocks, too many registers per thread); express the work as a matmul or fold it into a GEMM's epilogue (bias, activation, scaling fused into the cuBLASLt / CUTLASS / Inductor GEMM), use a library kernel for it (cuDNN, cuBLAS, a fused op) rather than a hand-written loop, or run it in bf16/fp16 where a tensor-core kernel exists";

/// The kernel's side of the roofline: its arithmetic intensity against the ridge point of its
/// precision on this device (peak over bandwidth).
fn ridge_line(k: &KernelWork, peaks: &Peaks) -> Option<String> {
    let ai = k.intensity?;
    let p = k.precision?;
    let peak = peaks.tflops.iter().find(|x| x.0 == p)?.1;
    let ridge = peak / peaks.tbps.max(f64::MIN_POSITIVE);
    let side = if ai < ridge { "below it: memory-bound" } else { "above it: compute-bound" };
    Some(format!(
        "{}: {ai:.0} FLOP/byte against the {} ridge point at {ridge:.0} FLOP/byte ({peak:.0} TFLOP/s over {:.2} TB/s), {side}",
        clipped(&k.short),
        p.id(),
        peaks.tbps
    ))
}

pub(super) fn no_shapes(f: &Facts) -> Option<Fired> {
    let e = f.r.efficiency.as_ref()?;
    if e.coverage.ops_with_shapes > 0 || !e.coverage.known_us.is_empty() {
        return None;
    }
    fired(
        None,
        Severity::Info,
        "The trace has no op shapes, so no FLOPs, roofline efficiency or MFU: GEMM and attention time cannot be told fast or slow.".to_string(),
        vec![format!("kernel time {} with no known work", fmt_us(e.coverage.kernel_us))],
        "profile with torch.profiler.profile(record_shapes=True, with_flops=True): each op then records its input shapes and dtypes (and the profiler's FLOP count), from which tracesight works out every op's FLOPs and bytes, the % of the device's peak per kernel, and MFU per step",
    )
}
