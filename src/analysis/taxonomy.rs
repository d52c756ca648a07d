//! The taxonomy: buckets, attention backends, and the ordered rule tables that map kernel and
//! op names onto them. Every piece of text a user reads about a bucket or a rule ("why is this
//! kernel here") is generated from these tables; nothing else restates them.
//!
//! Kernel rules match the kernel's own name (see [`KernelName`]): its demangled base name
//! (namespace + function, no template arguments, no parameters) plus, for wrapper kernels, the
//! names inside its template arguments. The first rule that matches decides. A rule's
//! [`Identity`] says whether the kernel keeps its bucket under any enclosing op (a GEMM is a
//! GEMM even under a fused attention Function) or lets the op chain decide (an elementwise add
//! under `Optimizer.step` is optimizer time).

use super::kernel_name::KernelName;
use super::tokens::Tokens;
pub use crate::vocab::{Backend, Bucket};

impl Bucket {
    /// The bucket's definition, generated from the rule tables: every rule that can put a row
    /// here, in the order they are tried.
    pub fn definition(self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for r in OP_CONTEXT_RULES.iter().filter(|r| r.context.bucket() == self) {
            parts.push(format!("launched under {}", r.why));
        }
        for r in KERNEL_RULES.iter().filter(|r| r.bucket == self) {
            let p = format!("kernel: {}", r.why);
            // A family matched two ways (names and namespace) is one family.
            if !parts.contains(&p) {
                parts.push(p);
            }
        }
        for r in LEAF_OP_RULES.iter().filter(|r| r.bucket == self) {
            parts.push(format!("unnamed kernel launched by {}", r.why));
        }
        match self {
            Bucket::Memory => parts.insert(0, "gpu_memcpy / gpu_memset rows".into()),
            Bucket::Attention => parts.push("hand-written attention: batched matmul, softmax, matmul inside an attention module or op (backend `eager`)".into()),
            Bucket::Other => parts.push("no rule matched".into()),
            _ => {}
        }
        parts.join("; ")
    }
}

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
    fn matches(&self, name: &KernelName, t: &Tokens) -> bool {
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

use Bucket as B;
use Identity::{Neutral, Own};

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

/// Which GEMM / convolution kernels run on tensor cores and which are SIMT. First match wins;
/// no match means unknown.
pub static TENSOR_CORE_RULES: &[(Match, TensorCore, &str)] = &[
    (
        Match::Any(&[
            "tensorop*",
            "*tensorop*",
            "xmma*",
            "hmma*",
            "imma*",
            "wgmma*",
            "tcgen05*",
            "wmma*",
            "mfma*",
            "*16816*",
            "*1688*",
            "*884*",
            "*h884*",
            "*h1688*",
            "*s1688*",
            "*s16816*",
            "*i8816*",
            "*161616*",
            "*tf32*",
            "tf32*",
            "nvjet*",
            "hgemm*",
            "*hgemm",
            "bf16*",
            "*bf16*",
            "fp16*",
            "*f16*",
            "fp8*",
            "*fp8*",
            "e4m3*",
            "*e4m3*",
            "deep gemm*",
            "deepgemm*",
            "sm90*",
            "sm100*",
            "sm120*",
            "gmma*",
            "umma*",
            "xdl*",
            "*xdl*",
            "xdlops*",
            "*xdlops*",
            "gtcx*",
            "ck gemm*",
        ]),
        TensorCore::Yes,
        "tensor-core instruction or tile in the name (HMMA/wgmma/tcgen05 tiles, tf32/bf16/fp16/fp8, nvjet, MFMA/XDL)",
    ),
    (
        Match::All(&["cijk*", "mi*"]),
        TensorCore::Yes,
        "hipBLASLt/Tensile kernel with an MFMA instruction tile (MI..x..)",
    ),
    (
        Match::Any(&["gemv*", "*gemv", "gemvx*", "gemmsn*", "gemmk1*", "*gemv*"]),
        TensorCore::VectorShaped,
        "matrix-vector shaped kernel (gemv, gemmSN, gemmk1): SIMT by its shape",
    ),
    (
        Match::Any(&[
            "sgemm*",
            "*sgemm",
            "*sgemm*",
            "dgemm*",
            "*dgemm",
            "scudnn*",
            "*scudnn*",
            "winograd*",
            "*winograd*",
            "fft2d*",
            "*fft2d*",
            "fft3d*",
            "gcgemm*",
            "*gcgemm*",
            "implicit convolve sgemm*",
            "precomputed convolve sgemm*",
            "wgrad alg*",
            "dgrad engine*",
            "dgrad2d*",
            "naive conv*",
            "cudnn cnn*",
            "direct conv*",
            "conv kernel*",
        ]),
        TensorCore::Simt,
        "SIMT kernel (fp32/fp64 sgemm/dgemm, gemv, fp32 cuDNN scudnn/winograd/FFT/dgrad/wgrad engines, naive conv)",
    ),
];

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

/// Leaf ops for kernels whose own name matched nothing.
pub struct LeafOpRule {
    pub bucket: Bucket,
    pub ops: &'static [&'static str],
    pub why: &'static str,
}

pub static LEAF_OP_RULES: &[LeafOpRule] = &[
    LeafOpRule {
        bucket: B::Gemm,
        ops: &[
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
        ],
        why: "aten GEMM / conv op (aten::mm, addmm, bmm, linear, convolution, _scaled_mm)",
    },
    LeafOpRule {
        bucket: B::Memory,
        ops: &[
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
        ],
        why: "aten copy / layout / indexing op (aten::copy_, to, contiguous, cat, fill_, index_select, gather, scatter, nonzero)",
    },
    LeafOpRule {
        bucket: B::Elementwise,
        ops: &[
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
        ],
        why: "aten elementwise / norm / activation op (aten::add, mul, layer_norm, relu, sum)",
    },
];

/// What a kernel name says, worked out once per distinct name.
#[derive(Debug, Clone)]
pub struct KernelFacts {
    pub name: KernelName,
    /// The kernel rule that matched (index into [`KERNEL_RULES`]).
    pub rule: Option<usize>,
    /// For GEMM / conv kernels: whether they run on tensor cores, when the name tells.
    pub tensor_cores: Option<TensorCore>,
    /// A cast whose signature names an FP8 type (`direct_copy` to `Float8_e4m3fn`).
    pub fp8_cast: bool,
}

impl KernelFacts {
    pub fn of(raw: &str) -> KernelFacts {
        let name = KernelName::parse(raw);
        let t = Tokens::new(&name.match_text());
        let mut rule = KERNEL_RULES.iter().position(|r| r.when.matches(&name, &t));
        // A copy kernel that writes an FP8 type is a quantizing cast: the dtype is only in the
        // signature, so this one rule reads the full name.
        let fp8_cast = rule.is_some_and(|i| KERNEL_RULES[i].bucket == Bucket::Memory)
            && t.any(&["*copy*"]).is_some()
            && Tokens::new(&name.full).any(&["float8*", "*float8*", "e4m3*", "e5m2*", "*e4m3*", "*e5m2*"]).is_some();
        if fp8_cast {
            rule = KERNEL_RULES.iter().position(|r| r.bucket == Bucket::Quantization);
        }
        let tensor_cores = match rule.map(|i| KERNEL_RULES[i].bucket) {
            Some(Bucket::Gemm) => TENSOR_CORE_RULES.iter().find(|(m, _, _)| m.matches(&name, &t)).map(|(_, tc, _)| *tc),
            _ => None,
        };
        KernelFacts { name, rule, tensor_cores, fp8_cast }
    }

    pub fn kernel_rule(&self) -> Option<&'static KernelRule> {
        self.rule.map(|i| &KERNEL_RULES[i])
    }

    pub fn backend(&self) -> Option<(Backend, &'static str)> {
        self.kernel_rule().and_then(|r| r.backend)
    }
}

/// The context rule an op name matches (index into [`OP_CONTEXT_RULES`]).
pub fn op_context(op: &str) -> Option<usize> {
    let t = Tokens::new(op);
    OP_CONTEXT_RULES.iter().position(|r| r.when.matches(op, &t))
}

/// The leaf-op fallback for a kernel whose name matched nothing (index into [`LEAF_OP_RULES`]).
pub fn leaf_op_rule(op: &str) -> Option<usize> {
    let short = op.strip_prefix("aten::")?;
    LEAF_OP_RULES.iter().position(|r| r.ops.contains(&short))
}

/// Whether an op or module name marks an attention block (for hand-written attention).
pub fn is_attention_scope(name: &str) -> bool {
    Tokens::new(name)
        .any(&[
            "attention*",
            "*attention",
            "*attention*",
            "attn*",
            "*attn",
            "self attn*",
            "mha",
            "multihead*",
            "multi head*",
            "mhsa*",
            "sdpa*",
        ])
        .is_some()
}

#[cfg(test)]
mod tests;

/// A rule of the user's own: kernels whose name matches `pattern` (token syntax, see
/// [`Tokens`]) go to `bucket`, before any built-in rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRule {
    pub pattern: String,
    pub bucket: Bucket,
}

impl UserRule {
    pub fn matches(&self, name: &KernelName) -> bool {
        let t = Tokens::new(&name.match_text());
        self.pattern.split('|').any(|p| t.matches(p.trim()))
    }
}

/// What one of the user's rules does to a report's kernels (first matching rule wins, as in
/// the analysis): the kernels it takes, and from which buckets.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleEffect {
    /// Distinct kernel names it matches.
    pub kernels: u64,
    pub calls: u64,
    pub time_us: f64,
    /// Time it moves out of each other bucket (largest first).
    pub moves: Vec<(Bucket, f64)>,
}

/// The effect of `rules` on `kernels` (demangled name, current bucket, time, calls), checked
/// live in the page before the trace is analysed again with them.
pub fn rule_effects<'a>(
    rules: &[UserRule],
    kernels: impl IntoIterator<Item = (&'a str, Bucket, f64, u64)>,
) -> Vec<RuleEffect> {
    let mut out = vec![RuleEffect::default(); rules.len()];
    if rules.is_empty() {
        return out; // nothing to match: no kernel name to parse
    }
    for (name, bucket, time_us, calls) in kernels {
        let name = KernelName::parse_demangled(name.to_string());
        let Some(i) = rules.iter().position(|r| r.matches(&name)) else { continue };
        let e = &mut out[i];
        e.kernels += 1;
        e.calls += calls;
        e.time_us += time_us;
        if bucket != rules[i].bucket {
            match e.moves.iter_mut().find(|m| m.0 == bucket) {
                Some(m) => m.1 += time_us,
                None => e.moves.push((bucket, time_us)),
            }
        }
    }
    for e in &mut out {
        e.moves.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    out
}

/// Reads rules, one per line: `pattern => bucket_id`; `#` starts a comment. Errors name the
/// line.
pub fn parse_rules(text: &str) -> Result<Vec<UserRule>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((pattern, bucket)) = line.split_once("=>") else {
            return Err(format!("line {}: expected `pattern => bucket`, found `{line}`", n + 1));
        };
        let id = bucket.trim();
        let bucket = Bucket::ALL.iter().copied().find(|b| b.id() == id).ok_or_else(|| {
            let ids: Vec<&str> = Bucket::ALL.iter().map(|b| b.id()).collect();
            format!("line {}: unknown bucket `{id}` (one of: {})", n + 1, ids.join(", "))
        })?;
        let pattern = pattern.trim().to_ascii_lowercase();
        if pattern.is_empty() {
            return Err(format!("line {}: empty pattern", n + 1));
        }
        out.push(UserRule { pattern, bucket });
    }
    Ok(out)
}

/// The taxonomy as Markdown, for docs/definitions.md (tests/readme.rs keeps that copy current).
pub fn markdown() -> String {
    use std::fmt::Write;
    let mut o = String::new();
    o.push_str("| id | name | what lands here |\n|---|---|---|\n");
    for b in Bucket::ALL {
        let _ = writeln!(o, "| `{}` | {} | {} |", b.id(), b.name(), b.definition().replace('|', "\\|"));
    }
    o.push_str("\nKernel-name rules, first match wins (*own*: the kernel keeps this bucket under any op but an SDPA op; *neutral*: an enclosing op's context decides first):\n\n| # | bucket | identity | family | matched on |\n|---|---|---|---|---|\n");
    for (i, r) in KERNEL_RULES.iter().enumerate() {
        let identity = match r.identity {
            Identity::Own => "own",
            Identity::Neutral => "neutral",
        };
        let backend = r.backend.map(|(b, lib)| format!(" (backend `{}`, {lib})", b.id())).unwrap_or_default();
        let _ = writeln!(
            o,
            "| {} | `{}` | {identity} | {}{backend} | `{}` |",
            i + 1,
            r.bucket.id(),
            r.why,
            r.when.describe().replace('|', "\\|")
        );
    }
    o.push_str("\nOps that set a context for the kernels below them (the innermost one decides; an SDPA op anywhere in the chain makes every kernel attention):\n\n| context | bucket | ops |\n|---|---|---|\n");
    for r in OP_CONTEXT_RULES {
        let _ =
            writeln!(o, "| {:?} | `{}` | {} (`{}`) |", r.context, r.context.bucket().id(), r.why, r.when.describe());
    }
    o.push_str("\nLeaf ops, for kernels whose own name matched nothing:\n\n| bucket | ops |\n|---|---|\n");
    for r in LEAF_OP_RULES {
        let _ = writeln!(
            o,
            "| `{}` | {} |",
            r.bucket.id(),
            r.ops.iter().map(|x| format!("`aten::{x}`")).collect::<Vec<_>>().join(", ")
        );
    }
    o.push_str("\nTensor-core use of GEMM / convolution kernels, first match wins (no match: unknown):\n\n| use | family | matched on |\n|---|---|---|\n");
    for (m, tc, why) in TENSOR_CORE_RULES {
        let _ = writeln!(o, "| {tc:?} | {why} | `{}` |", m.describe().replace('|', "\\|"));
    }
    o
}
