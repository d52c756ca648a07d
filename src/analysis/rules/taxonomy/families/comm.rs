//! Communication, KV-cache writes, torch.compile (Inductor) and MoE grouped-GEMM kernel names.

pub const NCCL: &[&str] = &["nccl*", "rccl*", "msccl*", "mscclpp*"];

pub const COMM_NAMESPACES: &[&str] = &[
    "deep_ep",
    "mscclpp",
    "nvshmem",
    "nvshmemi",
    "quickreduce",
    "trtllm_allreduce",
    "trtllm_allreduce_fusion",
    "trtllm_mnnvl_allreduce",
    "trtllm_moe_allreduce_fusion",
    "trtllm_alltoall",
    "moe_alltoall",
    "mixed_comm",
    "pcie_ipc",
    "ulysses",
    "symmetric_memory",
    "c10d",
];

pub const CUSTOM_COLLECTIVES: &[&str] = &[
    "cross device reduce*",
    "all reduce*",
    "allreduce*",
    "all gather*",
    "allgather*",
    "reduce scatter*",
    "reducescatter*",
    "all to all*",
    "alltoall*",
    "all2all*",
    "sendrecv*",
    "one shot all reduce*",
    "two shot all reduce*",
    "oneshot*",
    "twoshot*",
    "lamport*",
    "multimem*",
    "userbuffers*",
    "kuserbuffers*",
    "nvshmem*",
    "moe a2a*",
    "moe all to all*",
    "helix all to all*",
    "ulysses a2a*",
    "one rank reduce*",
    "allreduce prototype*",
    "reduce scatter cross device*",
];

pub const KV_CACHE_WRITES: &[&str] = &[
    "reshape and cache*",
    "concat and cache*",
    "and cache*",
    "store kvcache*",
    "store kv cache*",
    "append paged kv*",
    "nvfp4 quantize append paged kv*",
    "set kv buffer*",
    "write kv cache*",
    "kv cache write*",
    "update kv cache*",
    "kv cache update*",
    "copy blocks*",
];

pub const FLEX_ATTENTION: &[&str] = &["triton tem|triton", "flex attention*|flex decoding*"];

pub const INDUCTOR_NORM: &[&str] = &[
    "triton poi|triton per|triton red",
    "rsqrt|layer norm*|rms norm*|group norm*|batch norm*|native layer norm*|native group norm*|native batch norm*",
];

pub const INDUCTOR_SOFTMAX: &[&str] =
    &["triton poi|triton per|triton red", "softmax*|log softmax*|nll loss*|cross entropy*"];

pub const INDUCTOR_ROPE: &[&str] = &["triton poi|triton per|triton red", "rotary*|rope*"];

pub const INDUCTOR_EMBEDDING: &[&str] = &["triton poi|triton per|triton red", "embedding*"];

pub const INDUCTOR_DROPOUT: &[&str] = &["triton poi|triton per|triton red", "dropout*|native dropout*"];

pub const INDUCTOR_COS_SIN: &[&str] = &["triton poi|triton per|triton red", "cos", "sin"];

pub const INDUCTOR_FUSED: &[&str] = &["triton poi*", "triton per*", "triton red*", "triton spl*", "triton unk*"];

pub const MOE_GEMMS: &[&str] = &[
    "fused moe kernel*",
    "fused moe gemm*",
    "moe gemm*",
    "moe wna16*",
    "router gemm*",
    "mega moe*",
    "moe bgmv*",
    "grouped gemm*",
    "groupedgemm*",
    "m grouped*",
    "moe mlp*",
    "ck moe*",
    "fmoe*",
    "moe fc*",
    "grouped mm*",
    "marlin*",
    "gptq*",
    "awq gemm*",
    "machete*",
    "w8a8*",
    "cutlass scaled mm*",
    "cutlass moe mm*",
];

// Expert-parallel all-to-all by structure, whatever the top namespace (forks rename it):
// DeepEP csrc/kernels/legacy/{intranode,internode,internode_ll}.cu define `dispatch`,
// `combine`, `notify_dispatch`, `cached_notify_combine` in those namespaces; UCCL's and
// Primus' forks keep the layout under their own top namespace.
pub const EP_NAMESPACES: &[&str] = &["internode", "intranode", "internode_ll", "intranode_ll", "ep"];
pub const EP_FUNCTIONS: &[&str] = &["dispatch*", "combine*", "notify*", "cached notify*"];
// ROCm mori, src/ops/dispatch_combine: EpDispatchIntraNodeKernel, EpCombineInterNodeKernel.
pub const EP_KERNELS: &[&str] = &["ep dispatch*", "ep combine*"];
