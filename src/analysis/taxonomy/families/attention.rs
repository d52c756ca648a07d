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
