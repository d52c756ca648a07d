//! The kernel-name rules: what a kernel's own name says about its bucket (and, for attention,
//! its backend). First match wins; each family's names come from the library's own source.

use crate::analysis::kernel_name::KernelName;
use crate::analysis::tokens::Tokens;
use crate::vocab::{Backend, Bucket};

use Bucket as B;
use Identity::{Neutral, Own};

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

/// What a rule looks at in a kernel's name.
#[derive(Debug, Clone, Copy)]
pub enum Match {
    /// Any of these token patterns occurs (see [`Tokens`]).
    Any(&'static [&'static str]),
    /// Every entry has a pattern that occurs; an entry lists alternatives separated by `|`.
    All(&'static [&'static str]),
    /// The base name is in one of these namespaces (any level).
    Namespace(&'static [&'static str]),
}

impl Match {
    pub fn matches(&self, name: &KernelName, t: &Tokens) -> bool {
        match self {
            Match::Any(p) => t.any(p).is_some(),
            Match::All(groups) => groups.iter().all(|g| g.split('|').any(|p| t.matches(p))),
            Match::Namespace(ns) => name.namespaces().any(|n| ns.contains(&n)),
        }
    }

    /// How the rule reads in the table in docs/definitions.md.
    pub fn describe(&self) -> String {
        match self {
            Match::Any(p) => p.join(", "),
            Match::All(g) => {
                g.iter().map(|x| format!("({})", x.replace('|', " or "))).collect::<Vec<_>>().join(" and ")
            }
            Match::Namespace(ns) => ns.iter().map(|n| format!("{n}::")).collect::<Vec<_>>().join(", "),
        }
    }
}

/// One row of the kernel-name table.
#[derive(Debug)]
pub struct KernelRule {
    pub bucket: Bucket,
    pub identity: Identity,
    pub when: Match,
    /// The family, in a few words: shown as the rule that matched.
    pub why: &'static str,
    /// For attention kernels: the backend and the library they come from.
    pub backend: Option<(Backend, &'static str)>,
}

const fn rule(bucket: Bucket, identity: Identity, when: Match, why: &'static str) -> KernelRule {
    KernelRule { bucket, identity, when, why, backend: None }
}

const fn attn(backend: Backend, library: &'static str, when: Match, why: &'static str) -> KernelRule {
    KernelRule { bucket: Bucket::Attention, identity: Identity::Own, when, why, backend: Some((backend, library)) }
}

/// Kernel names, first match wins. Sources: each library's own kernel definitions (see the
/// taxonomy section of docs/definitions.md).
pub static KERNEL_RULES: &[KernelRule] = &[
    // Communication: whatever moves data between devices.
    rule(B::Communication, Own, Match::Any(&["nccl*", "rccl*", "msccl*", "mscclpp*"]), "NCCL / RCCL / MSCCL collective"),
    rule(B::Communication, Own, Match::Namespace(&["deep_ep", "mscclpp", "nvshmem", "nvshmemi", "quickreduce", "trtllm_allreduce", "trtllm_allreduce_fusion", "trtllm_mnnvl_allreduce", "trtllm_moe_allreduce_fusion", "trtllm_alltoall", "moe_alltoall", "mixed_comm", "pcie_ipc", "ulysses", "symmetric_memory", "c10d"]), "expert-parallel / custom communication namespace (DeepEP, MSCCL++, NVSHMEM, TensorRT-LLM/FlashInfer all-reduce and all-to-all)"),
    rule(B::Communication, Own, Match::Any(&["cross device reduce*", "all reduce*", "allreduce*", "all gather*", "allgather*", "reduce scatter*", "reducescatter*", "all to all*", "alltoall*", "all2all*", "sendrecv*", "one shot all reduce*", "two shot all reduce*", "oneshot*", "twoshot*", "lamport*", "multimem*", "userbuffers*", "kuserbuffers*", "nvshmem*", "moe a2a*", "moe all to all*", "helix all to all*", "ulysses a2a*", "one rank reduce*", "allreduce prototype*", "reduce scatter cross device*"]), "custom all-reduce / all-gather / all-to-all (vLLM, SGLang, TensorRT-LLM, aiter, symmetric memory, Transformer Engine userbuffers)"),
    rule(B::Memory, Own, Match::Any(&["reshape and cache*", "concat and cache*", "and cache*", "store kvcache*", "store kv cache*", "append paged kv*", "nvfp4 quantize append paged kv*", "set kv buffer*", "write kv cache*", "kv cache write*", "update kv cache*", "kv cache update*", "copy blocks*"]), "KV-cache write (vLLM reshape_and_cache, SGLang store_kvcache, FlashInfer append_paged_kv_cache)"),
    // torch.compile (Inductor) kernels are named after the aten ops they fuse.
    rule(B::Attention, Own, Match::All(&["triton tem|triton", "flex attention*|flex decoding*"]), "torch.compile FlexAttention template"),
    rule(B::Gemm, Own, Match::Any(&["triton tem*"]), "torch.compile matmul / conv template (triton_tem_fused_*)"),
    rule(B::Elementwise, Own, Match::All(&["triton poi|triton per|triton red", "rsqrt|layer norm*|rms norm*|group norm*|batch norm*|native layer norm*|native group norm*|native batch norm*"]), "torch.compile fused norm (rsqrt / *_norm in the fused ops)"),
    rule(B::Softmax, Own, Match::All(&["triton poi|triton per|triton red", "softmax*|log softmax*|nll loss*|cross entropy*"]), "torch.compile fused softmax / cross-entropy"),
    rule(B::Rope, Own, Match::All(&["triton poi|triton per|triton red", "rotary*|rope*"]), "torch.compile fused rotary embedding"),
    rule(B::Embedding, Own, Match::All(&["triton poi|triton per|triton red", "embedding*"]), "torch.compile fused embedding"),
    rule(B::Dropout, Own, Match::All(&["triton poi|triton per|triton red", "dropout*|native dropout*"]), "torch.compile fused dropout"),
    rule(B::Rope, Own, Match::All(&["triton poi|triton per|triton red", "cos", "sin"]), "torch.compile fused cos/sin products (rotary embedding)"),
    rule(B::Optimizer, Neutral, Match::Any(&["triton for*"]), "torch.compile foreach (combo) kernel: a compiled optimizer step"),
    rule(B::Elementwise, Neutral, Match::Any(&["triton poi*", "triton per*", "triton red*", "triton spl*", "triton unk*"]), "torch.compile fused pointwise / reduction"),
    // MoE grouped GEMMs before routing: `fused_moe_kernel` is the expert MLP.
    rule(B::Gemm, Own, Match::Any(&["fused moe kernel*", "fused moe gemm*", "moe gemm*", "moe wna16*", "router gemm*", "mega moe*", "moe bgmv*", "grouped gemm*", "groupedgemm*", "m grouped*", "moe mlp*", "ck moe*", "fmoe*", "moe fc*", "grouped mm*", "marlin*", "gptq*", "awq gemm*", "machete*", "w8a8*", "cutlass scaled mm*", "cutlass moe mm*"]), "MoE grouped GEMM (vLLM/SGLang fused_moe_kernel, CUTLASS/DeepGEMM grouped GEMM, aiter fmoe)"),
    // Attention, with the backend each family is evidence of.
    attn(Backend::Flash, "PyTorch FA2", Match::Namespace(&["pytorch_flash"]), "PyTorch's built-in FlashAttention (pytorch_flash::)"),
    attn(Backend::MemEfficient, "PyTorch mem-efficient", Match::Any(&["fmha cutlass*", "mem eff attention*", "efficient attention*", "pytorch mem eff attention*"]), "memory-efficient attention (fmha_cutlassF/B, xformers)"),
    attn(Backend::Cudnn, "cuDNN", Match::Any(&["native sdpa*", "cudnn sdpa*", "sdpa flash*", "cudnn generated fort native sdpa*"]), "cuDNN fused attention (cudnn_generated_fort_native_sdpa_*)"),
    attn(Backend::FlashAttn, "flash-attn", Match::Any(&["flash fwd*", "flash bwd*", "flash attn*", "flashattn*", "flash attention*", "flashattention*", "compute attn*"]), "flash-attn FA2/FA3/FA4 (flash::flash_fwd_kernel, FlashAttnFwdSm90, FlashAttentionForwardSm100)"),
    attn(Backend::FlashAttn, "flash-attn", Match::Namespace(&["flash"]), "flash-attn FA2/FA3/FA4 (flash::flash_fwd_kernel, FlashAttnFwdSm90, FlashAttentionForwardSm100)"),
    attn(Backend::Vendor, "FlashInfer", Match::Any(&["batch prefill with*", "batch decode with*", "single prefill with*", "single decode with*", "batch mla*", "batchprefillwith*", "batchdecodewith*"]), "FlashInfer attention (BatchPrefill/BatchDecode*Kernel)"),
    attn(Backend::Vendor, "TensorRT-LLM", Match::Any(&["fmha v2*", "fmhav2*", "xqa*", "kernel mha*", "fmha sm*", "fmhasm*", "fmha kernel*", "masked multihead attention*", "mmha*", "trtllm gen*"]), "TensorRT-LLM fused attention (fmha_v2, XQA, trtllm-gen fmha, masked MHA)"),
    attn(Backend::Vendor, "FlashMLA", Match::Any(&["flash fwd splitkv mla*", "flash mla*", "mla decode*", "sparse mla*"]), "FlashMLA / MLA decode kernels"),
    attn(Backend::Vendor, "AOTriton", Match::Any(&["attn fwd*", "attn bwd*", "bwd kernel dk dv*", "bwd kernel dq*", "bwd preprocess*", "bwd kernel fuse*"]), "AOTriton / Triton flash attention (attn_fwd, bwd_kernel_dk_dv)"),
    attn(Backend::Vendor, "CK / aiter", Match::Any(&["fmha fwd*", "fmha bwd*", "fmha v3*", "fmhafwd*", "fmhabwd*", "mha fwd*", "mha bwd*", "fmha*"]), "Composable Kernel / aiter fused attention (FmhaFwdKernel, fmha_v3)"),
    attn(Backend::Vendor, "paged attention", Match::Any(&["paged attention*", "pagedattention*", "unified attention*", "kernel unified attention*", "flash decoding*", "decode attention*", "decode grouped att*", "fwd grouped kernel stage*", "fwd kernel stage*", "extend attention*", "prefill attention*", "context attention*", "lightning attention*", "sparse attention*"]), "paged / decode attention (vLLM paged_attention, Triton unified_attention, SGLang decode/extend)"),
    attn(Backend::Vendor, "fused attention", Match::Any(&["*attention kernel*", "attention fwd*", "attention bwd*", "attention forward*", "attention backward*"]), "other fused attention kernel (name says attention)"),
    // Norms, fused or not (a fused add+RMSNorm+quant is a norm with a quantizing epilogue).
    rule(B::Elementwise, Own, Match::Any(&["layer norm*", "layernorm*", "rms norm*", "rmsnorm*", "group norm*", "groupnorm*", "batch norm*", "batchnorm*", "instance norm*", "bn fw*", "bn bw*", "bn fwd*", "bn bwd*", "ln fwd*", "ln bwd*", "rmsnorm2d*", "layernorm2d*", "cu apply layer norm*", "cu apply rms norm*", "cu compute part grad gamma beta*", "cu compute grad input*", "gamma beta backward*", "compute fused params*", "rowwise moments*", "row wise moments*", "compute internal gradients*", "batch norm collect*", "batch norm transform*", "batch norm backward*", "batch norm elemt*", "batch norm reduce*", "welford*", "norm fwd*", "norm bwd*", "miopen batch norm*", "miopen layer norm*", "*rmsnorm*", "*layernorm*"]), "normalisation (layer/RMS/batch/group norm, fused or not)"),
    rule(B::Rope, Own, Match::Any(&["rotary*", "rope*", "*rotary*", "apply rotary*", "fused rope*", "mrope*", "qk rope*", "apply qk norm rope*", "kn entry 1c*", "kn entry 2c*", "fused qk norm rope*"]), "rotary position embedding"),
    rule(B::MoeRouting, Own, Match::Any(&["moe align*", "moe sum*", "moe sort*", "moe sorting*", "moe permute*", "moe unpermute*", "moe routing*", "moe topk*", "moe gate*", "moe fused gate*", "topk softmax*", "topk gating*", "topkgating*", "topk sigmoid*", "grouped topk*", "biased grouped topk*", "noaux tc*", "count and sort expert*", "expand input rows*", "finalize moe routing*", "build expert maps*", "compute expert offsets*", "ep scatter*", "ep gather*", "moe softmax*", "moe top k*", "moe sigmoid*", "deepseek v3 topk*", "routing indices*", "routing main*", "routing kernel*", "routing deep seek*", "routing llama4*", "expert prefix sum*", "preprocess topk id*", "shuffle input rows*", "opus moe sorting*", "moe fused gate*", "fused topk with score*", "moe aux loss*", "fused moe aux loss*", "count expert num tokens*", "moe lora align*", "permute tokens*", "unpermute tokens*", "token permute*", "token unpermute*", "moe permute*", "sort tokens*", "expert map*", "deepseek topk*", "fused topk*", "combined routing*", "routing clear bitmatrix*", "sum bitmatrix rows*", "expt data compute*", "expt data memset*", "topk forward*", "compute strides tma warp specialized*", "moe"]), "MoE routing: top-k gating, token sort/align, permute/unpermute, finalize"),
    rule(B::Softmax, Own, Match::Any(&["softmax*", "*softmax", "soft max*", "cross entropy*", "crossentropy*", "nll loss*", "log softmax*"]), "softmax / cross-entropy"),
    // Embeddings (PyTorch and fbgemm_gpu table-batched embeddings with their index kernels).
    rule(B::Embedding, Own, Match::Any(&["embedding*", "*embedding", "*embedding*", "embeddingbag*", "embedding bag*", "split embedding*", "bounds check indices*", "linearize index*", "transpose embedding input*", "krn partials per segment*", "krn partial segment offset*", "compute grad weight*", "sum and scatter*", "compute num of partial segments*", "tbe*", "batch index select*", "grad mean*", "lxu cache*", "lru cache*", "lfu cache*", "linearize cache*", "get cache indices*", "ssd cache*"]), "embedding lookups and their backward (PyTorch embedding, fbgemm TBE)"),
    // fbgemm_gpu's name must not read as a GEMM.
    rule(B::Memory, Own, Match::All(&["fbgemm*", "*permute*|permute*|jagged*|*jagged*"]), "fbgemm sparse-feature permute / jagged layout (permute_2D_data, jagged_to_padded)"),
    rule(B::Elementwise, Neutral, Match::Namespace(&["fbgemm_gpu"]), "other fbgemm_gpu sparse / index op"),
    // GEMM and convolution families (tensor-core use is decided by TENSOR_CORE_RULES).
    rule(B::Gemm, Own, Match::Any(&["*gemm", "gemm*", "*gemm*", "*gemv", "gemv*", "nvjet*", "cublas*", "cublaslt*", "cijk*", "xmma*", "wgmma*", "hmma*", "*matmul*", "bmm*", "tensorop*", "cutlass tensorop*", "splitkreduce*", "split k reduce*", "splitk*", "mfma*", "deep gemm*", "deepgemm*", "fp8 gemm*", "fp8gemm*", "scaled mm*", "gemm sm*", "sm90 fp8*", "sm100 fp8*", "sm90 bf16*", "sm100 bf16*", "ck gemm*", "kernel gemm*", "gridwise gemm*", "matmul*", "mm kernel*", "triton mm*", "triton bmm*", "gemmsn*", "gemmk1*", "dot kernel*", "tcgen05*", "wmma*"]), "GEMM (cuBLAS/cuBLASLt nvjet & xmma, hipBLASLt Cijk, CUTLASS, DeepGEMM, CK, Triton matmul, gemv)"),
    rule(B::Gemm, Own, Match::Any(&["conv", "conv1d*", "conv2d*", "conv3d*", "convolution*", "*convolution*", "convolve*", "*convolve*", "depthwise*", "winograd*", "*winograd*", "scudnn*", "hcudnn*", "wgrad*", "dgrad*", "fprop*", "implicit gemm*", "implicit convolve*", "precomputed convolve*", "fft2d*", "fft3d*", "*fft2d*", "gcgemm*", "igemm*", "naive conv*", "miopen conv*", "miopenconv*", "conv bwd*", "conv fwd*", "conv wrw*", "grouped conv*", "im2col*", "col2im*", "*im2col*", "vol2col*", "im2d2col*", "im3d2col*", "flip filter*", "dgrad engine*", "wgrad alg*"]), "convolution (cuDNN implicit GEMM / winograd / FFT, dgrad / wgrad, MIOpen, CK)"),
    rule(B::Quantization, Own, Match::Any(&["*quant*", "*quantize*", "dequant*", "*dequantize*", "cvt fp16 to fp4*", "cvt fp8*", "fp8 quant*", "fp4 quant*", "per token group quant*", "per tensor quant*", "scaled fp8 quant*", "scaled int8 quant*", "cast transpose*", "cast fp8*", "cast to fp8*", "to fp8*", "to mxfp8*", "to mxfp4*", "mxfp8*", "mxfp4*", "nvfp4*", "block scale*", "blockscale*", "compute amax*", "fp8 cast*", "act and mul quant*", "silu and mul quant*", "amax kernel*", "compute scale from amax*", "zero amax*", "amax and scale update*", "partial cast*", "block scale interleave*", "scaled fp4 quant*"]), "quantization: FP8 / INT8 / FP4 casts, scales, block-scale quant"),
    rule(B::Gemm, Own, Match::Namespace(&["cask_cudnn", "cask_cublas", "cask_plugin"]), "cuDNN/cuBLAS kernel-library helper of a convolution or GEMM (cask_cudnn::computeOffsetsKernel)"),
    rule(B::Dropout, Own, Match::Any(&["dropout*", "*dropout", "fused dropout*", "masked scale*"]), "dropout (fused_dropout, masked_scale)"),
    rule(B::Optimizer, Own, Match::Any(&["adam*", "*adam", "adamw*", "*adamw*", "fused adam*", "lamb", "lamb stage*", "sgd*", "*sgd", "adagrad*", "*adagrad", "rmsprop*", "lion*", "adafactor*", "multi tensor adam*", "multi tensor lamb*", "multi tensor sgd*", "muon*", "novograd*", "shampoo*"]), "optimizer update (Adam/AdamW/SGD/LAMB/Adagrad functors, apex multi_tensor_*)"),
    rule(B::Optimizer, Neutral, Match::Any(&["multi tensor apply*", "multi tensor*", "l2norm*", "multi tensor l2norm*", "multi tensor scale*"]), "multi_tensor_apply (foreach ops: optimizer time under an optimizer op)"),
    // Device-side data movement: copies, layout changes, fills.
    rule(B::Memory, Own, Match::Any(&["*copy*", "memcpy*", "memset*", "transpose*", "*transpose*", "permute*", "*permute*", "cat array*", "catarray*", "contiguous*", "nchw to nhwc*", "nhwc to nchw*", "nchw2nhwc*", "nhwc2nchw*", "*nchw to nhwc*", "*nhwc to nchw*", "batched transpose*", "tensor copy*", "strided copy*", "flip*", "roll*", "repeat*", "pad*", "constant pad*", "reflection pad*", "replication pad*", "im2row*", "unfold*", "chunk cat*", "split with sizes*", "index put*", "scatter gather*", "direct copy*", "jagged*", "dense to jagged*", "jagged to padded*", "pack*", "unpack*"]), "device copy / layout change (copy, transpose/permute, cat, NCHW<->NHWC, pad, jagged)"),
    rule(B::Memory, Own, Match::Any(&["sub tensor op with sub tensor*", "sub tensor op with cast*", "sub tensor op with transform*", "universal transpose*"]), "MIOpen tensor copy / cast (SubTensorOpWithSubTensor, SubTensorOpWithCastTensor)"),
    rule(B::Memory, Neutral, Match::Any(&["fill*", "*fill", "*fill*", "zero*", "zeros*", "arange*", "iota*", "linspace*", "sub tensor op with scalar*"]), "fill / zero / arange (the op chain decides, e.g. zero_grad)"),
    // Top-k selects by value (TensorTopK.cu gatherTopK): a reduction, though its name says gather.
    rule(B::Elementwise, Neutral, Match::Any(&["gather top k*", "gathertopk*"]), "top-k selection (ATen TensorTopK gatherTopK)"),
    // ATen's indexing kernels move memory, whatever the elementwise template around them
    // (aten/src/ATen/native/cuda: IndexKernel.cu index_elementwise_kernel, IndexKernelUtils.cu
    // vectorized_gather_kernel, ScatterGatherKernel.cu _scatter_gather_elementwise_kernel,
    // Indexing.cu indexSelect*/indexFunc*, Nonzero.cu, MaskedSelect); the op chain decides
    // first (an index_select under an embedding is embedding time).
    rule(B::Memory, Neutral, Match::Any(&["vectorized gather*", "index elementwise*", "index select*", "indexselect*", "index func*", "index*", "gather*", "*gather", "scatter*", "*scatter", "take*", "masked select*", "masked scatter*", "nonzero*", "write indices*", "flag kernel*"]), "indexing / gather / scatter / nonzero (ATen IndexKernel, ScatterGatherKernel, Indexing)"),
    // Generic compute the op chain may claim.
    rule(B::Elementwise, Neutral, Match::Any(&["*elementwise*", "gelu*", "*gelu", "silu*", "*silu", "relu*", "*relu", "swiglu*", "geglu*", "act and mul*", "silu and mul*", "gelu and mul*", "mul and silu*", "activation*", "sigmoid*", "tanh*", "reduce kernel*", "reduce*", "*reduce", "pointwise*", "vectorized*", "unrolled*", "add kernel*", "mul kernel*", "pow*", "exp", "expf", "sqrt*", "rsqrt*", "where*", "clamp*", "max pool*", "avg pool*", "maxpool*", "avgpool*", "pool*", "*pool*", "adaptive*", "upsample*", "interpolate*", "grid sampler*", "sort*", "radix*", "*radix*", "segmented sort*", "cumsum*", "scan*", "random*", "philox*", "distribution*", "bernoulli*", "uniform*", "normal*", "sampling*", "top k top p*", "top p sampling*", "min p*", "topk*", "*topk", "argmax*", "argmin*", "sum*", "mean*", "norm*", "*norm", "sub tensor op*", "subtensorop*", "op tensor*", "optensor*", "bias*", "*bias", "add bias*", "scale*", "masked*", "mask*", "triu*", "tril*", "compare*", "eq*", "unique*", "bincount*", "histc*", "mse*", "l1 loss*", "bce*", "binary cross*", "kernel3d*", "cub*", "device reduce*", "device scan*", "device select*", "device radix*", "tensor op*", "elementwise", "functor*", "*functor"]), "elementwise / reduction / activation / sort"),
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
