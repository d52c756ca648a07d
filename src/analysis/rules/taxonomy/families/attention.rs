//! Fused attention kernel names, per library.

pub const MEM_EFFICIENT: &[&str] =
    &["fmha cutlass*", "mem eff attention*", "efficient attention*", "pytorch mem eff attention*"];

pub const CUDNN_SDPA: &[&str] = &["native sdpa*", "cudnn sdpa*", "sdpa flash*", "cudnn generated fort native sdpa*"];

pub const FLASH_ATTN: &[&str] =
    &["flash fwd*", "flash bwd*", "flash attn*", "flashattn*", "flash attention*", "flashattention*", "compute attn*"];

pub const FLASHINFER: &[&str] = &[
    "batch prefill with*",
    "batch decode with*",
    "single prefill with*",
    "single decode with*",
    "batch mla*",
    "batchprefillwith*",
    "batchdecodewith*",
];

pub const TRTLLM_ATTN: &[&str] = &[
    "fmha v2*",
    "fmhav2*",
    "xqa*",
    "kernel mha*",
    "fmha sm*",
    "fmhasm*",
    "fmha kernel*",
    "masked multihead attention*",
    "mmha*",
    "trtllm gen*",
];

pub const FLASH_MLA: &[&str] = &["flash fwd splitkv mla*", "flash mla*", "mla decode*", "sparse mla*"];

pub const AOTRITON: &[&str] =
    &["attn fwd*", "attn bwd*", "bwd kernel dk dv*", "bwd kernel dq*", "bwd preprocess*", "bwd kernel fuse*"];

pub const CK_FMHA: &[&str] =
    &["fmha fwd*", "fmha bwd*", "fmha v3*", "fmhafwd*", "fmhabwd*", "mha fwd*", "mha bwd*", "fmha*"];

pub const PAGED_ATTN: &[&str] = &[
    "paged attention*",
    "pagedattention*",
    "unified attention*",
    "kernel unified attention*",
    "flash decoding*",
    "decode attention*",
    "decode grouped att*",
    "fwd grouped kernel stage*",
    "fwd kernel stage*",
    "extend attention*",
    "prefill attention*",
    "context attention*",
    "lightning attention*",
    "sparse attention*",
];

pub const FUSED_ATTN: &[&str] =
    &["*attention kernel*", "attention fwd*", "attention bwd*", "attention forward*", "attention backward*"];

// SageAttention (thu-ml/SageAttention csrc/qattn/qk_int_sv_f16_cuda_sm80.cu
// qk_int_sv_f16_attn_kernel, qk_int_sv_f8_cuda_sm89.cuh qk_int_sv_f8_attn_kernel,
// qk_int_sv_f8_cuda_sm90.cu qk_int8_sv_f8_attn_kernel): INT8 QK, FP16 / FP8 PV.
pub const SAGE_ATTN: &[&str] = &["qk int sv*", "qk int8 sv*"];
// SageAttention's smoothing and quantize kernels (csrc/fused/fused.cu SubMeanKernel,
// MeanScaleKernel, QuantInt8Kernel; sageattention/triton/quant_per_block.py,
// quant_per_thread.py quant_*_int8_kernel, which the generic quantize rule also takes).
pub const SAGE_QUANT: &[&str] = &["sub mean kernel*", "mean scale kernel*", "quant int8 kernel*"];
// Composable Kernel tile FMHA, launched by aiter and PyTorch's ROCm SDPA through
// ck_tile::kentry (ROCm/composable_kernel include/ck_tile/ops/fmha/kernel/:
// FmhaFwdKernel, FmhaBwdDQDKDVKernel, FmhaBatchPrefillWithPagedKVCacheKernel, whose name
// would otherwise read as FlashInfer's BatchPrefillWith*).
pub const CK_TILE_FMHA: &[&str] = &["ck tile", "fmha*"];
// TransformerEngine's own kernels around its cuDNN fused attention (NVIDIA/TransformerEngine
// transformer_engine/common/fused_attn/utils.cu, namespace fused_attn: cu_seqlens_to_offsets,
// cu_seqlens_padded_to_offsets, cu_seqlens_to_actual_seqlens, populate_rng_state_kernel,
// extract_seed_and_offset, get_runtime_num_segments_kernel): the setup of each call.
pub const TE_ATTN_SETUP: &[&str] = &[
    "cu seqlens to offsets*",
    "cu seqlens padded to offsets*",
    "cu seqlens to actual seqlens*",
    "populate rng state*",
    "extract seed and offset*",
    "get runtime num segments*",
];
// Its context-parallel merges of partial attention (fused_attn/context_parallel.cu, namespace
// context_parallel: thd_out_correction_kernel, thd_lse_kernel, thd_grad_correction_kernel).
pub const TE_CP_ATTN: &[&str] = &["thd out correction*", "thd lse*", "thd grad correction*"];
// Its layout moves for attention (context_parallel.cu thd_read_half_tensor_kernel,
// thd_partition_indices_kernel, thd_reorder_between_*, thd_copy_valid_tokens_*; kv_cache.cu,
// namespace kv_cache: copy_to_kv_cache_kernel, reindex_kv_cache_kernel; flash_attn.cu,
// namespace flash_attention: prepare_kernel_fwd / bwd, transpose_to_bhsd_*).
pub const TE_ATTN_LAYOUT: &[&str] = &[
    "thd read half tensor*",
    "thd partition indices*",
    "thd reorder*",
    "thd copy valid tokens*",
    "copy to kv cache*",
    "reindex kv cache*",
    "prepare kernel fwd*",
    "prepare kernel bwd*",
    "transpose to bhsd*",
];
pub const TE_ATTN_NAMESPACES: &[&str] = &["fused_attn", "context_parallel", "kv_cache", "flash_attention"];
