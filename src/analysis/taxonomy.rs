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

use Bucket as B;

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

mod kernel_rules;
#[cfg(test)]
mod tests;

pub use kernel_rules::{Identity, KernelRule, Match, TensorCore, KERNEL_RULES};

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
