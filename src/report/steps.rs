//! Steps (ProfilerStep windows) and the model family the attention advice is written for.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub name: String,
    pub span_us: f64,
    pub busy_us: f64,
    pub idle_us: f64,
    #[serde(default)]
    pub kernel_time_us: f64,
    #[serde(default)]
    pub comm_us: f64,
    #[serde(default)]
    pub exposed_comm_us: f64,
    /// Duration of the ProfilerStep span on the CPU.
    #[serde(default)]
    pub cpu_us: f64,
    #[serde(default)]
    pub kernel_count: u64,
    /// Idle causes of the step's gaps (see `IdleCauses`).
    #[serde(default)]
    pub host_wait_us: f64,
    #[serde(default)]
    pub kernel_wait_us: f64,
    #[serde(default)]
    pub other_wait_us: f64,
    /// Whether the step was launch-bound, judged as the trace is (None: no op launched its
    /// kernels one by one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<StepLaunch>,
}

/// One step's launch-bound verdict: the CPU time per op that launched kernels one by one
/// against their kernels' time per op, and the GPU idle that ended at those kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepLaunch {
    /// How many op spans launched kernels one by one in the step.
    pub ops: u64,
    pub cpu_per_op_us: f64,
    pub kernel_per_op_us: f64,
    /// The step's GPU idle that ended at those kernels: what launch-bound puts at stake.
    pub idle_us: f64,
    /// CPU slower per op than the GPU, and that idle over the launch-bound share of the step's span.
    pub launch_bound: bool,
}

/// A Hugging Face transformers model recognised by its classes' `nn.Module` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HfModel {
    /// The class seen (`LlamaForCausalLM`).
    pub class: String,
    /// The family's prefix (`Llama`).
    pub family: String,
    /// Whether transformers gives the family an SDPA path (`_supports_sdpa`).
    pub sdpa: bool,
}
