//! Buckets (where GPU time goes) and attention backends. The rules that map names onto them
//! are in analysis::rules; so is each bucket's generated definition.

use serde::{Deserialize, Serialize};

/// Where GPU time goes. Every GPU row lands in exactly one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    Gemm,
    Attention,
    Elementwise,
    Softmax,
    Rope,
    Embedding,
    Dropout,
    Communication,
    Memory,
    Optimizer,
    Quantization,
    MoeRouting,
    Other,
}

impl Bucket {
    pub const ALL: [Bucket; 13] = [
        Bucket::Gemm,
        Bucket::Attention,
        Bucket::Elementwise,
        Bucket::Softmax,
        Bucket::Rope,
        Bucket::Embedding,
        Bucket::Dropout,
        Bucket::Communication,
        Bucket::Memory,
        Bucket::Optimizer,
        Bucket::Quantization,
        Bucket::MoeRouting,
        Bucket::Other,
    ];

    /// The position in [`Bucket::ALL`], for tables indexed by bucket.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable id (the JSON value).
    pub fn id(self) -> &'static str {
        match self {
            Bucket::Gemm => "gemm",
            Bucket::Attention => "attention",
            Bucket::Elementwise => "elementwise",
            Bucket::Softmax => "softmax",
            Bucket::Rope => "rope",
            Bucket::Embedding => "embedding",
            Bucket::Dropout => "dropout",
            Bucket::Communication => "communication",
            Bucket::Memory => "memory",
            Bucket::Optimizer => "optimizer",
            Bucket::Quantization => "quantization",
            Bucket::MoeRouting => "moe_routing",
            Bucket::Other => "other",
        }
    }

    /// Display names; the seed's names where it had the bucket, so its users find their rows.
    pub fn name(self) -> &'static str {
        match self {
            Bucket::Gemm => "matmul (GEMM/conv)",
            Bucket::Attention => "attention (SDPA/FA)",
            Bucket::Elementwise => "elementwise (norm/act)",
            Bucket::Softmax => "softmax",
            Bucket::Rope => "rope",
            Bucket::Embedding => "embedding",
            Bucket::Dropout => "dropout",
            Bucket::Communication => "communication",
            Bucket::Memory => "memory (copy/permute/view)",
            Bucket::Optimizer => "optimizer",
            Bucket::Quantization => "quantization (casts/scales)",
            Bucket::MoeRouting => "MoE routing",
            Bucket::Other => "other",
        }
    }
}

/// Which attention implementation ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
pub enum Backend {
    /// PyTorch's built-in FlashAttention-2 (SDPA flash backend).
    #[serde(rename = "flash")]
    Flash,
    /// The flash-attn package (FA2/FA3/FA4) called directly.
    #[serde(rename = "flash-attn")]
    FlashAttn,
    #[serde(rename = "memory-efficient")]
    MemEfficient,
    #[serde(rename = "cudnn")]
    Cudnn,
    /// SDPA's unfused math backend.
    #[serde(rename = "math")]
    Math,
    /// Attention written by hand (matmul, softmax, matmul), not through SDPA.
    #[serde(rename = "eager")]
    Eager,
    /// A fused kernel of another library (FlashInfer, TensorRT-LLM, AOTriton, CK/aiter, ...).
    #[serde(rename = "vendor")]
    Vendor,
    #[default]
    #[serde(rename = "none")]
    None,
}

impl Backend {
    pub fn id(self) -> &'static str {
        match self {
            Backend::Flash => "flash",
            Backend::FlashAttn => "flash-attn",
            Backend::MemEfficient => "memory-efficient",
            Backend::Cudnn => "cudnn",
            Backend::Math => "math",
            Backend::Eager => "eager",
            Backend::Vendor => "vendor",
            Backend::None => "none",
        }
    }

    /// A label for people.
    pub fn label(self) -> &'static str {
        match self {
            Backend::Flash => "flash (PyTorch FA2)",
            Backend::FlashAttn => "flash-attn package",
            Backend::MemEfficient => "memory-efficient",
            Backend::Cudnn => "cuDNN",
            Backend::Math => "math (unfused)",
            Backend::Eager => "eager (no SDPA)",
            Backend::Vendor => "fused (vendor)",
            Backend::None => "none",
        }
    }

    /// Fused kernels that need no fix.
    pub fn is_fused_flash_like(self) -> bool {
        matches!(self, Backend::Flash | Backend::FlashAttn | Backend::Vendor)
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl std::fmt::Display for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.id())
    }
}
