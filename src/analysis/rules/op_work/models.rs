//! Which ops are modelled, and how each is counted.

/// How each modelled op is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Model {
    /// mm(a, b), addmm(bias, a, b), bmm, baddbmm, _scaled_mm, _int_mm: the two matrix
    /// operands' positions.
    Matmul(usize, usize),
    /// _grouped_mm / _scaled_grouped_mm(a, b, ...): a 2-D or 3-D, b 3-D.
    GroupedMm,
    /// Attention: q's position, the layout (`true`: [b, h, s, d]; `false`: [b, s, h, d]),
    /// whether it is the backward, and where `is_causal` is (None: a mask type, below).
    Attention { bhsd: bool, backward: bool, causal_at: usize },
    /// Convolution forward: argument positions of stride, padding, dilation, groups, and of
    /// `transposed` where the op has it (a transposed convolution is not modelled).
    Conv { stride: usize, padding: usize, dilation: usize, groups: usize, transposed: Option<usize> },
    /// convolution_backward(grad_output, input, weight, ..., output_mask at 10).
    ConvBackward,
    /// The input gradient alone: (input size, grad_output, weight, ...).
    ConvBackwardInput,
    /// Elementwise math: one FLOP per output element (TraceLens' convention), bytes as read
    /// plus the output written.
    Elementwise,
    /// Moves or normalises memory without counted FLOPs: bytes read plus the output written
    /// (the size of the largest input).
    Memory,
    /// Reads its inputs, writes little (reductions).
    Reduction,
    /// embedding(weight, indices) / index_select(self, dim, index): the rows gathered, read
    /// and written, plus the indices.
    Gather { table: usize, index: usize },
}

pub(super) const ELEMENTWISE: &[&str] = &[
    "add",
    "add_",
    "sub",
    "sub_",
    "mul",
    "mul_",
    "div",
    "div_",
    "relu",
    "relu_",
    "gelu",
    "gelu_",
    "silu",
    "silu_",
    "sigmoid",
    "tanh",
    "exp",
    "log",
    "neg",
    "pow",
    "rsqrt",
    "sqrt",
    "addcmul_",
    "addcdiv_",
    "lerp_",
    "where",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "hardtanh_",
    "leaky_relu",
    "clamp",
    "clamp_",
    "maximum",
    "minimum",
    "_foreach_add_",
    "_foreach_mul_",
    "_foreach_addcmul_",
    "_foreach_addcdiv_",
    "_foreach_lerp_",
    "_foreach_sqrt",
    "_foreach_div_",
    "native_dropout",
    "native_dropout_backward",
    "clamp_min",
    "clamp_min_",
    "eq",
    "ne",
    "lt",
    "gt",
    "le",
    "ge",
    "abs",
    "sign",
    "reciprocal",
    "sin",
    "cos",
    "erf",
    "floor",
    "round",
    "remainder",
    "fmod",
    "bitwise_and",
    "bitwise_or",
    "logical_and",
    "logical_not",
    "masked_fill",
    "hardtanh_backward",
    "leaky_relu_backward",
    "mse_loss_backward",
    "_foreach_mul",
    "_foreach_add",
    "_foreach_sub_",
    "_foreach_neg",
    "_foreach_maximum_",
    "_foreach_pow",
    "threshold",
    "threshold_",
    "nll_loss_backward",
    "exp_",
    "sigmoid_",
    "tanh_",
];
pub(super) const MEMORY: &[&str] = &[
    "copy_",
    "_to_copy",
    "clone",
    "contiguous",
    "cat",
    "stack",
    "fill_",
    "zero_",
    "index",
    "index_put_",
    "gather",
    "scatter",
    "scatter_add_",
    "masked_fill_",
    "native_layer_norm",
    "native_layer_norm_backward",
    "native_batch_norm",
    "native_batch_norm_backward",
    "cudnn_batch_norm",
    "cudnn_batch_norm_backward",
    "miopen_batch_norm",
    "miopen_batch_norm_backward",
    "native_group_norm",
    "native_group_norm_backward",
    "_fused_rms_norm",
    "_fused_rms_norm_backward",
    "_softmax",
    "_log_softmax",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward",
    "avg_pool2d",
    "avg_pool2d_backward",
    "_adaptive_avg_pool2d",
    "_adaptive_avg_pool2d_backward",
    "embedding_dense_backward",
    "_foreach_copy_",
    "_fused_adam_",
    "_fused_adamw_",
];
pub(super) const REDUCTION: &[&str] = &[
    "sum",
    "mean",
    "amax",
    "amin",
    "max",
    "min",
    "norm",
    "var",
    "std",
    "var_mean",
    "_foreach_norm",
    "argmax",
    "all",
    "any",
    "mse_loss",
    "nll_loss_forward",
    "nll_loss2d_forward",
    "linalg_vector_norm",
    "cumsum",
    "topk",
    "sort",
];

pub(super) fn model_of(name: &str) -> Option<Model> {
    let op = name.strip_prefix("aten::")?;
    Some(match op {
        "mm" | "_int_mm" => Model::Matmul(0, 1),
        "addmm" | "_addmm_activation" => Model::Matmul(1, 2),
        "bmm" => Model::Matmul(0, 1),
        "baddbmm" => Model::Matmul(1, 2),
        "_scaled_mm" => Model::Matmul(0, 1),
        "_grouped_mm" | "_scaled_grouped_mm" => Model::GroupedMm,
        "_scaled_dot_product_flash_attention" => Model::Attention { bhsd: true, backward: false, causal_at: 4 },
        "_scaled_dot_product_efficient_attention" | "_scaled_dot_product_cudnn_attention" => {
            Model::Attention { bhsd: true, backward: false, causal_at: 6 }
        }
        "_flash_attention_forward" => Model::Attention { bhsd: false, backward: false, causal_at: 8 },
        // custom_mask_type (1, 2: causal from the top left / bottom right) at 9.
        "_efficient_attention_forward" => Model::Attention { bhsd: false, backward: false, causal_at: 9 },
        "_scaled_dot_product_flash_attention_backward" | "_scaled_dot_product_efficient_attention_backward" => {
            Model::Attention { bhsd: true, backward: true, causal_at: 11 }
        }
        "_scaled_dot_product_cudnn_attention_backward" => {
            Model::Attention { bhsd: true, backward: true, causal_at: 14 }
        }
        "_flash_attention_backward" => Model::Attention { bhsd: false, backward: true, causal_at: 11 },
        "_efficient_attention_backward" => Model::Attention { bhsd: false, backward: true, causal_at: 14 },
        "convolution" | "_convolution" => {
            Model::Conv { stride: 3, padding: 4, dilation: 5, groups: 8, transposed: Some(6) }
        }
        "cudnn_convolution" => Model::Conv { stride: 3, padding: 2, dilation: 4, groups: 5, transposed: None },
        "miopen_convolution" => Model::Conv { stride: 4, padding: 3, dilation: 5, groups: 6, transposed: None },
        "convolution_backward" => Model::ConvBackward,
        // Older torch: (input size, grad_output, weight, padding, stride, ...); the weight's
        // gradient (`_backward_weight`) has no weight shape among its tensors, so it is not
        // counted.
        "cudnn_convolution_backward_input" | "miopen_convolution_backward_input" => Model::ConvBackwardInput,
        "embedding" => Model::Gather { table: 0, index: 1 },
        "index_select" => Model::Gather { table: 0, index: 2 },
        op if ELEMENTWISE.contains(&op) => Model::Elementwise,
        op if MEMORY.contains(&op) => Model::Memory,
        op if REDUCTION.contains(&op) => Model::Reduction,
        _ => return None,
    })
}

/// Whether tracesight has a work model for the op named `name`.
pub fn is_modelled(name: &str) -> bool {
    model_of(name).is_some()
}
