//! The leaf-op rules: a kernel's bucket from the op that launched it, for kernels whose own
//! name says nothing.

use super::rule::{first, Match, Rule, Subject};
use crate::vocab::Bucket;

use Bucket as B;
use Match::Aten;

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
    first(LEAF_OP_RULES, &Subject::name(op))
}
