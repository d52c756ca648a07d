//! The leaf-op rules: a kernel's bucket from the op that launched it, for kernels whose own
//! name says nothing.

use super::rule::{first, Index, Match, Rule, Subject};
use crate::vocab::Bucket;
use std::sync::LazyLock;

use Bucket as B;
use Match::{Any, Aten};

/// A leaf-op rule concludes the bucket of the unnamed kernels the op launched.
pub type LeafOpRule = Rule<Bucket>;

/// Leaf ops for kernels whose own name matched nothing.
pub static LEAF_OP_RULES: &[LeafOpRule] = &[
    Rule::new(Aten(GEMM_OPS), B::Gemm, "aten GEMM / conv op (aten::mm, addmm, bmm, linear, convolution, _scaled_mm)"),
    Rule::new(
        Aten(MEMORY_OPS),
        B::Memory,
        concat!(
            "aten copy / layout / indexing op (aten::copy_, to, contiguous, ",
            "cat, fill_, index_select, gather, scatter, nonzero)"
        ),
    ),
    Rule::new(
        Aten(ELEMENTWISE_OPS),
        B::Elementwise,
        "aten elementwise / norm / activation op (aten::add, mul, layer_norm, relu, sum)",
    ),
];

const GEMM_OPS: &[&str] = &[
    "mm",
    "bmm",
    "addmm",
    "baddbmm",
    "addbmm",
    "matmul",
    "linear",
    "_scaled_mm",
    "_scaled_grouped_mm",
    "_grouped_mm",
    "convolution",
    "_convolution",
    "conv1d",
    "conv2d",
    "conv3d",
    "cudnn_convolution",
    "convolution_backward",
    "cudnn_convolution_backward",
    "cudnn_convolution_backward_weight",
    "cudnn_convolution_backward_input",
    "miopen_convolution_backward",
    "miopen_convolution_backward_weight",
    "miopen_convolution_backward_input",
    "cudnn_convolution_transpose",
    "miopen_convolution",
    "_int_mm",
    "einsum",
];

const MEMORY_OPS: &[&str] = &[
    "copy_",
    "to",
    "_to_copy",
    "contiguous",
    "clone",
    "cat",
    "permute",
    "transpose",
    "view",
    "reshape",
    "fill_",
    "zero_",
    "zeros",
    "zeros_like",
    "ones",
    "full",
    "empty",
    "index_put_",
    "_index_put_impl_",
    "stack",
    "narrow",
    "slice",
    "split",
    "chunk",
    "expand",
    "flatten",
    "repeat",
    "_local_scalar_dense",
    "new_zeros",
    "constant_pad_nd",
    "pad",
    "index_select",
    "index",
    "index_add_",
    "gather",
    "scatter",
    "scatter_add_",
    "take",
    "masked_select",
    "masked_scatter_",
    "nonzero",
];

const ELEMENTWISE_OPS: &[&str] = &[
    "add",
    "add_",
    "mul",
    "mul_",
    "div",
    "div_",
    "sub",
    "sub_",
    "rsqrt",
    "sqrt",
    "silu",
    "gelu",
    "relu",
    "relu_",
    "sigmoid",
    "tanh",
    "pow",
    "exp",
    "neg",
    "where",
    "layer_norm",
    "native_layer_norm",
    "native_layer_norm_backward",
    "rms_norm",
    "_fused_rms_norm",
    "batch_norm",
    "cudnn_batch_norm",
    "native_batch_norm",
    "group_norm",
    "native_group_norm",
    "sum",
    "mean",
    "max",
    "min",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "max_pool2d",
    "max_pool2d_with_indices",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "addcmul_",
    "addcdiv_",
    "lerp_",
    "clamp",
    "clamp_",
    "abs",
    "log",
    "cumsum",
    "sort",
    "topk",
    "argmax",
    "masked_fill",
    "masked_fill_",
];

/// The leaf-op fallback for a kernel whose name matched nothing (index into [`LEAF_OP_RULES`]).
pub fn leaf_op_rule(op: &str) -> Option<usize> {
    LEAF_OP_INDEX.first(&Subject::name(op))
}

/// [`LEAF_OP_RULES`] by the literals their rules need (each distinct op name is matched once).
pub(super) static LEAF_OP_INDEX: LazyLock<Index<Bucket>> = LazyLock::new(|| Index::new(LEAF_OP_RULES));

/// Ops that route tokens to experts when they run inside a MoE scope (the aten ops below
/// a `torch.topk` / `argsort` / `index_add_` call in a gate, router or experts block); a
/// grouped or expert GEMM is no routing op and stays GEMM.
pub static ROUTING_OP_RULES: &[Rule<Bucket>] = &[Rule::new(
    Aten(ROUTING_OPS),
    B::MoeRouting,
    "token routing op (aten::topk, sort, argsort, gather, scatter, index_add_, bincount, cumsum)",
)];

const ROUTING_OPS: &[&str] = &[
    "topk",
    "sort",
    "argsort",
    "gather",
    "scatter",
    "scatter_",
    "scatter_add",
    "scatter_add_",
    "scatter_reduce",
    "scatter_reduce_",
    "index_add",
    "index_add_",
    "bincount",
    "histc",
    "cumsum",
    "cumsum_",
];

/// Module, op and annotation names of a MoE gate, router or experts block (first match:
/// an MLP's `gate_proj` is a gate of another kind).
pub static MOE_SCOPE_RULES: &[Rule<bool>] = &[
    Rule::new(Any(&["gate proj*", "gate up*", "up gate*"]), false, "an MLP's gate projection"),
    Rule::new(Any(MOE_SCOPES), true, "MoE gate / router / experts block"),
];

// HF transformers: MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock, DeepseekV3MoE, MoEGate,
// GptOssTopKRouter, GptOssExperts, SwitchTransformersTop1Router; Megatron-core: TopKRouter,
// MoELayer.
const MOE_SCOPES: &[&str] = &["gate", "gating*", "router*", "*router", "experts", "*experts", "moe*", "*moe", "mo e"];

/// Whether `op` is a routing op (see [`ROUTING_OP_RULES`]).
pub fn is_routing_op(op: &str) -> bool {
    first(ROUTING_OP_RULES, &Subject::name(op)).is_some()
}

/// Whether a module, op or annotation name makes a MoE routing scope.
pub fn is_moe_scope(name: &str) -> bool {
    first(MOE_SCOPE_RULES, &Subject::name(name)).is_some_and(|i| MOE_SCOPE_RULES[i].then)
}
