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
pub use crate::vocab::{Backend, Bucket};
use rule::Match::{All, Any};
use std::sync::LazyLock;

impl Bucket {
    /// The bucket's definition, generated from the rule tables: every rule that can put a row
    /// here, in the order they are tried.
    pub fn definition(self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for r in OP_CONTEXT_RULES.iter().filter(|r| r.then.context.bucket() == self) {
            parts.push(format!("launched under {}", r.why));
        }
        for r in KERNEL_RULES.iter().filter(|r| r.then.bucket == self) {
            let p = format!("kernel: {}", r.why);
            // A family matched two ways (names and namespace) is one family.
            if !parts.contains(&p) {
                parts.push(p);
            }
        }
        for r in LEAF_OP_RULES.iter().filter(|r| r.then == self) {
            parts.push(format!("unnamed kernel launched by {}", r.why));
        }
        // Routing ops count as routing only inside a MoE scope (the last scope rule; the ones
        // before it are exceptions).
        let scope = MOE_SCOPE_RULES.last().map(|r| format!("{} (`{}`)", r.why, r.when.describe())).unwrap_or_default();
        for r in ROUTING_OP_RULES.iter().filter(|r| r.then == self) {
            parts.push(format!("{} inside a {scope}", r.why));
        }
        match self {
            Bucket::Memory => parts.insert(0, "gpu_memcpy / gpu_memset rows".into()),
            Bucket::Attention => parts.push(
                "hand-written attention: batched matmul, softmax, matmul inside an attention module or op \
                 (backend `eager`)"
                    .into(),
            ),
            Bucket::Other => parts.push("no rule matched".into()),
            _ => {}
        }
        parts.join("; ")
    }
}

/// Which GEMM / convolution kernels run on tensor cores and which are SIMT. First match wins;
/// no match means unknown.
pub static TENSOR_CORE_RULES: &[Rule<TensorCore>] = &[
    Rule::new(
        Any(TENSOR_CORE_TILES),
        TensorCore::Yes,
        "tensor-core instruction or tile in the name (HMMA/wgmma/tcgen05 tiles, tf32/bf16/fp16/fp8, nvjet, MFMA/XDL)",
    ),
    Rule::new(All(TENSILE_MFMA), TensorCore::Yes, "hipBLASLt/Tensile kernel with an MFMA instruction tile (MI..x..)"),
    Rule::new(
        Any(VECTOR_SHAPED),
        TensorCore::VectorShaped,
        "matrix-vector shaped kernel (gemv, gemmSN, gemmk1): SIMT by its shape",
    ),
    Rule::new(
        Any(SIMT_KERNELS),
        TensorCore::Simt,
        "SIMT kernel (fp32/fp64 sgemm/dgemm, gemv, fp32 cuDNN scudnn/winograd/FFT/dgrad/wgrad engines, naive conv)",
    ),
];

const TENSOR_CORE_TILES: &[&str] = &[
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
];

const TENSILE_MFMA: &[&str] = &["cijk*", "mi*"];

const VECTOR_SHAPED: &[&str] = &["gemv*", "*gemv", "gemvx*", "gemmsn*", "gemmk1*", "*gemv*"];

const SIMT_KERNELS: &[&str] = &[
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
    /// A kernel a fusion fix does not fit (Inductor already fused it, or an index copy).
    pub unfusable: Option<Unfusable>,
}

impl KernelFacts {
    pub fn of(raw: &str) -> KernelFacts {
        let name = KernelName::parse(raw);
        let subject = Subject::kernel(&name);
        let mut rule = KERNEL_INDEX.first(&subject);
        // A copy kernel that writes an FP8 type is a quantizing cast: the dtype is only in the
        // signature, so this one rule reads the full name.
        let fp8_cast = rule.is_some_and(|i| KERNEL_RULES[i].then.bucket == Bucket::Memory)
            && COPY.matches(&subject)
            && FP8_TYPE.matches(&Subject::name(&name.full));
        if fp8_cast {
            rule = KERNEL_RULES.iter().position(|r| r.then.bucket == Bucket::Quantization);
        }
        let tensor_cores = match rule.map(|i| KERNEL_RULES[i].then.bucket) {
            Some(Bucket::Gemm) => TENSOR_CORE_INDEX.first(&subject).map(|i| TENSOR_CORE_RULES[i].then),
            _ => None,
        };
        let unfusable = unfusable::unfusable(&name, rule.map(|i| KERNEL_RULES[i].then.bucket));
        KernelFacts { name, rule, tensor_cores, fp8_cast, unfusable }
    }

    pub fn kernel_rule(&self) -> Option<&'static KernelRule> {
        self.rule.map(|i| &KERNEL_RULES[i])
    }

    pub fn backend(&self) -> Option<(Backend, &'static str)> {
        self.kernel_rule().and_then(|r| r.then.backend)
    }
}

/// [`KERNEL_RULES`] and [`TENSOR_CORE_RULES`] by the literals their rules need.
static KERNEL_INDEX: LazyLock<rule::Index<KernelClass>> = LazyLock::new(|| rule::Index::new(KERNEL_RULES));
static TENSOR_CORE_INDEX: LazyLock<rule::Index<TensorCore>> = LazyLock::new(|| rule::Index::new(TENSOR_CORE_RULES));

/// The kernel's own name says copy (for the FP8-cast check).
const COPY: Match = Any(&["*copy*"]);
/// A type name of an FP8 format in a signature (`c10::Float8_e4m3fn`, `__nv_fp8_e5m2`).
const FP8_TYPE: Match = Any(&["float8*", "*float8*", "e4m3*", "e5m2*", "*e4m3*", "*e5m2*"]);

/// Op or module names that mark an attention block: a matmul, softmax, matmul inside one is
/// attention written by hand (backend `eager`).
pub static ATTENTION_SCOPE_RULES: &[Rule<Backend>] =
    &[Rule::new(Any(ATTENTION_SCOPES), Backend::Eager, "attention module or op")];

const ATTENTION_SCOPES: &[&str] = &[
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
];

/// Whether an op or module name marks an attention block (for hand-written attention).
pub fn is_attention_scope(name: &str) -> bool {
    rule::first(ATTENTION_SCOPE_RULES, &Subject::name(name)).is_some()
}

/// The library named for attention kernels that TransformerEngine launched.
pub const TE_LIBRARY: &str = "TransformerEngine";

/// Whether an op is TransformerEngine's fused-attention Function (its cuDNN kernels are then
/// TransformerEngine's attention, not PyTorch SDPA's).
pub fn is_te_attention_op(name: &str) -> bool {
    rule::Match::Any(op_rules::TE_ATTN_OPS).matches(&Subject::name(name))
}

mod families;
mod hf_models;
#[cfg(test)]
mod index_tests;
mod kernel_rules;
mod leaf_rules;
mod op_rules;
pub mod rule;
#[cfg(test)]
mod tests;
mod unfusable;
mod user_rules;

pub use hf_models::{hf_family, HfFamily, HF_FAMILIES};
pub use kernel_rules::{Identity, KernelClass, KernelRule, TensorCore, KERNEL_RULES};
pub use leaf_rules::*;
pub use op_rules::*;
pub use rule::{Match, Rule, Subject};
pub use unfusable::Unfusable;
pub use user_rules::*;

/// The taxonomy as Markdown, for docs/definitions.md (tests/readme.rs keeps that copy current).
pub fn markdown() -> String {
    use std::fmt::Write;
    let mut o = String::new();
    o.push_str("| id | name | what lands here |\n|---|---|---|\n");
    for b in Bucket::ALL {
        let _ = writeln!(o, "| `{}` | {} | {} |", b.id(), b.name(), b.definition().replace('|', "\\|"));
    }
    o.push_str(
        "\nKernel-name rules, first match wins (*own*: the kernel keeps this bucket under any op but an SDPA \
         op; *neutral*: an enclosing op's context decides first):\n\n\
         | # | bucket | identity | family | matched on |\n|---|---|---|---|---|\n",
    );
    for (i, r) in KERNEL_RULES.iter().enumerate() {
        let identity = match r.then.identity {
            Identity::Own => "own",
            Identity::Neutral => "neutral",
        };
        let backend = r.then.backend.map(|(b, lib)| format!(" (backend `{}`, {lib})", b.id())).unwrap_or_default();
        let _ = writeln!(
            o,
            "| {} | `{}` | {identity} | {}{backend} | `{}` |",
            i + 1,
            r.then.bucket.id(),
            r.why,
            r.when.describe().replace('|', "\\|")
        );
    }
    o.push_str(
        "\nOps that set a context for the kernels below them (the innermost one decides; an SDPA op \
         anywhere in the chain makes every kernel attention):\n\n| context | bucket | ops |\n|---|---|---|\n",
    );
    for r in OP_CONTEXT_RULES {
        let _ = writeln!(
            o,
            "| {:?} | `{}` | {} (`{}`) |",
            r.then.context,
            r.then.context.bucket().id(),
            r.why,
            r.when.describe()
        );
    }
    o.push_str("\nLeaf ops, for kernels whose own name matched nothing:\n\n| bucket | ops |\n|---|---|\n");
    for r in LEAF_OP_RULES {
        let _ = writeln!(
            o,
            "| `{}` | {} |",
            r.then.id(),
            r.when.describe().split(", ").map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ")
        );
    }
    o.push_str(
        "\nTensor-core use of GEMM / convolution kernels, first match wins (no match: unknown):\n\n\
         | use | family | matched on |\n|---|---|---|\n",
    );
    for r in TENSOR_CORE_RULES {
        let _ = writeln!(o, "| {:?} | {} | `{}` |", r.then, r.why, r.when.describe().replace('|', "\\|"));
    }
    o
}
