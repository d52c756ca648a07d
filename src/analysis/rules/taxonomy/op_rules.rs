//! The op-context rules: what an enclosing op (or annotation) says about the kernels it
//! launched, and the SDPA ops' backends.

use super::rule::{Index, Match, Rule, Subject};
use crate::vocab::{Backend, Bucket};
use std::sync::LazyLock;

use Match::{Any, Aten, Prefix};

/// The context an enclosing op sets for the kernels below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpContext {
    /// An SDPA op: every kernel below it is attention (the math backend's GEMMs too).
    Sdpa,
    /// Another attention op (flash-attn's Function, a fused attention op): claims neutral kernels.
    Attention,
    Communication,
    Optimizer,
    Embedding,
    Dropout,
    Rope,
    Softmax,
    MoeRouting,
    Quantization,
}

impl OpContext {
    pub fn bucket(self) -> Bucket {
        match self {
            OpContext::Sdpa | OpContext::Attention => Bucket::Attention,
            OpContext::Communication => Bucket::Communication,
            OpContext::Optimizer => Bucket::Optimizer,
            OpContext::Embedding => Bucket::Embedding,
            OpContext::Dropout => Bucket::Dropout,
            OpContext::Rope => Bucket::Rope,
            OpContext::Softmax => Bucket::Softmax,
            OpContext::MoeRouting => Bucket::MoeRouting,
            OpContext::Quantization => Bucket::Quantization,
        }
    }
}

/// What an op-context rule concludes: the context, and for an attention op the backend it
/// implies for the neutral kernels below it.
#[derive(Debug, Clone, Copy)]
pub struct OpClass {
    pub context: OpContext,
    pub backend: Option<Backend>,
}

pub type OpContextRule = Rule<OpClass>;

const fn ctx(context: OpContext, when: Match, why: &'static str) -> OpContextRule {
    Rule::new(when, OpClass { context, backend: None }, why)
}

const fn sdpa(when: Match, backend: Backend, why: &'static str) -> OpContextRule {
    Rule::new(when, OpClass { context: OpContext::Sdpa, backend: Some(backend) }, why)
}

const fn attention(when: Match, backend: Backend, why: &'static str) -> OpContextRule {
    Rule::new(when, OpClass { context: OpContext::Attention, backend: Some(backend) }, why)
}

/// Ops that set a context, first match wins.
pub static OP_CONTEXT_RULES: &[OpContextRule] = &[
    sdpa(
        Prefix(SDPA_FLASH),
        Backend::Flash,
        "SDPA flash op (aten::_scaled_dot_product_flash_attention, _flash_attention_*)",
    ),
    sdpa(
        Prefix(SDPA_EFFICIENT),
        Backend::MemEfficient,
        "SDPA memory-efficient op (aten::_scaled_dot_product_efficient_attention, _efficient_attention_*)",
    ),
    sdpa(Prefix(SDPA_CUDNN), Backend::Cudnn, "SDPA cuDNN op (aten::_scaled_dot_product_cudnn_attention)"),
    sdpa(Prefix(SDPA_MATH), Backend::Math, "SDPA math op (aten::_scaled_dot_product_attention_math)"),
    // The generic entry points: the kernels (or a more specific op) below say which ran; a
    // row with no fused signature under them is the math backend.
    sdpa(
        Prefix(SDPA_ENTRY),
        Backend::Math,
        "SDPA entry op (aten::scaled_dot_product_attention, _native_multi_head_attention)",
    ),
    attention(
        Any(FLASH_ATTN_OPS),
        Backend::FlashAttn,
        "flash-attn op or autograd Function (FlashAttnFunc, flash_attn_varlen_*)",
    ),
    // TransformerEngine's autograd Function around its cuDNN fused attention
    // (transformer_engine/pytorch/attention/dot_product_attention/backends.py FusedAttnFunc;
    // the profiler names the Function's forward after its class, the backward FusedAttnFuncBackward).
    attention(Any(TE_ATTN_OPS), Backend::Cudnn, "TransformerEngine FusedAttnFunc (cuDNN fused attention)"),
    attention(
        Any(FUSED_ATTN_OPS),
        Backend::Vendor,
        "fused attention op (vLLM unified_attention, FlashInfer, paged attention, flex_attention)",
    ),
    ctx(OpContext::Communication, Prefix(COMM_OP_PREFIXES), "c10d / NCCL / DeepEP / custom all-reduce op"),
    ctx(
        OpContext::Communication,
        Any(COLLECTIVE_OPS),
        "collective op (all_reduce, all_gather, reduce_scatter, all_to_all)",
    ),
    // Expert-parallel all-to-all under its own name (DeepEP's Buffer.dispatch / combine, pplx
    // and UCCL's dispatch / combine, Megatron's a2a): what a renamed kernel runs inside.
    ctx(OpContext::Communication, Any(EP_OPS), "expert-parallel dispatch / combine op or annotation (dispatch, a2a)"),
    ctx(
        OpContext::Optimizer,
        Prefix(OPTIMIZER_OPS),
        "optimizer step / zero_grad / foreach ops (Optimizer.step#..., aten::_foreach_*, aten::_fused_adam*)",
    ),
    ctx(OpContext::Optimizer, Any(&["clip grad*", "zero grad*"]), "clip_grad_norm_ / zero_grad"),
    ctx(OpContext::Embedding, Aten(EMBEDDING_OPS), "aten::embedding* / embedding_bag"),
    ctx(OpContext::Embedding, Any(FBGEMM_EMBEDDING_OPS), "fbgemm table-batched embedding op"),
    ctx(OpContext::Dropout, Aten(DROPOUT_OPS), "aten::dropout / native_dropout"),
    ctx(OpContext::Softmax, Aten(SOFTMAX_OPS), "aten::softmax / log_softmax / cross_entropy_loss / nll_loss"),
    ctx(
        OpContext::Rope,
        Any(&["rotary*", "rope", "apply rotary*", "*rotary*"]),
        "rotary embedding op (apply_rotary_pos_emb, rotary_embedding)",
    ),
    ctx(
        OpContext::MoeRouting,
        Any(MOE_ROUTING_OPS),
        "MoE routing op (moe_align_block_size, topk_softmax, permute/unpermute)",
    ),
    ctx(OpContext::Quantization, Any(QUANT_OPS), "quantization op (scaled_fp8_quant, per_token_group_quant)"),
];

const SDPA_FLASH: &[&str] = &["aten::_scaled_dot_product_flash_attention", "aten::_flash_attention_"];
const SDPA_EFFICIENT: &[&str] = &["aten::_scaled_dot_product_efficient_attention", "aten::_efficient_attention_"];
const SDPA_CUDNN: &[&str] = &["aten::_scaled_dot_product_cudnn_attention", "aten::_cudnn_attention"];
const SDPA_MATH: &[&str] =
    &["aten::_scaled_dot_product_attention_math", "aten::_scaled_dot_product_fused_attention_overrideable"];
const SDPA_ENTRY: &[&str] = &[
    "aten::scaled_dot_product_attention",
    "aten::_scaled_dot_product_",
    "aten::_native_multi_head_attention",
    "aten::_fused_sdp_choice",
];
const FLASH_ATTN_OPS: &[&str] = &[
    "flash attn*",
    "flashattn*",
    "flash attention*",
    "flashattention*",
    "mha fwd*",
    "mha bwd*",
    "mha varlen*",
    "fa3*",
    "flash mla*",
];
pub const TE_ATTN_OPS: &[&str] = &["fused attn func*"];
const FUSED_ATTN_OPS: &[&str] = &[
    "unified attention*",
    "paged attention*",
    "attn fwd*",
    "attn bwd*",
    "flashinfer*",
    "mla attention*",
    "trtllm attention*",
    "attention forward*",
    "attention backward*",
    "fused attention*",
    "flex attention*",
];
const COMM_OP_PREFIXES: &[&str] = &[
    "c10d::",
    "c10d_functional::",
    "_c10d_functional::",
    "nccl:",
    "record_param_comms",
    "ProcessGroupNCCL",
    "ProcessGroup",
    "gloo:",
    "deep_ep",
    "DeepEP",
    "symm_mem::",
    "vllm::all_reduce",
    "vllm::all_gather",
    "vllm::reduce_scatter",
    "trtllm::allreduce",
    "sglang::",
];
const COLLECTIVE_OPS: &[&str] = &[
    "all reduce*",
    "allreduce*",
    "all gather*",
    "allgather*",
    "reduce scatter*",
    "all to all*",
    "alltoall*",
    "all2all*",
];
const EP_OPS: &[&str] = &["dispatch", "combine", "a2a", "*a2a", "a2a*", "ep dispatch*", "ep combine*"];
const OPTIMIZER_OPS: &[&str] =
    &["Optimizer.", "aten::_foreach_", "aten::_fused_adam", "aten::_fused_sgd", "aten::_fused_adagrad"];
const EMBEDDING_OPS: &[&str] = &[
    "embedding",
    "embedding_backward",
    "embedding_dense_backward",
    "_embedding_bag",
    "embedding_bag",
    "_embedding_bag_backward",
    "_embedding_bag_dense_backward",
    "embedding_renorm_",
    "_embedding_bag_forward_only",
];
const FBGEMM_EMBEDDING_OPS: &[&str] =
    &["split lookup function*", "split embedding*", "table batched embedding*", "fbgemm embedding*"];
const DROPOUT_OPS: &[&str] = &[
    "dropout",
    "native_dropout",
    "feature_dropout",
    "_fused_dropout",
    "native_dropout_backward",
    "alpha_dropout",
    "dropout_",
];
const SOFTMAX_OPS: &[&str] = &[
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "cross_entropy_loss",
    "nll_loss",
    "nll_loss_forward",
    "nll_loss_backward",
    "nll_loss_nd",
    "nll_loss2d_forward",
    "nll_loss2d_backward",
    "_safe_softmax",
];
const MOE_ROUTING_OPS: &[&str] = &[
    "moe align*",
    "topk softmax*",
    "moe sum*",
    "moe permute*",
    "moe unpermute*",
    "grouped topk*",
    "moe routing*",
    "moe sort*",
];
const QUANT_OPS: &[&str] = &[
    "scaled fp8 quant*",
    "per token group quant*",
    "quantize fp8*",
    "fp8 quantize*",
    "scaled int8 quant*",
    "quant fp8*",
    "cast to fp8*",
];

/// The context rule an op name matches (index into [`OP_CONTEXT_RULES`]).
pub fn op_context(op: &str) -> Option<usize> {
    OP_CONTEXT_INDEX.first(&Subject::name(op))
}

/// [`OP_CONTEXT_RULES`] by the literals their rules need (each distinct op name is matched once).
pub(super) static OP_CONTEXT_INDEX: LazyLock<Index<OpClass>> = LazyLock::new(|| Index::new(OP_CONTEXT_RULES));
