//! Event templates, the step program built from them, and the run's configuration and model dimensions.

use crate::*;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Kind {
    Op,     // cpu_op
    Annot,  // user_annotation
    Step,   // user_annotation ProfilerStep#N
    Py,     // python_function
    Rt,     // cuda_runtime
    Kernel, // kernel
    Memcpy, // gpu_memcpy
    Memset, // gpu_memset
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Th {
    Main,
    Bwd,
}

/// Pre-rendered byte pieces of one event shape. Meaning of a/b/c/d depends on the kind
/// (see `Emitter`).
pub struct Tpl {
    pub kind: Kind,
    pub th: Th,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
    pub c: Vec<u8>,
    pub d: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq)]
pub enum Eff {
    None,
    /// cudaStreamWaitEvent: the comm stream waits for compute work issued so far.
    CommWaitsCompute,
    /// cudaStreamWaitEvent: the compute stream waits for all comm work.
    ComputeWaitsComm,
    /// cudaStreamSynchronize: the host waits for the device.
    Sync,
}

pub enum Node {
    Scope { tpl: u32, pre: u64, post: u64, kids: Vec<Node> },
    Launch { rt: u32, act: u32, comm: bool, cpu: u64, gpu: u64, bytes: u64 },
    Call { rt: u32, cpu: u64, eff: Eff },
    Gap(u64),
}

pub struct Prog {
    pub tpls: Vec<Tpl>,
    pub step: Node,
    /// template of the per-step gpu_user_annotation "ProfilerStep#" (kind Step, GPU side)
    pub gpu_step: u32,
}

// ------------------------------------------------------------------------------ config

#[derive(Clone)]
pub struct Cfg {
    pub layers: u32,
    pub backend: Backend,
    pub mlp: Mlp,
    pub shapes: bool,
    pub rank: u32,
    pub world: u32,
    pub seed: u64,
    pub pid: u64,
    pub tid_main: u64,
    pub tid_bwd: u64,
    pub device: u32,
    /// host-side slowdown of this rank's data loader (a straggler in multi-rank sets)
    pub loader_factor: f64,
}

impl Cfg {
    pub fn new(o: &Opts, rank: u32, world: u32, layers: u32) -> Cfg {
        let h = mix(o.seed, 0xC0FFEE + rank as u64);
        let pid = 1_000_000 + h % 3_000_000;
        Cfg {
            layers,
            backend: o.backend,
            mlp: o.mlp,
            shapes: o.shapes,
            rank,
            world,
            seed: o.seed,
            pid,
            tid_main: pid,
            tid_bwd: pid + 4000 + (h >> 32) % 6000,
            device: rank % 8,
            loader_factor: if world > 1 && rank == world - 1 { 2.5 } else { 1.0 },
        }
    }
}

// model dimensions (GPT-style, ~0.6B parameters at 12 layers)
pub const BATCH: u64 = 8;
pub const SEQ: u64 = 2048;
pub const DM: u64 = 2048;
pub const NH: u64 = 32;
pub const HD: u64 = 64;
pub const FF: u64 = 8192;
pub const VOCAB: u64 = 50304;
pub const TOK: u64 = BATCH * SEQ;
pub const NUM_SMS: f64 = 132.0;

pub const BF16: &str = "c10::BFloat16";
