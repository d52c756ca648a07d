//! The hint rules in words, for docs/definitions.md: when each fires and what it counts as the
//! time at stake (tests/readme.rs keeps the generated table current).

use super::hints::*;
use super::roofline::MIN_KERNEL_US;
use crate::analysis::passes::hints::TRAINING_OPTIMIZER_PCT;
use crate::report::TARGET_PCT;

impl HintId {
    /// When the rule fires, for docs/definitions.md.
    pub fn fires_when(self) -> String {
        match self {
            HintId::GpuIdle => format!("idle > {IDLE_SHARE}% of span (critical above {IDLE_SHARE_CRITICAL}%); where graph launches replay at least {GRAPH_REPLAY_SHARE:.0}% of the kernels the advice is about the CPU work between replays, never more graphs; where one gap holds more than {ONE_GAP_SHARE:.0}% of the idle it says so (one-time work) and suggests narrowing the window first"),
            HintId::LaunchBound => format!("at least {LAUNCH_BOUND_MIN_KERNELS} individually launched kernels, and either the ops that launch them take more CPU time per op than their kernels take GPU time per op while the GPU idles > {IDLE_SHARE}% of span between those kernels, or > {LAUNCH_BOUND_SHARE}% of the kernels ran shorter than their launch call (kernels replayed by CUDA/HIP graph launches are not counted; with graphs, the advice is to capture the kernels still launched one by one); also when any ProfilerStep is launch-bound by the same CPU-per-op test (over its own span), the trace as a whole not"),
            HintId::HostSync => format!("synchronising runtime calls (device/stream/event synchronize, blocking cudaMemcpy / hipMemcpy / hipMemcpyWithStream, cudaFree / hipFree) overlap GPU idle for > {SYNC_SHARE}% of span, and the GPU idles > {IDLE_SHARE}%; the fix is the one for the kind of call holding most of that time (frees: the caching allocator's empty_cache / allocation retries; blocking copies: pinned memory and non_blocking; else the implicit syncs), and gpu_idle's fix starts with the syncs when they overlap more than half the idle"),
            HintId::CollectiveShare => format!("communication > {COLLECTIVE_SHARE}% of kernel time; training or inference advice by whether the trace has backward ops or an optimizer holding at least {TRAINING_OPTIMIZER_PCT}% of kernel time"),
            HintId::ExposedComm => format!("communication not overlapped with compute > {EXPOSED_COMM_SHARE}% of span"),
            HintId::ElementwiseShare => format!("elementwise / norm > {ELEMENTWISE_SHARE}% of kernel time; the fusion advice only when the kernels not fused by torch.compile (Inductor's triton_poi/red/per_fused_*) alone pass it, else the fused kernels' bandwidth; where BatchNorm ops hold more than half the elementwise time, BatchNorm's fixes (fusion and channels_last in training, folding into the convolution in inference)"),
            HintId::MemoryShare => format!("device-side copies and layout changes (memory bucket less host copies) > {MEMORY_SHARE}% of kernel time; index copies (ATen index / gather / scatter kernels) named as data movement when they hold most of it"),
            HintId::MemcpyShare => format!("host <-> device memcpy rows > {HOST_COPY_SHARE}% of busy time; pin_memory advice when most are pageable"),
            HintId::Dataloader => format!("top-level `enumerate(DataLoader)` spans > {DATALOADER_SHARE}% of ProfilerStep time (of the traced CPU time without steps)"),
            HintId::NoTensorCores => format!("> {SIMT_GEMM_SHARE}% of GEMM/conv time with a known family runs SIMT fp32 kernels (sgemm, fp32 cuDNN winograd/FFT/implicit GEMM; gemv-shaped kernels excluded); advice by compute capability, none before Volta"),
            HintId::AttentionNotFlash => "backend is math (critical) or memory-efficient (info), with the reasons read from the SDPA op's arguments; SDPA's cuDNN backend (info) only below compute capability 9 (PyTorch tries it first on 9.x / 10.x) and when the recorded inputs do not rule flash out, never for TransformerEngine".to_string(),
            HintId::EagerAttention => "hand-written attention found (warning; critical above 20% of kernel time)".to_string(),
            HintId::CoreComputeLow => format!("GEMM + attention < {CORE_COMPUTE_LOW}% of kernel time (info)"),
            HintId::BelowRoof => format!("the {BELOW_ROOF_LISTED} kernels furthest below their roof (compute peak for their precision, or memory bandwidth, by their arithmetic intensity) would save > {BELOW_ROOF_SHARE}% of span at {TARGET_PCT:.0}% of it (each kernel at least {MIN_KERNEL_US} us per call); needs the device's peaks. The fix follows the top kernel's side of the roofline (its FLOP per byte against the ridge point, in the evidence), not its bucket: compute-bound GEMM, compute-bound attention, other compute-bound kernels (tensor cores unused for their dtype, low occupancy: fold into a GEMM epilogue or use a library kernel), memory-bound ones (fusion, except for kernels Inductor fused already and index copies)"),
            HintId::NoShapes => "the trace recorded no op shapes and no FLOP counts (info)".to_string(),
        }
    }
}

impl HintId {
    /// What the rule counts as the GPU time at stake (`stake_us`), for docs/definitions.md.
    pub fn stake_means(self) -> &'static str {
        match self {
            HintId::GpuIdle => "GPU idle time",
            HintId::LaunchBound => "the GPU idle ending at kernels that ops launched one by one (only the launch-bound steps' when only they are; host-wait + kernel-wait idle when no op launched them)",
            HintId::HostSync => "synchronising-call time that overlapped GPU idle",
            HintId::CollectiveShare | HintId::ExposedComm => "exposed communication (not overlapped with compute)",
            HintId::ElementwiseShare => "the elementwise bucket's kernel time",
            HintId::MemoryShare => "device-side memory kernel time (host copies left out)",
            HintId::MemcpyShare => "host <-> device copy time",
            HintId::Dataloader => "DataLoader time, at most the GPU idle time",
            HintId::NoTensorCores => "SIMT (non-tensor-core) GEMM/conv time",
            HintId::AttentionNotFlash => "the winning attention backend's time",
            HintId::EagerAttention => "hand-written attention time",
            HintId::CoreComputeLow => "kernel time outside GEMM, attention and communication (which collective_share and exposed_comm count)",
            HintId::BelowRoof => "the time those kernels would save at the target",
            HintId::NoShapes => "GEMM and attention kernel time (what the roofline would judge)",
        }
    }
}

/// The hint rules as Markdown, for docs/definitions.md.
pub fn markdown() -> String {
    let mut o = String::from("| id | fires when | time at stake |\n|---|---|---|\n");
    for h in HintId::ALL {
        o.push_str(&format!("| `{}` | {} | {} |\n", h.id(), h.fires_when(), h.stake_means()));
    }
    o.push_str(&format!("\nHints are ranked by their time at stake, largest first; one whose stake is under {SMALL_STAKE_PCT}% of the GPU span is `info`, whatever its rule's severity.\n"));
    o
}
