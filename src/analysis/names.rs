//! Name rules: which bucket a kernel or op name belongs to, and which attention backend a
//! name is a signature of. Matching is on tokens, never raw substrings, so `aten::to` does not
//! match `aten::topk`, `cos` does not match `using`, and `flash` in vLLM's
//! `reshape_and_cache_flash_kernel` is not an attention kernel.
//!
//! A name is split into lowercase alphanumeric runs (`s16816gemm`), and each run again at
//! camelCase and letter/digit boundaries (`s`, `16816`, `gemm`). A pattern is one or more
//! space-separated tokens that must appear consecutively in either split; a token may start or
//! end with `*` to match a token suffix or prefix (`*gemm` matches `sgemm`).

/// The tokens of a name, in both splits.
pub struct Tokens {
    runs: Vec<String>,
    parts: Vec<String>,
}

impl Tokens {
    pub fn new(name: &str) -> Tokens {
        let mut runs = Vec::new();
        let mut parts = Vec::new();
        for run in name.split(|c: char| !c.is_ascii_alphanumeric()).filter(|r| !r.is_empty()) {
            runs.push(run.to_ascii_lowercase());
            let b = run.as_bytes();
            let mut start = 0;
            for i in 1..b.len() {
                let (p, c) = (b[i - 1], b[i]);
                let camel = p.is_ascii_lowercase() && c.is_ascii_uppercase();
                // "HTTPServer" -> "HTTP", "Server": an upper followed by upper+lower.
                let acronym = p.is_ascii_uppercase()
                    && c.is_ascii_uppercase()
                    && b.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
                let digit = p.is_ascii_digit() != c.is_ascii_digit();
                if camel || acronym || digit {
                    parts.push(run[start..i].to_ascii_lowercase());
                    start = i;
                }
            }
            parts.push(run[start..].to_ascii_lowercase());
        }
        Tokens { runs, parts }
    }

    /// Whether `pattern` (space-separated tokens, `*` wildcards at token ends) occurs.
    pub fn matches(&self, pattern: &str) -> bool {
        let pat: Vec<&str> = pattern.split(' ').collect();
        seq_match(&self.runs, &pat) || seq_match(&self.parts, &pat)
    }

    pub fn any(&self, patterns: &[&str]) -> Option<usize> {
        patterns.iter().position(|p| self.matches(p))
    }
}

fn token_match(tok: &str, pat: &str) -> bool {
    match (pat.strip_prefix('*'), pat.strip_suffix('*')) {
        (Some(inner), _) if inner.ends_with('*') => tok.contains(&inner[..inner.len() - 1]),
        (Some(suffix), _) => tok.ends_with(suffix),
        (None, Some(prefix)) => tok.starts_with(prefix),
        (None, None) => tok == pat,
    }
}

fn seq_match(toks: &[String], pat: &[&str]) -> bool {
    if pat.is_empty() || toks.len() < pat.len() {
        return false;
    }
    (0..=toks.len() - pat.len()).any(|i| pat.iter().zip(&toks[i..]).all(|(p, t)| token_match(t, p)))
}

/// The buckets, in report order of definition. Every GPU row goes to exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bucket {
    Gemm,
    Attention,
    Elementwise,
    Softmax,
    Rope,
    Embedding,
    Dropout,
    Collective,
    Memory,
    Optimizer,
    Other,
}

pub const BUCKETS: [Bucket; 11] = [
    Bucket::Gemm,
    Bucket::Attention,
    Bucket::Elementwise,
    Bucket::Softmax,
    Bucket::Rope,
    Bucket::Embedding,
    Bucket::Dropout,
    Bucket::Collective,
    Bucket::Memory,
    Bucket::Optimizer,
    Bucket::Other,
];

impl Bucket {
    /// Display names; the seed's names, kept so its users find their rows.
    pub fn name(self) -> &'static str {
        match self {
            Bucket::Gemm => "matmul (GEMM)",
            Bucket::Attention => "attention (SDPA/FA)",
            Bucket::Elementwise => "elementwise (norm/act)",
            Bucket::Softmax => "softmax",
            Bucket::Rope => "rope",
            Bucket::Embedding => "embedding",
            Bucket::Dropout => "dropout",
            Bucket::Collective => "reduce (all-reduce/gather)",
            Bucket::Memory => "memory (copy/permute/view)",
            Bucket::Optimizer => "optimizer",
            Bucket::Other => "other",
        }
    }

    /// The rule definition, in words, for the report.
    pub fn rule(self) -> &'static str {
        match self {
            Bucket::Gemm => "kernel name has a GEMM/conv token (gemm, gemv, nvjet, cublas, Cijk, xmma, conv, wgrad/dgrad) or, for unnamed kernels, the launching op is aten::mm/bmm/addmm/matmul/linear/conv",
            Bucket::Attention => "launched under an SDPA / flash-attention op anywhere in the op chain, or kernel name is an attention signature (flash_fwd, fmha, attn_fwd, native sdpa, ...)",
            Bucket::Elementwise => "kernel name is elementwise/reduce/norm/activation (elementwise, layer_norm, rms_norm, gelu, silu, triton_poi/red, ...) or the launching op is such an aten op",
            Bucket::Softmax => "kernel name has softmax / cross_entropy / nll_loss, or launched under a softmax / cross-entropy op",
            Bucket::Rope => "kernel or enclosing op name has a rotary / rope token",
            Bucket::Embedding => "launched under aten::embedding* / embedding_bag, or kernel name has an embedding token",
            Bucket::Dropout => "launched under a dropout op, or kernel name has a dropout token",
            Bucket::Collective => "NCCL/RCCL kernel name tokens, or launched under a c10d:: / record_param_comms / nccl: op",
            Bucket::Memory => "memcpy / memset rows, copy/transpose/cat/fill kernels, or the launching op is aten::copy_/to/contiguous/clone/cat/permute",
            Bucket::Optimizer => "launched under Optimizer.step / zero_grad / _foreach_* / fused adam / clip_grad, or multi_tensor_apply / adam kernels",
            Bucket::Other => "no rule matched",
        }
    }
}

/// Which attention implementation a name is evidence of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Backend {
    Flash,
    FlashAttn,
    MemEfficient,
    Cudnn,
    Math,
    Vendor,
}

impl Backend {
    pub fn id(self) -> &'static str {
        match self {
            Backend::Flash => "flash",
            Backend::FlashAttn => "flash-attn",
            Backend::MemEfficient => "memory-efficient",
            Backend::Cudnn => "cudnn",
            Backend::Math => "math",
            Backend::Vendor => "vendor",
        }
    }
}

/// Kernel name -> attention backend, first match wins.
const KERNEL_BACKENDS: &[(Backend, &[&str])] = &[
    (Backend::Flash, &["pytorch flash"]),
    (Backend::MemEfficient, &["fmha cutlass*", "mem eff attention", "efficient attention*"]),
    (Backend::Cudnn, &["native sdpa", "cudnn sdpa*"]),
    (
        Backend::FlashAttn,
        &["flash fwd*", "flash bwd*", "flash attn*", "flashattn*", "flash attention*", "flashattention*", "compute attn*"],
    ),
    (
        Backend::Vendor,
        &[
            "attn fwd*", "attn bwd*", "fmha*", "aiter*", "paged attention*", "unified attention*", "mha fwd*",
            "mha bwd*", "flashinfer*", "flash decoding*", "*attention kernel*",
        ],
    ),
];

/// The attention backend a kernel name is a signature of.
pub fn kernel_backend(t: &Tokens) -> Option<Backend> {
    KERNEL_BACKENDS.iter().find(|(_, pats)| t.any(pats).is_some()).map(|(b, _)| *b)
}

/// The attention backend an op name implies (None when the op is not an attention op).
pub fn op_backend(op: &str) -> Option<Backend> {
    let o = op.trim();
    if o.starts_with("aten::_scaled_dot_product_flash_attention") || o.starts_with("aten::_flash_attention_") {
        Some(Backend::Flash)
    } else if o.starts_with("aten::_scaled_dot_product_efficient_attention")
        || o.starts_with("aten::_efficient_attention_")
    {
        Some(Backend::MemEfficient)
    } else if o.starts_with("aten::_scaled_dot_product_cudnn_attention") || o.starts_with("aten::_cudnn_attention") {
        Some(Backend::Cudnn)
    } else if o.starts_with("aten::_scaled_dot_product_attention_math") {
        Some(Backend::Math)
    } else if o.starts_with("aten::scaled_dot_product_attention")
        || o.starts_with("aten::_scaled_dot_product_")
        || o.starts_with("aten::_native_multi_head_attention")
    {
        // The generic entry point: which implementation ran is decided by the kernels (or the
        // more specific op) below it; a kernel with no fused signature here means math.
        Some(Backend::Math)
    } else {
        let t = Tokens::new(o);
        if t.any(&["flash attn*", "flashattn*", "flash attention*", "mha fwd", "mha bwd", "mha varlen*"]).is_some() {
            Some(Backend::FlashAttn)
        } else if t.any(&["unified attention*", "paged attention*", "attn fwd", "attn bwd"]).is_some() {
            Some(Backend::Vendor)
        } else {
            None
        }
    }
}

/// Whether an op is one of the generic SDPA entry points (less specific than its children).
pub fn is_generic_sdpa(op: &str) -> bool {
    op.starts_with("aten::scaled_dot_product_attention") || op.starts_with("aten::_native_multi_head_attention")
}

/// Context an enclosing op gives to every kernel below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpContext {
    Attention,
    Collective,
    Optimizer,
    Embedding,
    Dropout,
    Rope,
    Softmax,
}

impl OpContext {
    pub fn bucket(self) -> Bucket {
        match self {
            OpContext::Attention => Bucket::Attention,
            OpContext::Collective => Bucket::Collective,
            OpContext::Optimizer => Bucket::Optimizer,
            OpContext::Embedding => Bucket::Embedding,
            OpContext::Dropout => Bucket::Dropout,
            OpContext::Rope => Bucket::Rope,
            OpContext::Softmax => Bucket::Softmax,
        }
    }
}

/// The context an op name sets, if any.
pub fn op_context(op: &str) -> Option<OpContext> {
    if op_backend(op).is_some() {
        return Some(OpContext::Attention);
    }
    let o = op.trim();
    let aten = |names: &[&str]| names.iter().any(|n| o.strip_prefix("aten::") == Some(n));
    if o.starts_with("c10d::") || o.starts_with("nccl:") || o.starts_with("record_param_comms") || o.starts_with("ProcessGroupNCCL") {
        return Some(OpContext::Collective);
    }
    if o.starts_with("Optimizer.") || o.starts_with("aten::_foreach_") || o.starts_with("aten::_fused_adam") || o.starts_with("aten::_fused_sgd") {
        return Some(OpContext::Optimizer);
    }
    if aten(&["embedding", "embedding_backward", "embedding_dense_backward", "_embedding_bag", "embedding_bag", "_embedding_bag_backward", "_embedding_bag_dense_backward", "embedding_renorm_"]) {
        return Some(OpContext::Embedding);
    }
    if aten(&["dropout", "native_dropout", "feature_dropout", "_fused_dropout", "native_dropout_backward", "alpha_dropout", "dropout_"]) {
        return Some(OpContext::Dropout);
    }
    if aten(&["softmax", "_softmax", "log_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data", "cross_entropy_loss", "nll_loss", "nll_loss_forward", "nll_loss_backward", "nll_loss_nd", "nll_loss2d_forward", "nll_loss2d_backward"]) {
        return Some(OpContext::Softmax);
    }
    let t = Tokens::new(o);
    if t.any(&["rotary*", "rope"]).is_some() {
        return Some(OpContext::Rope);
    }
    if t.any(&["clip grad*", "zero grad"]).is_some() {
        return Some(OpContext::Optimizer);
    }
    None
}

/// Kernel-name rules, first match wins. Each has a label used as the "rule that matched".
pub const KERNEL_RULES: &[(Bucket, &str, &[&str])] = &[
    (Bucket::Collective, "kernel: nccl/rccl collective", &["nccl*", "rccl*", "msccl*", "all reduce", "allreduce*", "all gather", "allgather*", "reduce scatter", "reducescatter*", "alltoall*", "sendrecv*", "cross device reduce*"]),
    (Bucket::Memory, "kernel: KV-cache write", &["reshape and cache*"]),
    (Bucket::Attention, "kernel: attention signature", &["pytorch flash", "fmha*", "native sdpa", "flash fwd*", "flash bwd*", "flash attn*", "flashattn*", "flash attention*", "flashattention*", "compute attn*", "attn fwd*", "attn bwd*", "aiter*", "paged attention*", "unified attention*", "mha fwd*", "mha bwd*", "flashinfer*", "flash decoding*", "mem eff attention"]),
    (Bucket::Softmax, "kernel: softmax / cross-entropy", &["softmax*", "*softmax", "soft max", "cross entropy", "nll loss*", "crossentropy*"]),
    (Bucket::Gemm, "kernel: GEMM / conv", &["*gemm", "gemm*", "*gemv", "gemv*", "nvjet*", "cublas*", "cublaslt*", "cijk*", "xmma*", "wgmma*", "hmma*", "*matmul*", "bmm*", "conv", "conv1d*", "conv2d*", "conv3d*", "convolution*", "convolve*", "*convolve*", "depthwise*", "winograd*", "scudnn*", "hcudnn*", "wgrad*", "dgrad*", "implicit convolve*", "cutlass tensorop*", "tensorop*", "triton tem*", "splitkreduce*", "split k reduce*"]),
    (Bucket::Rope, "kernel: rotary embedding", &["rotary*", "rope"]),
    (Bucket::Embedding, "kernel: embedding", &["embedding*", "*embedding", "embeddingbag*"]),
    (Bucket::Dropout, "kernel: dropout", &["dropout*", "*dropout"]),
    (Bucket::Optimizer, "kernel: optimizer", &["multi tensor apply*", "adam*", "*adam", "adamw*", "lamb", "sgd*", "fused adam*"]),
    (Bucket::Memory, "kernel: copy / transpose / cat / fill", &["*copy*", "memcpy*", "memset*", "transpose*", "permute*", "cat array*", "catarray*", "fill*", "*fill", "contiguous*", "index put*", "scatter gather*"]),
    (Bucket::Elementwise, "kernel: elementwise / norm / activation / reduce", &["*elementwise*", "layer norm*", "layernorm*", "rms norm*", "rmsnorm*", "group norm*", "groupnorm*", "batch norm*", "batchnorm*", "bn fw*", "bn bw*", "*norm", "norm*", "gelu*", "*gelu", "silu*", "*silu", "relu*", "*relu", "swiglu*", "geglu*", "activation*", "sigmoid*", "tanh*", "reduce kernel*", "reduce*", "triton poi*", "triton per*", "triton red*", "pointwise*", "vectorized*", "unrolled*", "add kernel*", "mul kernel*", "pow*", "exp", "expf", "sqrt*", "rsqrt*", "where*", "clamp*", "max pool*", "avg pool*", "maxpool*", "avgpool*", "pool*", "upsample*", "index select*", "indexselect*", "gather*", "scatter*", "sort*", "radix*", "cumsum*", "scan*", "arange*", "random*", "philox*", "distribution*", "bernoulli*"]),
];

/// Leaf-op fallback rules for kernels whose name matched nothing.
const OP_RULES: &[(Bucket, &str, &[&str])] = &[
    (Bucket::Gemm, "op: aten GEMM/conv", &["mm", "bmm", "addmm", "baddbmm", "addbmm", "matmul", "linear", "_scaled_mm", "convolution", "_convolution", "conv1d", "conv2d", "conv3d", "cudnn_convolution", "convolution_backward", "cudnn_convolution_backward", "cudnn_convolution_backward_weight", "cudnn_convolution_backward_input", "miopen_convolution_backward", "miopen_convolution_backward_weight", "miopen_convolution_backward_input", "cudnn_convolution_transpose", "miopen_convolution"]),
    (Bucket::Memory, "op: aten copy/layout", &["copy_", "to", "_to_copy", "contiguous", "clone", "cat", "permute", "transpose", "view", "reshape", "fill_", "zero_", "zeros", "zeros_like", "ones", "full", "empty", "index_put_", "_index_put_impl_", "stack", "narrow", "slice", "split", "chunk", "expand", "flatten", "repeat"]),
    (Bucket::Elementwise, "op: aten elementwise/norm/activation", &["add", "add_", "mul", "mul_", "div", "div_", "sub", "sub_", "rsqrt", "sqrt", "silu", "gelu", "relu", "relu_", "sigmoid", "tanh", "pow", "exp", "neg", "where", "layer_norm", "native_layer_norm", "native_layer_norm_backward", "rms_norm", "_fused_rms_norm", "batch_norm", "cudnn_batch_norm", "native_batch_norm", "group_norm", "native_group_norm", "sum", "mean", "max", "min", "threshold_backward", "gelu_backward", "silu_backward", "sigmoid_backward", "max_pool2d", "max_pool2d_with_indices", "avg_pool2d", "adaptive_avg_pool2d", "addcmul_", "addcdiv_", "lerp_", "clamp", "clamp_", "abs", "log", "cumsum", "sort", "topk", "argmax", "masked_fill", "masked_fill_", "index_select", "gather", "scatter", "scatter_add_"]),
];

/// Bucket for a leaf op name, by the fallback rules.
pub fn op_bucket(op: &str) -> Option<(Bucket, &'static str)> {
    let short = op.strip_prefix("aten::")?;
    OP_RULES.iter().find(|(_, _, names)| names.contains(&short)).map(|(b, label, _)| (*b, *label))
}

/// Bucket for a kernel name, by the kernel rules.
pub fn kernel_bucket(t: &Tokens) -> Option<(Bucket, &'static str)> {
    KERNEL_RULES.iter().find(|(_, _, pats)| t.any(pats).is_some()).map(|(b, label, _)| (*b, *label))
}

/// Whether a GEMM kernel name shows it runs on tensor cores (for the "tensor cores unused"
/// hint). SIMT fp32 kernels (`sgemm`, `gemmSN`, `gemv2T`) do not.
pub fn gemm_uses_tensor_cores(t: &Tokens) -> Option<bool> {
    if t.any(&["sgemm*", "*sgemm", "dgemm*", "*dgemm", "gemv*", "*gemv", "gemvx*", "gemmsn*", "gemmk1*"]).is_some() {
        return Some(false);
    }
    if t.any(&["xmma*", "hmma*", "wgmma*", "tensorop*", "*16816*", "*1688*", "*884*", "nvjet*", "hgemm*", "*hgemm", "bf16*", "*bf16*", "fp16*", "*f16*", "tf32*", "*tf32*", "*h884*", "*h1688*", "*s1688*", "cijk*", "mfma*"]).is_some() {
        return Some(true);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kb(name: &str) -> Option<Bucket> {
        kernel_bucket(&Tokens::new(name)).map(|(b, _)| b)
    }

    #[test]
    fn token_boundaries_prevent_seed_misfires() {
        assert_eq!(op_bucket("aten::to").map(|b| b.0), Some(Bucket::Memory));
        assert_eq!(op_bucket("aten::topk").map(|b| b.0), Some(Bucket::Elementwise));
        assert!(!Tokens::new("using single cosine_similarity").matches("cos"));
        assert_eq!(kb("reshape_and_cache_flash_kernel"), Some(Bucket::Memory));
        assert_eq!(kernel_backend(&Tokens::new("reshape_and_cache_flash_kernel")), None);
        assert_eq!(op_context("aten::cosine_similarity"), None);
    }

    #[test]
    fn gemm_kernels_are_gemm() {
        for k in [
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)",
            "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT",
            "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
            "volta_sgemm_128x64_nn",
            "Cijk_Alik_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1",
        ] {
            assert_eq!(kb(k), Some(Bucket::Gemm), "{k}");
        }
    }

    #[test]
    fn attention_kernels_by_backend() {
        let cases = [
            ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)", Backend::Flash),
            ("void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4> >(Flash_fwd_params)", Backend::FlashAttn),
            ("void flash::compute_attn_ws<Flash_fwd_kernel_traits>(flash::Params)", Backend::FlashAttn),
            ("FlashAttnFwdSm90<...>", Backend::FlashAttn),
            ("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", Backend::MemEfficient),
            ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0", Backend::Cudnn),
            ("attn_fwd", Backend::Vendor),
        ];
        for (k, b) in cases {
            assert_eq!(kernel_backend(&Tokens::new(k)), Some(b), "{k}");
            assert_eq!(kb(k), Some(Bucket::Attention), "{k}");
        }
    }

    #[test]
    fn other_kernel_families() {
        assert_eq!(kb("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), Some(Bucket::Collective));
        assert_eq!(kb("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), Some(Bucket::Collective));
        assert_eq!(kb("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"), Some(Bucket::Elementwise));
        assert_eq!(kb("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)"), Some(Bucket::Softmax));
        assert_eq!(kb("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"), Some(Bucket::Memory));
        assert_eq!(kb("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>"), Some(Bucket::Dropout));
        assert_eq!(kb("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false> >"), Some(Bucket::Optimizer));
        assert_eq!(kb("void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>"), Some(Bucket::Embedding));
        assert_eq!(kb("void rotary_embedding_kernel<c10::BFloat16, true>"), Some(Bucket::Rope));
        assert_eq!(kb("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>"), Some(Bucket::Elementwise));
        assert_eq!(kb("mystery_kernel_xyz"), None);
        // `lambda` in a functor's signature is not the LAMB optimizer.
        assert_eq!(kb("void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3> >"), Some(Bucket::Elementwise));
    }

    #[test]
    fn op_contexts() {
        assert_eq!(op_context("aten::scaled_dot_product_attention"), Some(OpContext::Attention));
        assert_eq!(op_context("aten::_scaled_dot_product_flash_attention"), Some(OpContext::Attention));
        assert_eq!(op_context("FlashAttnFunc"), Some(OpContext::Attention));
        assert_eq!(op_context("c10d::allreduce_"), Some(OpContext::Collective));
        assert_eq!(op_context("record_param_comms"), Some(OpContext::Collective));
        assert_eq!(op_context("Optimizer.step#AdamW.step"), Some(OpContext::Optimizer));
        assert_eq!(op_context("aten::embedding"), Some(OpContext::Embedding));
        assert_eq!(op_context("aten::native_dropout"), Some(OpContext::Dropout));
        assert_eq!(op_context("apply_rotary_pos_emb"), Some(OpContext::Rope));
        assert_eq!(op_context("aten::cross_entropy_loss"), Some(OpContext::Softmax));
        assert_eq!(op_context("aten::linear"), None);
        assert_eq!(op_context("ProfilerStep#3"), None);
        assert_eq!(op_backend("aten::_scaled_dot_product_cudnn_attention"), Some(Backend::Cudnn));
        assert_eq!(op_backend("aten::_scaled_dot_product_attention_math"), Some(Backend::Math));
    }

    #[test]
    fn tensor_core_detection() {
        assert_eq!(gemm_uses_tensor_cores(&Tokens::new("volta_sgemm_128x64_nn")), Some(false));
        assert_eq!(gemm_uses_tensor_cores(&Tokens::new("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn")), Some(true));
        assert_eq!(gemm_uses_tensor_cores(&Tokens::new("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n")), Some(true));
    }
}
