//! The kernel-name rules: what a kernel's own name says about its bucket (and, for attention,
//! its backend). First match wins; each family's names come from the library's own source.

use super::families::*;
use super::rule::{Match, Rule};
use crate::vocab::{Backend, Bucket};

use Backend::{Cudnn, Flash, FlashAttn, MemEfficient, Vendor};
use Bucket as B;
use Identity::{Neutral, Own};
use Match::{All, Any, Namespace, Scoped};

/// Whether a kernel keeps its own bucket under an enclosing op that sets a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// The name says what it is (GEMM, quantize, rope, norm, copy): kept under any op except
    /// an SDPA op (whose GEMMs and softmax are the math backend's attention).
    Own,
    /// A generic kernel (an add, a fill, a gather): the op chain decides, the name only when
    /// no op sets a context.
    Neutral,
}

/// What a kernel-name rule concludes.
#[derive(Debug)]
pub struct KernelClass {
    pub bucket: Bucket,
    pub identity: Identity,
    /// For attention kernels: the backend and the library they come from.
    pub backend: Option<(Backend, &'static str)>,
}

/// One row of the kernel-name table.
pub type KernelRule = Rule<KernelClass>;

/// A kernel whose name says what it is: it keeps its bucket under any op but an SDPA op.
const fn own(bucket: Bucket, when: Match, why: &'static str) -> KernelRule {
    Rule::new(when, KernelClass { bucket, identity: Own, backend: None }, why)
}

/// A generic kernel: an enclosing op's context decides first.
const fn neutral(bucket: Bucket, when: Match, why: &'static str) -> KernelRule {
    Rule::new(when, KernelClass { bucket, identity: Neutral, backend: None }, why)
}

const fn attn(backend: Backend, library: &'static str, when: Match, why: &'static str) -> KernelRule {
    Rule::new(when, KernelClass { bucket: Bucket::Attention, identity: Own, backend: Some((backend, library)) }, why)
}

/// Kernel names, first match wins. Sources: each library's own kernel definitions (see the
/// taxonomy section of docs/definitions.md).
pub static KERNEL_RULES: &[KernelRule] = &[
    // Communication: whatever moves data between devices.
    own(B::Communication, Any(NCCL), "NCCL / RCCL / MSCCL collective"),
    own(
        B::Communication,
        Namespace(COMM_NAMESPACES),
        concat!(
            "expert-parallel / custom communication namespace (DeepEP, MSCCL++, ",
            "NVSHMEM, TensorRT-LLM/FlashInfer all-reduce and all-to-all)"
        ),
    ),
    own(B::Communication, Scoped(EP_NAMESPACES, EP_FUNCTIONS), "expert-parallel dispatch / combine (DeepEP layout)"),
    own(B::Communication, Any(EP_KERNELS), "expert-parallel dispatch / combine (mori EpDispatch*Kernel)"),
    own(
        B::Communication,
        Any(CUSTOM_COLLECTIVES),
        concat!(
            "custom all-reduce / all-gather / all-to-all (vLLM, SGLang, TensorRT-LLM, ",
            "aiter, symmetric memory, Transformer Engine userbuffers)"
        ),
    ),
    own(
        B::Memory,
        Any(KV_CACHE_WRITES),
        "KV-cache write (vLLM reshape_and_cache, SGLang store_kvcache, FlashInfer append_paged_kv_cache)",
    ),
    // torch.compile (Inductor) kernels are named after the aten ops they fuse.
    own(B::Attention, All(FLEX_ATTENTION), "torch.compile FlexAttention template"),
    own(B::Gemm, Any(&["triton tem*"]), "torch.compile matmul / conv template (triton_tem_fused_*)"),
    own(B::Elementwise, All(INDUCTOR_NORM), "torch.compile fused norm (rsqrt / *_norm in the fused ops)"),
    own(B::Softmax, All(INDUCTOR_SOFTMAX), "torch.compile fused softmax / cross-entropy"),
    own(B::Rope, All(INDUCTOR_ROPE), "torch.compile fused rotary embedding"),
    own(B::Embedding, All(INDUCTOR_EMBEDDING), "torch.compile fused embedding"),
    own(B::Dropout, All(INDUCTOR_DROPOUT), "torch.compile fused dropout"),
    own(B::Rope, All(INDUCTOR_COS_SIN), "torch.compile fused cos/sin products (rotary embedding)"),
    neutral(B::Optimizer, Any(&["triton for*"]), "torch.compile foreach (combo) kernel: a compiled optimizer step"),
    neutral(B::Elementwise, Any(INDUCTOR_FUSED), "torch.compile fused pointwise / reduction"),
    // MoE grouped GEMMs before routing: `fused_moe_kernel` is the expert MLP.
    own(
        B::Gemm,
        Any(MOE_GEMMS),
        "MoE grouped GEMM (vLLM/SGLang fused_moe_kernel, CUTLASS/DeepGEMM grouped GEMM, aiter fmoe)",
    ),
    // Attention, with the backend each family is evidence of.
    attn(Flash, "PyTorch FA2", Namespace(&["pytorch_flash"]), "PyTorch's built-in FlashAttention (pytorch_flash::)"),
    attn(
        MemEfficient,
        "PyTorch mem-efficient",
        Any(MEM_EFFICIENT),
        "memory-efficient attention (fmha_cutlassF/B, xformers)",
    ),
    attn(Cudnn, "cuDNN", Any(CUDNN_SDPA), "cuDNN fused attention (cudnn_generated_fort_native_sdpa_*)"),
    attn(
        Cudnn,
        super::TE_LIBRARY,
        Scoped(&["fused_attn"], TE_ATTN_SETUP),
        "TransformerEngine fused-attention setup (fused_attn::cu_seqlens_to_offsets, populate_rng_state_kernel)",
    ),
    attn(
        Cudnn,
        super::TE_LIBRARY,
        Scoped(&["context_parallel"], TE_CP_ATTN),
        "TransformerEngine context-parallel attention merge (thd_out_correction_kernel, thd_lse_kernel)",
    ),
    own(
        B::Memory,
        Scoped(TE_ATTN_NAMESPACES, TE_ATTN_LAYOUT),
        "TransformerEngine attention layout / KV-cache copy (thd_read_half_tensor, copy_to_kv_cache, transpose_to_bhsd)",
    ),
    attn(
        FlashAttn,
        "flash-attn",
        Any(FLASH_ATTN),
        "flash-attn FA2/FA3/FA4 (flash::flash_fwd_kernel, FlashAttnFwdSm90, FlashAttentionForwardSm100)",
    ),
    attn(
        FlashAttn,
        "flash-attn",
        Namespace(&["flash"]),
        "flash-attn FA2/FA3/FA4 (flash::flash_fwd_kernel, FlashAttnFwdSm90, FlashAttentionForwardSm100)",
    ),
    attn(Vendor, "CK / aiter", All(CK_TILE_FMHA), "Composable Kernel tile FMHA (ck_tile::FmhaFwdKernel, aiter)"),
    attn(Vendor, "SageAttention", Any(SAGE_ATTN), "SageAttention INT8-QK attention (qk_int_sv_f16/f8_attn_kernel)"),
    own(B::Quantization, Any(SAGE_QUANT), "SageAttention smoothing / quantize (SubMeanKernel, QuantInt8Kernel)"),
    attn(Vendor, "FlashInfer", Any(FLASHINFER), "FlashInfer attention (BatchPrefill/BatchDecode*Kernel)"),
    attn(
        Vendor,
        "TensorRT-LLM",
        Any(TRTLLM_ATTN),
        "TensorRT-LLM fused attention (fmha_v2, XQA, trtllm-gen fmha, masked MHA)",
    ),
    attn(Vendor, "FlashMLA", Any(FLASH_MLA), "FlashMLA / MLA decode kernels"),
    attn(Vendor, "AOTriton", Any(AOTRITON), "AOTriton / Triton flash attention (attn_fwd, bwd_kernel_dk_dv)"),
    attn(Vendor, "CK / aiter", Any(CK_FMHA), "Composable Kernel / aiter fused attention (FmhaFwdKernel, fmha_v3)"),
    attn(
        Vendor,
        "paged attention",
        Any(PAGED_ATTN),
        "paged / decode attention (vLLM paged_attention, Triton unified_attention, SGLang decode/extend)",
    ),
    attn(Vendor, "fused attention", Any(FUSED_ATTN), "other fused attention kernel (name says attention)"),
    // Norms, fused or not (a fused add+RMSNorm+quant is a norm with a quantizing epilogue).
    own(B::Elementwise, Any(NORMS), "normalisation (layer/RMS/batch/group norm, fused or not)"),
    own(B::Rope, Any(ROPE), "rotary position embedding"),
    own(B::MoeRouting, Any(MOE_ROUTING), "MoE routing: top-k gating, token sort/align, permute/unpermute, finalize"),
    own(B::Softmax, Any(SOFTMAX), "softmax / cross-entropy"),
    // Embeddings (PyTorch and fbgemm_gpu table-batched embeddings with their index kernels).
    own(B::Embedding, Any(EMBEDDINGS), "embedding lookups and their backward (PyTorch embedding, fbgemm TBE)"),
    // fbgemm_gpu's name must not read as a GEMM.
    own(
        B::Memory,
        All(FBGEMM_LAYOUT),
        "fbgemm sparse-feature permute / jagged layout (permute_2D_data, jagged_to_padded)",
    ),
    neutral(B::Elementwise, Namespace(&["fbgemm_gpu"]), "other fbgemm_gpu sparse / index op"),
    // GEMM and convolution families (tensor-core use is decided by TENSOR_CORE_RULES).
    own(
        B::Gemm,
        Any(GEMMS),
        "GEMM (cuBLAS/cuBLASLt nvjet & xmma, hipBLASLt Cijk, CUTLASS, DeepGEMM, CK, Triton matmul, gemv)",
    ),
    own(B::Gemm, Any(CONVS), "convolution (cuDNN implicit GEMM / winograd / FFT, dgrad / wgrad, MIOpen, CK)"),
    own(B::Quantization, Any(QUANT), "quantization: FP8 / INT8 / FP4 casts, scales, block-scale quant"),
    own(
        B::Gemm,
        Namespace(CASK),
        "cuDNN/cuBLAS kernel-library helper of a convolution or GEMM (cask_cudnn::computeOffsetsKernel)",
    ),
    own(B::Dropout, Any(DROPOUT), "dropout (fused_dropout, masked_scale)"),
    own(B::Optimizer, Any(OPTIMIZERS), "optimizer update (Adam/AdamW/SGD/LAMB/Adagrad functors, apex multi_tensor_*)"),
    neutral(B::Optimizer, Any(MULTI_TENSOR), "multi_tensor_apply (foreach ops: optimizer time under an optimizer op)"),
    // Device-side data movement: copies, layout changes, fills.
    own(B::Memory, Any(COPIES), "device copy / layout change (copy, transpose/permute, cat, NCHW<->NHWC, pad, jagged)"),
    own(
        B::Memory,
        Any(MIOPEN_COPIES),
        "MIOpen tensor copy / cast (SubTensorOpWithSubTensor, SubTensorOpWithCastTensor)",
    ),
    neutral(B::Memory, Any(FILLS), "fill / zero / arange (the op chain decides, e.g. zero_grad)"),
    // Top-k selects by value (TensorTopK.cu gatherTopK): a reduction, though its name says gather.
    neutral(B::Elementwise, Any(&["gather top k*", "gathertopk*"]), "top-k selection (ATen TensorTopK gatherTopK)"),
    // ATen's indexing kernels move memory, whatever the elementwise template around them
    // (aten/src/ATen/native/cuda: IndexKernel.cu index_elementwise_kernel, IndexKernelUtils.cu
    // vectorized_gather_kernel, ScatterGatherKernel.cu _scatter_gather_elementwise_kernel,
    // Indexing.cu indexSelect*/indexFunc*, Nonzero.cu, MaskedSelect); the op chain decides
    // first (an index_select under an embedding is embedding time).
    neutral(
        B::Memory,
        Any(INDEXING),
        "indexing / gather / scatter / nonzero (ATen IndexKernel, ScatterGatherKernel, Indexing)",
    ),
    // Generic compute the op chain may claim.
    neutral(B::Elementwise, Any(ELEMENTWISE), "elementwise / reduction / activation / sort"),
];

/// How a GEMM / convolution kernel computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorCore {
    /// HMMA/IMMA/wgmma/tcgen05 on NVIDIA, MFMA/WMMA on AMD.
    Yes,
    /// fp32/fp64 SIMT kernels that a lower precision would move to tensor cores.
    Simt,
    /// Matrix-vector shaped (gemv, K=1, small-N) kernels: SIMT by their shape, whatever the dtype.
    VectorShaped,
}
