//! The op-context rules: what an enclosing op (or annotation) says about the kernels it
//! launched, and the SDPA ops' backends.

use crate::analysis::tokens::Tokens;
use crate::vocab::{Backend, Bucket};

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

/// How an op rule matches an op name.
#[derive(Debug, Clone, Copy)]
pub enum OpMatch {
    /// The name starts with one of these.
    Prefix(&'static [&'static str]),
    /// `aten::<name>` for one of these names, exactly.
    Aten(&'static [&'static str]),
    /// Token patterns, as for kernels.
    Tokens(&'static [&'static str]),
}

impl OpMatch {
    fn matches(&self, op: &str, t: &Tokens) -> bool {
        match self {
            OpMatch::Prefix(p) => p.iter().any(|p| op.starts_with(p)),
            OpMatch::Aten(names) => op.strip_prefix("aten::").is_some_and(|s| names.contains(&s)),
            OpMatch::Tokens(p) => t.any(p).is_some(),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            OpMatch::Prefix(p) => p.iter().map(|x| format!("{x}*")).collect::<Vec<_>>().join(", "),
            OpMatch::Aten(n) => n.iter().map(|x| format!("aten::{x}")).collect::<Vec<_>>().join(", "),
            OpMatch::Tokens(p) => p.join(", "),
        }
    }
}

pub struct OpContextRule {
    pub context: OpContext,
    pub when: OpMatch,
    pub why: &'static str,
    /// The backend an attention op implies for the neutral kernels below it.
    pub backend: Option<Backend>,
}

const fn ctx(context: OpContext, when: OpMatch, why: &'static str) -> OpContextRule {
    OpContextRule { context, when, why, backend: None }
}

const fn sdpa(when: OpMatch, backend: Backend, why: &'static str) -> OpContextRule {
    OpContextRule { context: OpContext::Sdpa, when, why, backend: Some(backend) }
}

/// Ops that set a context, first match wins.
pub static OP_CONTEXT_RULES: &[OpContextRule] = &[
    sdpa(
        OpMatch::Prefix(&["aten::_scaled_dot_product_flash_attention", "aten::_flash_attention_"]),
        Backend::Flash,
        "SDPA flash op (aten::_scaled_dot_product_flash_attention, _flash_attention_*)",
    ),
    sdpa(
        OpMatch::Prefix(&["aten::_scaled_dot_product_efficient_attention", "aten::_efficient_attention_"]),
        Backend::MemEfficient,
        "SDPA memory-efficient op (aten::_scaled_dot_product_efficient_attention, _efficient_attention_*)",
    ),
    sdpa(
        OpMatch::Prefix(&["aten::_scaled_dot_product_cudnn_attention", "aten::_cudnn_attention"]),
        Backend::Cudnn,
        "SDPA cuDNN op (aten::_scaled_dot_product_cudnn_attention)",
    ),
    sdpa(
        OpMatch::Prefix(&[
            "aten::_scaled_dot_product_attention_math",
            "aten::_scaled_dot_product_fused_attention_overrideable",
        ]),
        Backend::Math,
        "SDPA math op (aten::_scaled_dot_product_attention_math)",
    ),
    // The generic entry points: the kernels (or a more specific op) below say which ran; a
    // row with no fused signature under them is the math backend.
    sdpa(
        OpMatch::Prefix(&[
            "aten::scaled_dot_product_attention",
            "aten::_scaled_dot_product_",
            "aten::_native_multi_head_attention",
            "aten::_fused_sdp_choice",
        ]),
        Backend::Math,
        "SDPA entry op (aten::scaled_dot_product_attention, _native_multi_head_attention)",
    ),
    OpContextRule {
        context: OpContext::Attention,
        when: OpMatch::Tokens(&[
            "flash attn*",
            "flashattn*",
            "flash attention*",
            "flashattention*",
            "mha fwd*",
            "mha bwd*",
            "mha varlen*",
            "fa3*",
            "flash mla*",
        ]),
        why: "flash-attn op or autograd Function (FlashAttnFunc, flash_attn_varlen_*)",
        backend: Some(Backend::FlashAttn),
    },
    OpContextRule {
        context: OpContext::Attention,
        when: OpMatch::Tokens(&[
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
        ]),
        why: "fused attention op (vLLM unified_attention, FlashInfer, paged attention, flex_attention)",
        backend: Some(Backend::Vendor),
    },
    ctx(
        OpContext::Communication,
        OpMatch::Prefix(&[
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
        ]),
        "c10d / NCCL / DeepEP / custom all-reduce op",
    ),
    ctx(
        OpContext::Communication,
        OpMatch::Tokens(&[
            "all reduce*",
            "allreduce*",
            "all gather*",
            "allgather*",
            "reduce scatter*",
            "all to all*",
            "alltoall*",
            "all2all*",
        ]),
        "collective op (all_reduce, all_gather, reduce_scatter, all_to_all)",
    ),
    ctx(
        OpContext::Optimizer,
        OpMatch::Prefix(&[
            "Optimizer.",
            "aten::_foreach_",
            "aten::_fused_adam",
            "aten::_fused_sgd",
            "aten::_fused_adagrad",
        ]),
        "optimizer step / zero_grad / foreach ops (Optimizer.step#..., aten::_foreach_*, aten::_fused_adam*)",
    ),
    ctx(OpContext::Optimizer, OpMatch::Tokens(&["clip grad*", "zero grad*"]), "clip_grad_norm_ / zero_grad"),
    ctx(
        OpContext::Embedding,
        OpMatch::Aten(&[
            "embedding",
            "embedding_backward",
            "embedding_dense_backward",
            "_embedding_bag",
            "embedding_bag",
            "_embedding_bag_backward",
            "_embedding_bag_dense_backward",
            "embedding_renorm_",
            "_embedding_bag_forward_only",
        ]),
        "aten::embedding* / embedding_bag",
    ),
    ctx(
        OpContext::Embedding,
        OpMatch::Tokens(&[
            "split lookup function*",
            "split embedding*",
            "table batched embedding*",
            "fbgemm embedding*",
        ]),
        "fbgemm table-batched embedding op",
    ),
    ctx(
        OpContext::Dropout,
        OpMatch::Aten(&[
            "dropout",
            "native_dropout",
            "feature_dropout",
            "_fused_dropout",
            "native_dropout_backward",
            "alpha_dropout",
            "dropout_",
        ]),
        "aten::dropout / native_dropout",
    ),
    ctx(
        OpContext::Softmax,
        OpMatch::Aten(&[
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
        ]),
        "aten::softmax / log_softmax / cross_entropy_loss / nll_loss",
    ),
    ctx(
        OpContext::Rope,
        OpMatch::Tokens(&["rotary*", "rope", "apply rotary*", "*rotary*"]),
        "rotary embedding op (apply_rotary_pos_emb, rotary_embedding)",
    ),
    ctx(
        OpContext::MoeRouting,
        OpMatch::Tokens(&[
            "moe align*",
            "topk softmax*",
            "moe sum*",
            "moe permute*",
            "moe unpermute*",
            "grouped topk*",
            "moe routing*",
            "moe sort*",
        ]),
        "MoE routing op (moe_align_block_size, topk_softmax, permute/unpermute)",
    ),
    ctx(
        OpContext::Quantization,
        OpMatch::Tokens(&[
            "scaled fp8 quant*",
            "per token group quant*",
            "quantize fp8*",
            "fp8 quantize*",
            "scaled int8 quant*",
            "quant fp8*",
            "cast to fp8*",
        ]),
        "quantization op (scaled_fp8_quant, per_token_group_quant)",
    ),
];

/// The context rule an op name matches (index into [`OP_CONTEXT_RULES`]).
pub fn op_context(op: &str) -> Option<usize> {
    let t = Tokens::new(op);
    OP_CONTEXT_RULES.iter().position(|r| r.when.matches(op, &t))
}
