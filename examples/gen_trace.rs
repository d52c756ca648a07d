//! Synthetic PyTorch profiler (Kineto) trace generator, for benchmarks and the web sample.
//!
//! ```text
//! cargo run --release --example gen_trace -- --size 500M [--gzip] [--seed N] [--steps N]
//!     [--layers N] [--backend flash|efficient|cudnn|math] [--mlp gelu|swiglu]
//!     [--ranks N | --rank R] [--world-size W] [--order kineto|step] [--no-shapes]
//!     [--gzip-level 0-9] [--quiet] [OUT]
//! ```
//!
//! Writes one training-step-structured trace in the layout current Kineto writes (the
//! multi-line `{\n    "ph": "X", "cat": ...` form, timestamps in microseconds with three
//! decimals relative to `baseTimeNanoseconds`). OUT is a file, or stdout when absent or `-`.
//! With `--ranks N` (N > 1) OUT is a directory that receives `rank{r}.pt.trace.json[.gz]`.
//!
//! Sizes are decimal (`64M` = 64 000 000 bytes, `2G`, `300K`); `MiB`/`GiB` are binary. The
//! size is the uncompressed JSON size; the trace always holds whole steps, so it lands
//! within half a step of the target. `--steps N` fixes the step count; with both
//! `--size` and `--steps` the model depth (`--layers`) is chosen so N steps land near the size.
//!
//! What a step holds (GPT-style decoder, bf16, H100, DDP over NCCL):
//! `ProfilerStep#N` on the main thread; data loader, host-to-device copies; a forward pass of
//! `--layers` transformer blocks (aten::linear -> aten::addmm, aten::layer_norm, aten::gelu or
//! aten::silu + aten::mul, aten::dropout, aten::add, aten::scaled_dot_product_attention and the
//! backend's op), embedding, lm head, cross entropy; a backward pass on the autograd thread
//! (`autograd::engine::evaluate_function: ...`) with one DDP all-reduce per block
//! (c10d::allreduce_ -> record_param_comms -> nccl:all_reduce, kernel on the comm stream 20,
//! overlapping compute on stream 7); `Optimizer.step#AdamW.step` with aten::_foreach_* ops;
//! `loss.item()` (device-to-host copy + cudaStreamSynchronize). Every kernel has its
//! `cudaLaunchKernel` (cuBLAS sm90 GEMMs: `cudaLaunchKernelExC`) with matching
//! `External id` / `correlation`, and an `ac2g` flow pair. Python frames are
//! `python_function` events. Kernels start after their launch returns and never overlap on
//! their stream.
//!
//! Event order follows Kineto (`--order kineto`, default): all CPU ops of the main thread,
//! then those of the autograd thread, then Python frames, then runtime calls interleaved with
//! their GPU activities, then GPU annotations and metadata. To keep memory constant this
//! replays the deterministic simulation once per group. `--order step` writes each step's
//! events together in a single pass.
//!
//! Deterministic: the same options and seed give byte-identical output (gzip or not).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

// ------------------------------------------------------------------------------ options

#[derive(Clone, Copy, PartialEq, Debug)]
enum Backend {
    Flash,
    Efficient,
    Cudnn,
    Math,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mlp {
    Gelu,
    SwiGlu,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Order {
    Kineto,
    Step,
}

#[derive(Clone, Debug)]
struct Opts {
    size: Option<u64>,
    steps: Option<u64>,
    layers: Option<u32>,
    seed: u64,
    backend: Backend,
    mlp: Mlp,
    gzip: bool,
    gzip_level: u32,
    shapes: bool,
    order: Order,
    ranks: u32,
    rank: u32,
    world: Option<u32>,
    quiet: bool,
    out: Option<String>,
}

const USAGE: &str = "usage: gen_trace --size SIZE | --steps N [--gzip] [--seed N] [--layers N]
       [--backend flash|efficient|cudnn|math] [--mlp gelu|swiglu] [--ranks N | --rank R]
       [--world-size W] [--order kineto|step] [--no-shapes] [--gzip-level 0-9] [--quiet] [OUT]
  SIZE: bytes of uncompressed JSON, decimal suffixes K M G T (300K, 500M, 2G) or KiB MiB GiB.
  OUT:  output file (stdout if absent or '-'); with --ranks N > 1 a directory.";

fn parse_size(s: &str) -> Result<u64, String> {
    let lower = s.trim().to_ascii_lowercase();
    let l = lower.strip_suffix('b').unwrap_or(&lower);
    let table: [(&str, f64); 8] = [
        ("ki", 1024.0),
        ("mi", 1024.0 * 1024.0),
        ("gi", 1024.0 * 1024.0 * 1024.0),
        ("ti", 1024.0 * 1024.0 * 1024.0 * 1024.0),
        ("k", 1e3),
        ("m", 1e6),
        ("g", 1e9),
        ("t", 1e12),
    ];
    let mut num = l;
    let mut mult = 1.0;
    for (suf, m) in table {
        if let Some(n) = l.strip_suffix(suf) {
            num = n;
            mult = m;
            break;
        }
    }
    let v: f64 = num.trim().parse().map_err(|_| format!("bad size '{s}' (try 300K, 500M, 2G)"))?;
    if v.is_nan() || v <= 0.0 {
        return Err(format!("size must be positive: '{s}'"));
    }
    Ok((v * mult) as u64)
}

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        size: None,
        steps: None,
        layers: None,
        seed: 1,
        backend: Backend::Flash,
        mlp: Mlp::Gelu,
        gzip: false,
        gzip_level: 6,
        shapes: true,
        order: Order::Kineto,
        ranks: 1,
        rank: 0,
        world: None,
        quiet: false,
        out: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    fn val<'a>(args: &'a [String], i: &mut usize, name: &str) -> Result<&'a str, String> {
        *i += 1;
        args.get(*i).map(|s| s.as_str()).ok_or_else(|| format!("{name} needs a value"))
    }
    fn num<T: std::str::FromStr>(s: &str, name: &str) -> Result<T, String> {
        s.parse().map_err(|_| format!("{name}: not a number: '{s}'"))
    }
    while i < args.len() {
        let a = args[i].as_str();
        // accept --flag=value too
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a, None),
        };
        let mut get = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => val(&args, &mut i, name).map(|s| s.to_string()),
            }
        };
        match flag {
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "--size" | "-s" => o.size = Some(parse_size(&get("--size")?)?),
            "--steps" => o.steps = Some(num(&get("--steps")?, "--steps")?),
            "--layers" => o.layers = Some(num(&get("--layers")?, "--layers")?),
            "--seed" => o.seed = num(&get("--seed")?, "--seed")?,
            "--gzip" | "-z" => o.gzip = true,
            "--gzip-level" => o.gzip_level = num(&get("--gzip-level")?, "--gzip-level")?,
            "--no-shapes" => o.shapes = false,
            "--quiet" | "-q" => o.quiet = true,
            "--ranks" => o.ranks = num(&get("--ranks")?, "--ranks")?,
            "--rank" => o.rank = num(&get("--rank")?, "--rank")?,
            "--world-size" => o.world = Some(num(&get("--world-size")?, "--world-size")?),
            "--backend" => {
                o.backend = match get("--backend")?.as_str() {
                    "flash" => Backend::Flash,
                    "efficient" | "mem_efficient" | "mem-efficient" => Backend::Efficient,
                    "cudnn" => Backend::Cudnn,
                    "math" => Backend::Math,
                    v => return Err(format!("--backend: unknown '{v}' (flash|efficient|cudnn|math)")),
                }
            }
            "--mlp" => {
                o.mlp = match get("--mlp")?.as_str() {
                    "gelu" => Mlp::Gelu,
                    "swiglu" | "silu" => Mlp::SwiGlu,
                    v => return Err(format!("--mlp: unknown '{v}' (gelu|swiglu)")),
                }
            }
            "--order" => {
                o.order = match get("--order")?.as_str() {
                    "kineto" => Order::Kineto,
                    "step" => Order::Step,
                    v => return Err(format!("--order: unknown '{v}' (kineto|step)")),
                }
            }
            "-" => o.out = Some("-".into()),
            f if f.starts_with('-') => return Err(format!("unknown option '{f}'\n{USAGE}")),
            _ => {
                if o.out.is_some() {
                    return Err(format!("more than one OUT given ('{a}')"));
                }
                o.out = Some(a.to_string());
            }
        }
        i += 1;
    }
    if o.size.is_none() && o.steps.is_none() {
        return Err(format!("give --size or --steps\n{USAGE}"));
    }
    if o.steps == Some(0) {
        return Err("--steps must be at least 1".into());
    }
    if o.layers == Some(0) {
        return Err("--layers must be at least 1".into());
    }
    if o.ranks == 0 {
        return Err("--ranks must be at least 1".into());
    }
    if o.gzip_level > 9 {
        return Err("--gzip-level is 0..9".into());
    }
    if o.ranks > 1 && matches!(o.out.as_deref(), None | Some("-")) {
        return Err("--ranks N > 1 writes one file per rank: give an output directory".into());
    }
    Ok(o)
}

// ------------------------------------------------------------------------------ rng

/// splitmix64: tiny, fast, deterministic everywhere.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut r = Rng(seed ^ 0x5851_F42D_4C95_7F2D);
        r.next();
        r
    }
    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    #[inline]
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// base * (1 +- rel)
    #[inline]
    fn around(&mut self, base: u64, rel: f64) -> u64 {
        let x = base as f64 * (1.0 + rel * (2.0 * self.unit() - 1.0));
        if x < 1.0 {
            1
        } else {
            x as u64
        }
    }
    /// Host-side work: +-25 %, and one call in 100 is slow (page faults, GIL, allocator).
    #[inline]
    fn cpu(&mut self, base: u64) -> u64 {
        if base == 0 {
            return 0;
        }
        let v = self.around(base, 0.25);
        if self.next().is_multiple_of(100) {
            v * (2 + self.next() % 4)
        } else {
            v
        }
    }
    /// Device work is steady: +-3 %.
    #[inline]
    fn gpu(&mut self, base: u64) -> u64 {
        self.around(base, 0.03)
    }
    /// Gap between sibling host events: 0.3 .. 2.3 us.
    #[inline]
    fn gap(&mut self) -> u64 {
        300 + self.next() % 2000
    }
    /// Gap between back-to-back kernels on one stream: 0.8 .. 2.4 us.
    #[inline]
    fn kgap(&mut self) -> u64 {
        800 + self.next() % 1600
    }
    /// Launch latency: from the launch call returning to the earliest kernel start.
    #[inline]
    fn lat(&mut self) -> u64 {
        1500 + self.next() % 3500
    }
}

fn mix(a: u64, b: u64) -> u64 {
    let mut r = Rng::new(a ^ b.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    r.next()
}

// ------------------------------------------------------------------------------ templates

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Kind {
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
enum Th {
    Main,
    Bwd,
}

/// Pre-rendered byte pieces of one event shape. Meaning of a/b/c/d depends on the kind
/// (see `Emitter`).
struct Tpl {
    kind: Kind,
    th: Th,
    a: Vec<u8>,
    b: Vec<u8>,
    c: Vec<u8>,
    d: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq)]
enum Eff {
    None,
    /// cudaStreamWaitEvent: the comm stream waits for compute work issued so far.
    CommWaitsCompute,
    /// cudaStreamWaitEvent: the compute stream waits for all comm work.
    ComputeWaitsComm,
    /// cudaStreamSynchronize: the host waits for the device.
    Sync,
}

enum Node {
    Scope { tpl: u32, pre: u64, post: u64, kids: Vec<Node> },
    Launch { rt: u32, act: u32, comm: bool, cpu: u64, gpu: u64, bytes: u64 },
    Call { rt: u32, cpu: u64, eff: Eff },
    Gap(u64),
}

struct Prog {
    tpls: Vec<Tpl>,
    step: Node,
    /// template of the per-step gpu_user_annotation "ProfilerStep#" (kind Step, GPU side)
    gpu_step: u32,
}

// ------------------------------------------------------------------------------ config

#[derive(Clone)]
struct Cfg {
    layers: u32,
    backend: Backend,
    mlp: Mlp,
    shapes: bool,
    rank: u32,
    world: u32,
    seed: u64,
    pid: u64,
    tid_main: u64,
    tid_bwd: u64,
    device: u32,
    /// host-side slowdown of this rank's data loader (a straggler in multi-rank sets)
    loader_factor: f64,
}

impl Cfg {
    fn new(o: &Opts, rank: u32, world: u32, layers: u32) -> Cfg {
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
const BATCH: u64 = 8;
const SEQ: u64 = 2048;
const DM: u64 = 2048;
const NH: u64 = 32;
const HD: u64 = 64;
const FF: u64 = 8192;
const VOCAB: u64 = 50304;
const TOK: u64 = BATCH * SEQ;
const NUM_SMS: f64 = 132.0;

const BF16: &str = "c10::BFloat16";

// ------------------------------------------------------------------------------ kernels

#[derive(Clone)]
struct K {
    name: String,
    regs: u32,
    smem: u32,
    grid: [u32; 3],
    block: [u32; 3],
    /// launched through cudaLaunchKernelExC (cuBLAS sm90 kernels) instead of cudaLaunchKernel
    exc: bool,
}

fn k(name: &str, regs: u32, smem: u32, grid: [u32; 3], block: [u32; 3]) -> K {
    K { name: name.to_string(), regs, smem, grid, block, exc: false }
}

fn gemm(name: &str, grid: [u32; 3]) -> K {
    K { name: name.to_string(), regs: 168, smem: 213_248, grid, block: [384, 1, 1], exc: true }
}

fn elementwise(functor: &str, arity: u32, grid: u32) -> K {
    k(
        &format!(
            "void at::native::vectorized_elementwise_kernel<4, {functor}, std::array<char*, {arity}ul> >(int, {functor}, std::array<char*, {arity}ul>)"
        ),
        26,
        0,
        [grid, 1, 1],
        [128, 1, 1],
    )
}

fn mta(meta: u32, functor: &str, op: &str) -> K {
    let m = format!("at::native::(anonymous namespace)::TensorListMetadata<{meta}>");
    let f = format!("at::native::(anonymous namespace)::{functor}");
    k(
        &format!("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<{m}, {f}, {op}>({m}, {f}, {op})"),
        40,
        0,
        [320, 1, 1],
        [512, 1, 1],
    )
}

fn fmt6(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Kineto's launch-configuration args for a kernel on an H100 (132 SMs, 64 warps/SM).
fn kernel_tail(k: &K) -> String {
    let blocks = k.grid.iter().map(|&x| x as u64).product::<u64>();
    let threads = k.block.iter().map(|&x| x as u64).product::<u64>();
    let wpb = threads.div_ceil(32).max(1);
    let bps = blocks as f64 / NUM_SMS;
    let wps = bps * wpb as f64;
    let by_warps = 64 / wpb;
    let by_regs = if k.regs > 0 { 65536 / (k.regs as u64 * wpb * 32) } else { 32 };
    let by_smem = if k.smem > 0 { 233_472 / k.smem as u64 } else { 32 };
    let active = by_warps.min(by_regs).min(by_smem).min(32);
    let theo = (active * wpb) as f64 / 64.0;
    let occ = ((wps / 64.0).min(theo) * 100.0) as u64;
    format!(
        ",      \"registers per thread\": {},      \"shared memory\": {},      \"blocks per SM\": {},      \"warps per SM\": {},      \"grid\": [{}, {}, {}],      \"block\": [{}, {}, {}],      \"est. achieved occupancy %\": {}",
        k.regs,
        k.smem,
        fmt6(bps),
        fmt6(wps),
        k.grid[0],
        k.grid[1],
        k.grid[2],
        k.block[0],
        k.block[1],
        k.block[2],
        occ
    )
}

// ------------------------------------------------------------------------------ builder

const COMPUTE_STREAM: u32 = 7;
const COMM_STREAM: u32 = 20;

type TplKey = (Kind, Th, u32, String, String);

struct Bld<'c> {
    cfg: &'c Cfg,
    tpls: RefCell<Vec<Tpl>>,
    map: RefCell<HashMap<TplKey, u32>>,
    th: Cell<Th>,
}

fn us(x: f64) -> u64 {
    (x * 1000.0) as u64
}

/// `[a, b, c]` list of strings
fn slist(items: &[&str]) -> String {
    let v: Vec<String> = items.iter().map(|s| format!("\"{s}\"")).collect();
    format!("[{}]", v.join(", "))
}

/// `[[8, 2048], []]` list of shapes given as "8,2048" / ""
fn dlist(items: &[&str]) -> String {
    let v: Vec<String> = items
        .iter()
        .map(|s| {
            if s.is_empty() {
                "[]".to_string()
            } else {
                format!("[{}]", s.split(',').map(|x| x.trim()).collect::<Vec<_>>().join(", "))
            }
        })
        .collect();
    format!("[{}]", v.join(", "))
}

impl<'c> Bld<'c> {
    fn new(cfg: &'c Cfg) -> Self {
        Bld { cfg, tpls: RefCell::new(Vec::new()), map: RefCell::new(HashMap::new()), th: Cell::new(Th::Main) }
    }

    fn tid(&self, th: Th) -> u64 {
        match th {
            Th::Main => self.cfg.tid_main,
            Th::Bwd => self.cfg.tid_bwd,
        }
    }

    fn intern(&self, kind: Kind, th: Th, stream: u32, name: &str, extra: &str, make: impl FnOnce(&Self) -> Tpl) -> u32 {
        let key = (kind, th, stream, name.to_string(), extra.to_string());
        if let Some(&id) = self.map.borrow().get(&key) {
            return id;
        }
        assert!(!name.contains('"') && !name.contains('\\'), "name needs escaping: {name}");
        let t = make(self);
        let mut tpls = self.tpls.borrow_mut();
        let id = tpls.len() as u32;
        tpls.push(t);
        self.map.borrow_mut().insert(key, id);
        id
    }

    /// record_shapes args: `, "Concrete Inputs": [...], "Input type": [...], "Input Strides": [...], "Input Dims": [...]`
    fn sh(&self, conc: &[&str], types: &[&str], strides: &[&str], dims: &[&str]) -> String {
        if !self.cfg.shapes {
            return String::new();
        }
        format!(
            ", \"Concrete Inputs\": {}, \"Input type\": {}, \"Input Strides\": {}, \"Input Dims\": {}",
            slist(conc),
            slist(types),
            dlist(strides),
            dlist(dims)
        )
    }

    fn cpu_head(&self, cat: &str, name: &str, th: Th) -> Vec<u8> {
        format!(
            "  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {}, \"tid\": {},\n    \"ts\": ",
            self.cfg.pid,
            self.tid(th)
        )
        .into_bytes()
    }

    fn scope_tpl(&self, kind: Kind, name: &str, extra: &str) -> u32 {
        let th = self.th.get();
        self.intern(kind, th, 0, name, extra, |b| {
            let cat = match kind {
                Kind::Op => "cpu_op",
                Kind::Py => "python_function",
                _ => "user_annotation",
            };
            Tpl { kind, th, a: b.cpu_head(cat, name, th), b: extra.as_bytes().to_vec(), c: vec![], d: vec![] }
        })
    }

    fn op_x(&self, name: &str, extra: &str, pre: f64, post: f64, kids: Vec<Node>) -> Node {
        let tpl = self.scope_tpl(Kind::Op, name, extra);
        Node::Scope { tpl, pre: us(pre), post: us(post), kids }
    }

    /// cpu_op without shapes args
    fn op(&self, name: &str, pre: f64, post: f64, kids: Vec<Node>) -> Node {
        self.op_x(name, "", pre, post, kids)
    }

    fn ann(&self, name: &str, pre: f64, post: f64, kids: Vec<Node>) -> Node {
        let tpl = self.scope_tpl(Kind::Annot, name, "");
        Node::Scope { tpl, pre: us(pre), post: us(post), kids }
    }

    fn py(&self, name: &str, pre: f64, post: f64, kids: Vec<Node>) -> Node {
        let tpl = self.scope_tpl(Kind::Py, name, "");
        Node::Scope { tpl, pre: us(pre), post: us(post), kids }
    }

    fn step_tpl(&self) -> u32 {
        let th = self.th.get();
        self.intern(Kind::Step, th, 0, "ProfilerStep#", "", |b| Tpl {
            kind: Kind::Step,
            th,
            a: b"  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#".to_vec(),
            b: format!("\", \"pid\": {}, \"tid\": {},\n    \"ts\": ", b.cfg.pid, b.tid(th)).into_bytes(),
            c: vec![],
            d: vec![],
        })
    }

    fn gpu_step_tpl(&self) -> u32 {
        self.intern(Kind::Step, Th::Main, COMPUTE_STREAM, "gpu:ProfilerStep#", "", |b| Tpl {
            kind: Kind::Step,
            th: Th::Main,
            a: b"  {\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#".to_vec(),
            b: format!("\", \"pid\": {}, \"tid\": {},\n    \"ts\": ", b.cfg.device, COMPUTE_STREAM).into_bytes(),
            c: vec![],
            d: vec![],
        })
    }

    fn rt_tpl(&self, name: &str, cbid: u32) -> u32 {
        let th = self.th.get();
        self.intern(Kind::Rt, th, cbid, name, "", |b| Tpl {
            kind: Kind::Rt,
            th,
            a: b.cpu_head("cuda_runtime", name, th),
            b: format!(",      \"cbid\": {cbid}, \"correlation\": ").into_bytes(),
            c: format!(", \"pid\": {}, \"tid\": {}, \"ts\": ", b.cfg.pid, b.tid(th)).into_bytes(),
            d: vec![],
        })
    }

    fn gpu_head(&self, cat: &str, name: &str, stream: u32) -> Vec<u8> {
        format!(
            "  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {}, \"tid\": {stream},\n    \"ts\": ",
            self.cfg.device
        )
        .into_bytes()
    }

    fn act_tpl(&self, kind: Kind, name: &str, stream: u32, tail: &str) -> u32 {
        self.intern(kind, Th::Main, stream, name, tail, |b| {
            let cat = match kind {
                Kind::Kernel => "kernel",
                Kind::Memcpy => "gpu_memcpy",
                _ => "gpu_memset",
            };
            let dev = b.cfg.device;
            let mid = if kind == Kind::Kernel {
                format!(",      \"queued\": 0, \"device\": {dev}, \"context\": 1,      \"stream\": {stream}, \"correlation\": ")
            } else {
                format!(",      \"device\": {dev}, \"context\": 1,      \"stream\": {stream}, \"correlation\": ")
            };
            Tpl {
                kind,
                th: Th::Main,
                a: b.gpu_head(cat, name, stream),
                b: mid.into_bytes(),
                c: format!("{tail}\n    }}\n  }},\n").into_bytes(),
                d: format!(", \"pid\": {dev}, \"tid\": {stream}, \"ts\": ").into_bytes(),
            }
        })
    }

    fn launch(&self, k: &K, gpu: f64) -> Node {
        let rt = if k.exc { self.rt_tpl("cudaLaunchKernelExC", 430) } else { self.rt_tpl("cudaLaunchKernel", 211) };
        let tail = kernel_tail(k);
        let act = self.act_tpl(Kind::Kernel, &k.name, COMPUTE_STREAM, &tail);
        Node::Launch { rt, act, comm: false, cpu: us(if k.exc { 6.5 } else { 4.5 }), gpu: us(gpu), bytes: 0 }
    }

    fn comm_launch(&self, k: &K, extra: &str, gpu: f64) -> Node {
        let rt = self.rt_tpl("cudaLaunchKernel", 211);
        let tail = kernel_tail(k) + extra;
        let act = self.act_tpl(Kind::Kernel, &k.name, COMM_STREAM, &tail);
        Node::Launch { rt, act, comm: true, cpu: us(9.0), gpu: us(gpu), bytes: 0 }
    }

    fn memcpy(&self, name: &str, bytes: u64, gpu: f64) -> Node {
        let rt = self.rt_tpl("cudaMemcpyAsync", 41);
        let act = self.act_tpl(Kind::Memcpy, name, COMPUTE_STREAM, "");
        Node::Launch { rt, act, comm: false, cpu: us(7.0), gpu: us(gpu), bytes }
    }

    fn memset(&self, bytes: u64, gpu: f64) -> Node {
        let rt = self.rt_tpl("cudaMemsetAsync", 51);
        let act = self.act_tpl(Kind::Memset, "Memset (Device)", COMPUTE_STREAM, "");
        Node::Launch { rt, act, comm: false, cpu: us(4.0), gpu: us(gpu), bytes }
    }

    fn call(&self, name: &str, cbid: u32, cpu: f64, eff: Eff) -> Node {
        let rt = self.rt_tpl(name, cbid);
        Node::Call { rt, cpu: us(cpu), eff }
    }
}

// ------------------------------------------------------------------------------ the model

struct Kernels {
    gemm_fwd: K,
    gemm_fwd_wide: K,
    gemm_bwd_nn: K,
    gemm_bwd_nt: K,
    gemm_f32: K,
    ln_fwd: K,
    ln_bwd_in: K,
    ln_bwd_gamma: K,
    gelu: K,
    gelu_bwd: K,
    silu: K,
    silu_bwd: K,
    mul: K,
    mul_f32: K,
    add: K,
    add_f32: K,
    dropout: K,
    dropout_bwd: K,
    index_select: K,
    emb_bwd: K,
    copy: K,
    copy_f32: K,
    cat: K,
    fill: K,
    reduce_sum: K,
    log_softmax: K,
    log_softmax_bwd: K,
    softmax: K,
    softmax_bwd: K,
    nll: K,
    nll_bwd: K,
    flash_fwd: K,
    flash_bwd_dot: K,
    flash_bwd: K,
    flash_bwd_convert: K,
    eff_fwd: K,
    eff_bwd: K,
    cudnn_fwd: K,
    cudnn_bwd: K,
    nccl: K,
    mta: Vec<(&'static str, K)>,
}

fn kernels() -> Kernels {
    let lnk = "at::native::(anonymous namespace)";
    Kernels {
        gemm_fwd: gemm(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            [48, 128, 1],
        ),
        gemm_fwd_wide: gemm(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
            [64, 128, 1],
        ),
        gemm_bwd_nn: gemm(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
            [16, 128, 1],
        ),
        gemm_bwd_nt: gemm(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            [16, 48, 1],
        ),
        gemm_f32: gemm(
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            [16, 16, 256],
        ),
        ln_fwd: k(
            &format!("void {lnk}::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"),
            34, 24, [16384, 1, 1], [32, 4, 1],
        ),
        ln_bwd_in: k(
            &format!("void {lnk}::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)"),
            40, 64, [16384, 1, 1], [1024, 1, 1],
        ),
        ln_bwd_gamma: k(
            &format!("void {lnk}::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)"),
            64, 8448, [64, 1, 1], [32, 32, 1],
        ),
        gelu: elementwise(
            "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}",
            2, 65536,
        ),
        gelu_bwd: elementwise(
            "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}",
            3, 65536,
        ),
        silu: elementwise(
            "at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}",
            2, 65536,
        ),
        silu_bwd: elementwise(
            "at::native::(anonymous namespace)::silu_backward_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}",
            3, 65536,
        ),
        mul: elementwise("at::native::binary_internal::MulFunctor<c10::BFloat16>", 3, 65536),
        mul_f32: elementwise("at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >", 2, 65536),
        add: elementwise("at::native::CUDAFunctor_add<c10::BFloat16>", 3, 16384),
        add_f32: elementwise("at::native::CUDAFunctor_add<float>", 3, 65536),
        dropout: k(
            &format!("void {lnk}::fused_dropout_kernel_vec<c10::BFloat16, float, unsigned int, 1, 8, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)"),
            32, 0, [1056, 1, 1], [256, 1, 1],
        ),
        dropout_bwd: elementwise(
            "at::native::(anonymous namespace)::masked_scale_kernel<bool, c10::BFloat16, float>(at::Tensor&, at::Tensor const&, at::Tensor const&, float)::{lambda(c10::BFloat16, bool)#1}",
            3, 16384,
        ),
        index_select: k(
            &format!("void {lnk}::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)"),
            32, 0, [264, 1, 1], [128, 1, 1],
        ),
        emb_bwd: k(
            &format!("void {lnk}::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int, int)"),
            38, 4352, [64, 1, 1], [32, 32, 1],
        ),
        copy: k(
            "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
            30, 0, [65536, 1, 1], [128, 1, 1],
        ),
        copy_f32: elementwise(
            "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}",
            2, 65536,
        ),
        cat: k(
            "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
            32, 0, [1056, 3, 1], [512, 1, 1],
        ),
        fill: elementwise("at::native::FillFunctor<float>", 1, 65536),
        reduce_sum: k(
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4>)",
            40, 16, [32, 64, 1], [32, 16, 1],
        ),
        log_softmax: k(
            &format!("void {lnk}::cunn_SoftMaxForward<4, float, float, float, {lnk}::LogSoftMaxForwardEpilogue>(float*, float const*, int)"),
            38, 0, [16384, 1, 1], [1024, 1, 1],
        ),
        log_softmax_bwd: k(
            &format!("void {lnk}::cunn_SoftMaxBackward<4, float, float, float, {lnk}::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)"),
            40, 0, [16384, 1, 1], [1024, 1, 1],
        ),
        softmax: k(
            &format!("void {lnk}::cunn_SoftMaxForwardSmem<4, float, float, float, {lnk}::SoftMaxForwardEpilogue>(float*, float const*, int)"),
            32, 8192, [524288, 1, 1], [512, 1, 1],
        ),
        softmax_bwd: k(
            &format!("void {lnk}::cunn_SoftMaxBackward<4, float, float, float, {lnk}::SoftMaxBackwardEpilogue>(float*, float const*, float const*, long)"),
            40, 0, [524288, 1, 1], [512, 1, 1],
        ),
        nll: k(
            &format!("void {lnk}::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)"),
            30, 0, [1, 1, 1], [1024, 1, 1],
        ),
        nll_bwd: k(
            &format!("void {lnk}::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)"),
            24, 0, [1, 1, 1], [1024, 1, 1],
        ),
        flash_fwd: k(
            "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
            255, 49152, [16, 8, 32], [128, 1, 1],
        ),
        flash_bwd_dot: k(
            "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)",
            32, 0, [16, 8, 32], [256, 1, 1],
        ),
        flash_bwd: k(
            "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_bwd_params)",
            255, 98304, [16, 8, 32], [256, 1, 1],
        ),
        flash_bwd_convert: k(
            "void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, int)",
            40, 16384, [16, 8, 32], [256, 1, 1],
        ),
        eff_fwd: k(
            "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
            168, 49664, [32, 32, 8], [32, 4, 1],
        ),
        eff_bwd: k(
            "fmha_cutlassB_bf16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm80, cutlass::bfloat16_t, true, false, true, 64, 64, 64, false>::Params)",
            255, 81920, [32, 32, 8], [128, 1, 1],
        ),
        cudnn_fwd: k(
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0",
            168, 164_096, [32, 32, 8], [384, 1, 1],
        ),
        cudnn_bwd: k(
            "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_7_64x64x64_4x1x1_kernel0_0",
            168, 197_632, [32, 32, 8], [384, 1, 1],
        ),
        nccl: k(
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            96, 87568, [16, 1, 1], [640, 1, 1],
        ),
        mta: vec![
            ("aten::_foreach_mul_", mta(1, "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::multiplies<float>, float")),
            ("aten::_foreach_lerp_", mta(2, "TernaryOpScalarFunctor<float, 2, 2, 0>", "at::native::LerpFunctor<float>, float")),
            ("aten::_foreach_mul_", mta(1, "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::multiplies<float>, float")),
            ("aten::_foreach_addcmul_", mta(2, "PointwiseOpScalarFunctor<float, 2, 2, 0>", "std::multiplies<float>, float")),
            ("aten::_foreach_sqrt", mta(2, "UnaryOpFunctor<float, 2, 1, 1>", "at::native::Sqrt<float>")),
            ("aten::_foreach_div_", mta(1, "BinaryOpScalarListFunctor<float, 1, 1, 0>", "std::divides<float>")),
            ("aten::_foreach_add_", mta(1, "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::plus<float>, float")),
            ("aten::_foreach_addcdiv_", mta(3, "PointwiseOpScalarListFunctor<float, 3, 3, 0>", "std::divides<float>")),
        ],
    }
}

/// Shapes (as "8,2048,2048") and strides used in record_shapes args.
fn dims3(a: u64, b: u64, c: u64) -> String {
    format!("{a},{b},{c}")
}

struct Model<'b, 'c> {
    b: &'b Bld<'c>,
    k: Kernels,
}

impl<'b, 'c> Model<'b, 'c> {
    fn cfg(&self) -> &Cfg {
        self.b.cfg
    }

    fn as_strided(&self) -> Node {
        self.b.op("aten::as_strided", 1.2, 0.6, vec![])
    }

    fn view(&self, from: &str) -> Node {
        let e = self.b.sh(&["", ""], &[BF16, "ScalarList"], &[&contig(from), ""], &[from, ""]);
        self.b.op_x("aten::view", &e, 2.0, 1.0, vec![])
    }

    fn transpose(&self, from: &str, strides: &str) -> Node {
        let e = self.b.sh(&["", "1", "2"], &[BF16, "Scalar", "Scalar"], &[strides, "", ""], &[from, "", ""]);
        let kids = vec![self.as_strided()];
        self.b.op_x("aten::transpose", &e, 3.0, 1.0, kids)
    }

    fn t(&self, rows: u64, cols: u64) -> Node {
        let d = format!("{rows},{cols}");
        let e = self.b.sh(&[""], &[BF16], &[&format!("{cols},1")], &[&d]);
        let tr = self.transpose(&d, &format!("{cols},1"));
        self.b.op_x("aten::t", &e, 2.5, 1.0, vec![tr])
    }

    fn empty(&self) -> Node {
        self.b.op("aten::empty", 2.0, 1.0, vec![])
    }

    /// aten::linear -> aten::t, aten::view, aten::addmm (GEMM), aten::view
    fn linear(&self, inf: u64, outf: u64, gemm_us: f64, wide: bool) -> Node {
        let x = dims3(BATCH, SEQ, inf);
        let e = self.b.sh(
            &["", "", ""],
            &[BF16, BF16, BF16],
            &[&contig(&x), &format!("{inf},1"), "1"],
            &[&x, &format!("{outf},{inf}"), &outf.to_string()],
        );
        let ea = self.b.sh(
            &["", "", "", "1", "1"],
            &[BF16, BF16, BF16, "Scalar", "Scalar"],
            &["1", &format!("{inf},1"), &format!("1,{inf}"), "", ""],
            &[&outf.to_string(), &format!("{TOK},{inf}"), &format!("{inf},{outf}"), "", ""],
        );
        let kern = if wide { self.k.gemm_fwd_wide.clone() } else { self.k.gemm_fwd.clone() };
        let l = self.b.launch(&kern, gemm_us);
        let kids = vec![
            self.t(outf, inf),
            self.view(&x),
            self.b.op_x("aten::addmm", &ea, 9.0, 3.0, vec![l]),
            self.view(&format!("{TOK},{outf}")),
        ];
        self.b.op_x("aten::linear", &e, 3.0, 2.0, kids)
    }

    fn layer_norm(&self) -> Node {
        let x = dims3(BATCH, SEQ, DM);
        let e = self.b.sh(
            &["", &format!("[{DM}]"), "", "", "1.0000000000000001e-05", "True"],
            &[BF16, "ScalarList", BF16, BF16, "Scalar", "Scalar"],
            &[&contig(&x), "", "1", "1", "", ""],
            &[&x, "", &DM.to_string(), &DM.to_string(), "", ""],
        );
        let en = self.b.sh(
            &["", &format!("[{DM}]"), "", "", "1.0000000000000001e-05"],
            &[BF16, "ScalarList", BF16, BF16, "Scalar"],
            &[&contig(&x), "", "1", "1", ""],
            &[&x, "", &DM.to_string(), &DM.to_string(), ""],
        );
        let kl = self.k.ln_fwd.clone();
        let kids = vec![self.empty(), self.empty(), self.empty(), self.b.launch(&kl, 45.0)];
        let nat = self.b.op_x("aten::native_layer_norm", &en, 5.0, 2.0, kids);
        self.b.op_x("aten::layer_norm", &e, 3.0, 1.5, vec![nat])
    }

    fn unary(&self, name: &str, kern: &K, gpu: f64, dims: &str, dtype: &str) -> Node {
        let e = self.b.sh(&[""], &[dtype], &[&contig(dims)], &[dims]);
        let l = self.b.launch(kern, gpu);
        let kids = vec![self.empty(), l];
        self.b.op_x(name, &e, 5.0, 2.0, kids)
    }

    fn binary(&self, name: &str, kern: &K, gpu: f64, dims: &str, dtype: &str) -> Node {
        let e = self.b.sh(&["", ""], &[dtype, dtype], &[&contig(dims), &contig(dims)], &[dims, dims]);
        let l = self.b.launch(kern, gpu);
        self.b.op_x(name, &e, 6.0, 2.0, vec![l])
    }

    fn dropout(&self, dims: &str) -> Node {
        let e = self.b.sh(
            &["", "0.10000000000000001", "True"],
            &[BF16, "Scalar", "Scalar"],
            &[&contig(dims), "", ""],
            &[dims, "", ""],
        );
        let kd = self.k.dropout.clone();
        let l = self.b.launch(&kd, 55.0);
        let kids = vec![self.empty(), self.empty(), l];
        let nat = self.b.op_x("aten::native_dropout", &e, 5.0, 2.0, kids);
        self.b.op_x("aten::dropout", &e, 2.5, 1.0, vec![nat])
    }

    /// aten::to -> aten::_to_copy -> aten::empty_strided, aten::copy_ -> (kernel)
    fn to_copy(&self, dims: &str, from: &str, to: &str, inner: Node) -> Node {
        let e = self.b.sh(
            &["", to, "False", "False", ""],
            &[from, "ScalarType", "Scalar", "Scalar", ""],
            &[&contig(dims), "", "", "", ""],
            &[dims, "", "", "", ""],
        );
        let ec = self.b.sh(
            &["", "", "False"],
            &[to, from, "Scalar"],
            &[&contig(dims), &contig(dims), ""],
            &[dims, dims, ""],
        );
        let copy = self.b.op_x("aten::copy_", &ec, 6.0, 2.0, vec![inner]);
        let kids = vec![self.b.op("aten::empty_strided", 2.5, 1.0, vec![]), copy];
        let tc = self.b.op_x("aten::_to_copy", &e, 4.0, 1.5, kids);
        self.b.op_x("aten::to", &e, 2.0, 1.0, vec![tc])
    }

    fn sdpa_fwd(&self) -> Vec<Node> {
        let q = format!("{BATCH},{NH},{SEQ},{HD}");
        let qs = format!("{},{},{},1", SEQ * 3 * DM, HD, 3 * DM);
        let backend = self.cfg().backend;
        let (dt, mask) = match backend {
            Backend::Math => ("float", false),
            Backend::Efficient => (BF16, true),
            _ => (BF16, false),
        };
        let causal = if mask { "False" } else { "True" };
        let mask_t = if mask { BF16 } else { "" };
        let mask_d = if mask { format!("{BATCH},1,{SEQ},{SEQ}") } else { String::new() };
        let mask_s = if mask { format!("{},{},{},1", SEQ * SEQ, SEQ * SEQ, SEQ) } else { String::new() };
        let e = self.b.sh(
            &["", "", "", "", "0.", causal, "", "False"],
            &[dt, dt, dt, mask_t, "Scalar", "Scalar", "", "Scalar"],
            &[&qs, &qs, &qs, &mask_s, "", "", "", ""],
            &[&q, &q, &q, &mask_d, "", "", "", ""],
        );
        let mut pre = Vec::new();
        let mut post = Vec::new();
        let inner = match backend {
            Backend::Flash => {
                let ei = self.b.sh(
                    &["", "", "", "0.", "True", "False", ""],
                    &[BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", ""],
                    &[&qs, &qs, &qs, "", "", "", ""],
                    &[&q, &q, &q, "", "", "", ""],
                );
                let kf = self.k.flash_fwd.clone();
                let kids = vec![
                    self.empty(),
                    self.empty(),
                    self.b.op("aten::empty_like", 2.0, 1.0, vec![]),
                    self.b.launch(&kf, 440.0),
                ];
                let fa = self.b.op_x("aten::_flash_attention_forward", &ei, 8.0, 3.0, kids);
                let tr: Vec<Node> = (0..3).map(|_| self.transpose(&q, &qs)).collect();
                let mut kids = tr;
                kids.push(fa);
                kids.push(self.transpose(&q, &qs));
                self.b.op_x("aten::_scaled_dot_product_flash_attention", &ei, 4.0, 2.0, kids)
            }
            Backend::Efficient => {
                let ei = self.b.sh(
                    &["", "", "", "", "True", "0.", "False", ""],
                    &[BF16, BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", ""],
                    &[&qs, &qs, &qs, &mask_s, "", "", "", ""],
                    &[&q, &q, &q, &mask_d, "", "", "", ""],
                );
                let kf = self.k.eff_fwd.clone();
                let kids = vec![self.empty(), self.empty(), self.b.launch(&kf, 640.0)];
                let fa = self.b.op_x("aten::_efficient_attention_forward", &ei, 9.0, 3.0, kids);
                let mut kids: Vec<Node> = (0..3).map(|_| self.transpose(&q, &qs)).collect();
                kids.push(fa);
                kids.push(self.transpose(&q, &qs));
                self.b.op_x("aten::_scaled_dot_product_efficient_attention", &ei, 4.0, 2.0, kids)
            }
            Backend::Cudnn => {
                let ei = self.b.sh(
                    &["", "", "", "", "True", "0.", "True", "False", ""],
                    &[BF16, BF16, BF16, "", "Scalar", "Scalar", "Scalar", "Scalar", ""],
                    &[&qs, &qs, &qs, "", "", "", "", "", ""],
                    &[&q, &q, &q, "", "", "", "", "", ""],
                );
                let kf = self.k.cudnn_fwd.clone();
                let kids = vec![self.empty(), self.empty(), self.empty(), self.b.launch(&kf, 380.0)];
                self.b.op_x("aten::_scaled_dot_product_cudnn_attention", &ei, 12.0, 3.0, kids)
            }
            Backend::Math => {
                // fp32 attention: q, k, v upcast before, the result cast back after
                for _ in 0..3 {
                    let kc = self.k.copy.clone();
                    let l = self.b.launch(&kc, 55.0);
                    pre.push(self.to_copy(&q, BF16, "6", l));
                }
                let s = format!("{BATCH},{NH},{SEQ},{SEQ}");
                let bs = format!("{},{SEQ},{SEQ}", BATCH * NH);
                let ei = self.b.sh(
                    &["", "", "", "", "0.", "True", "", ""],
                    &["float", "float", "float", "", "Scalar", "Scalar", "", ""],
                    &[&contig(&q), &contig(&q), &contig(&q), "", "", "", "", ""],
                    &[&q, &q, &q, "", "", "", "", ""],
                );
                let (km, kg, ka, ks) =
                    (self.k.mul_f32.clone(), self.k.gemm_f32.clone(), self.k.add_f32.clone(), self.k.softmax.clone());
                let mul = self.binary("aten::mul", &km, 70.0, &q, "float");
                let eb = self.b.sh(&["", ""], &["float", "float"], &[&contig(&bs), &contig(&bs)], &[&bs, &bs]);
                let l1 = self.b.launch(&kg, 420.0);
                let bmm1 = self.b.op_x("aten::bmm", &eb, 8.0, 2.0, vec![l1]);
                let mm1 = self.b.op_x("aten::matmul", &eb, 4.0, 2.0, vec![self.view(&q), bmm1, self.view(&bs)]);
                let add = self.binary("aten::add", &ka, 300.0, &s, "float");
                let esm = self.b.sh(
                    &["", "-1", "False"],
                    &["float", "Scalar", "Scalar"],
                    &[&contig(&s), "", ""],
                    &[&s, "", ""],
                );
                let ls = self.b.launch(&ks, 610.0);
                let sm_inner = self.b.op_x("aten::_softmax", &esm, 5.0, 2.0, vec![ls]);
                let sm = self.b.op_x("aten::softmax", &esm, 2.0, 1.0, vec![sm_inner]);
                let l2 = self.b.launch(&kg, 420.0);
                let bmm2 = self.b.op_x("aten::bmm", &eb, 8.0, 2.0, vec![l2]);
                let mm2 = self.b.op_x("aten::matmul", &eb, 4.0, 2.0, vec![self.view(&s), bmm2, self.view(&bs)]);
                let kt = self.k.copy_f32.clone();
                let lback = self.b.launch(&kt, 55.0);
                post.push(self.to_copy(&q, "float", "15", lback));
                self.b.op_x("aten::_scaled_dot_product_attention_math", &ei, 6.0, 2.0, vec![mul, mm1, add, sm, mm2])
            }
        };
        let sdpa = self.b.op_x("aten::scaled_dot_product_attention", &e, 5.0, 2.0, vec![inner]);
        let mut v = pre;
        v.push(sdpa);
        v.extend(post);
        v
    }

    fn block_fwd(&self, _l: u32) -> Node {
        let x = dims3(BATCH, SEQ, DM);
        let qkv = dims3(BATCH, SEQ, 3 * DM);
        let q4 = format!("{BATCH},{SEQ},{NH},{HD}");
        let q4s = format!("{},{},{},1", SEQ * 3 * DM, 3 * DM, HD);
        // attention
        let mut attn = vec![self.linear(DM, 3 * DM, 760.0, true)];
        let es = self.b.sh(
            &["", &DM.to_string(), "2"],
            &[BF16, "Scalar", "Scalar"],
            &[&contig(&qkv), "", ""],
            &[&qkv, "", ""],
        );
        let narrows: Vec<Node> = (0..3)
            .map(|_| {
                let s = self.b.op("aten::slice", 2.0, 1.0, vec![self.as_strided()]);
                self.b.op("aten::narrow", 2.0, 1.0, vec![s])
            })
            .collect();
        attn.push(self.b.op_x("aten::split", &es, 3.0, 1.0, narrows));
        for _ in 0..3 {
            attn.push(self.view(&qkv));
            attn.push(self.transpose(&q4, &q4s));
        }
        attn.extend(self.sdpa_fwd());
        attn.push(self.transpose(&format!("{BATCH},{NH},{SEQ},{HD}"), &format!("{},{},{},1", SEQ * DM, HD, DM)));
        let kc = self.k.copy.clone();
        let lc = self.b.launch(&kc, 48.0);
        let clone = self.b.op(
            "aten::clone",
            4.0,
            2.0,
            vec![self.b.op("aten::empty_like", 2.0, 1.0, vec![]), self.b.op("aten::copy_", 5.0, 2.0, vec![lc])],
        );
        attn.push(self.b.op("aten::contiguous", 2.0, 1.0, vec![clone]));
        attn.push(self.view(&x));
        attn.push(self.linear(DM, DM, 260.0, false));
        attn.push(self.dropout(&x));
        let attn_fwd = self.b.py("model.py(58): forward", 6.0, 4.0, attn);
        let attn_call = self.b.py("torch/nn/modules/module.py(1784): _call_impl", 3.0, 2.0, vec![attn_fwd]);

        // mlp
        let h = dims3(BATCH, SEQ, FF);
        let mut mlp = Vec::new();
        match self.cfg().mlp {
            Mlp::Gelu => {
                mlp.push(self.linear(DM, FF, 1010.0, true));
                let kg = self.k.gelu.clone();
                let e = self.b.sh(&["", "none"], &[BF16, ""], &[&contig(&h), ""], &[&h, ""]);
                let l = self.b.launch(&kg, 95.0);
                mlp.push(self.b.op_x("aten::gelu", &e, 5.0, 2.0, vec![l]));
            }
            Mlp::SwiGlu => {
                mlp.push(self.linear(DM, FF, 1010.0, true));
                mlp.push(self.linear(DM, FF, 1010.0, true));
                let ks = self.k.silu.clone();
                mlp.push(self.unary("aten::silu", &ks, 95.0, &h, BF16));
                let km = self.k.mul.clone();
                mlp.push(self.binary("aten::mul", &km, 110.0, &h, BF16));
            }
        }
        mlp.push(self.linear(FF, DM, 1000.0, false));
        mlp.push(self.dropout(&x));
        let mlp_fwd = self.b.py("model.py(81): forward", 5.0, 3.0, mlp);
        let mlp_call = self.b.py("torch/nn/modules/module.py(1784): _call_impl", 3.0, 2.0, vec![mlp_fwd]);

        let ka = self.k.add.clone();
        let kids = vec![
            self.layer_norm(),
            attn_call,
            self.binary("aten::add", &ka, 48.0, &x, BF16),
            self.layer_norm(),
            mlp_call,
            self.binary("aten::add", &ka, 48.0, &x, BF16),
        ];
        let blk = self.b.py("model.py(104): forward", 5.0, 3.0, kids);
        self.b.py("torch/nn/modules/module.py(1784): _call_impl", 3.0, 2.0, vec![blk])
    }

    fn embedding(&self, rows: u64, gpu: f64) -> Node {
        let idx = format!("{BATCH},{SEQ}");
        let e = self.b.sh(
            &["", "", "-1", "False", "False"],
            &[BF16, "long int", "Scalar", "Scalar", "Scalar"],
            &[&format!("{DM},1"), &format!("{SEQ},1"), "", "", ""],
            &[&format!("{rows},{DM}"), &idx, "", "", ""],
        );
        let ki = self.k.index_select.clone();
        let l = self.b.launch(&ki, gpu);
        let kids = vec![
            self.b.op("aten::reshape", 2.5, 1.0, vec![]),
            self.b.op("aten::index_select", 8.0, 2.0, vec![self.empty(), l]),
            self.view(&TOK.to_string()),
        ];
        self.b.op_x("aten::embedding", &e, 3.0, 1.5, kids)
    }

    fn forward(&self) -> Vec<Node> {
        let x = dims3(BATCH, SEQ, DM);
        let ka = self.k.add.clone();
        let mut kids = vec![
            self.embedding(VOCAB, 40.0),
            self.b.op("aten::arange", 6.0, 2.0, vec![]),
            self.embedding(SEQ, 8.0),
            self.binary("aten::add", &ka, 48.0, &x, BF16),
            self.dropout(&x),
        ];
        for l in 0..self.cfg().layers {
            kids.push(self.block_fwd(l));
        }
        kids.push(self.layer_norm());
        // lm head (no bias): aten::linear -> aten::t, aten::matmul -> aten::mm
        let e = self.b.sh(
            &["", "", ""],
            &[BF16, BF16, ""],
            &[&contig(&x), &format!("{DM},1"), ""],
            &[&x, &format!("{VOCAB},{DM}"), ""],
        );
        let em = self.b.sh(
            &["", ""],
            &[BF16, BF16],
            &[&format!("{DM},1"), &format!("1,{DM}")],
            &[&format!("{TOK},{DM}"), &format!("{DM},{VOCAB}")],
        );
        let kg = self.k.gemm_fwd_wide.clone();
        let l = self.b.launch(&kg, 5900.0);
        let mm = self.b.op_x("aten::mm", &em, 9.0, 3.0, vec![l]);
        let matmul = self.b.op_x(
            "aten::matmul",
            &e,
            4.0,
            2.0,
            vec![self.view(&x), mm, self.b.op("aten::_unsafe_view", 2.5, 1.0, vec![])],
        );
        let tt = self.t(VOCAB, DM);
        kids.push(self.b.op_x("aten::linear", &e, 3.0, 2.0, vec![tt, matmul]));
        let model_fwd = self.b.py("model.py(160): forward", 8.0, 5.0, kids);
        let call = self.b.py("torch/nn/modules/module.py(1784): _call_impl", 3.0, 2.0, vec![model_fwd]);
        let call = self.b.py("torch/nn/modules/module.py(1773): _wrapped_call_impl", 2.0, 1.0, vec![call]);
        let mut v = Vec::new();
        if self.cfg().world > 1 {
            v.push(self.b.ann("DistributedDataParallel.forward", 25.0, 6.0, vec![call]));
        } else {
            v.push(call);
        }
        // loss: logits.float() then cross entropy
        let logits = format!("{BATCH},{SEQ},{VOCAB}");
        let kc = self.k.copy.clone();
        let lc = self.b.launch(&kc, 1650.0);
        v.push(self.to_copy(&logits, BF16, "6", lc));
        let (kls, kn) = (self.k.log_softmax.clone(), self.k.nll.clone());
        let ls = self.b.launch(&kls, 2300.0);
        let lsi = self.b.op("aten::_log_softmax", 6.0, 2.0, vec![ls]);
        let lso = self.b.op("aten::log_softmax", 3.0, 1.0, vec![lsi]);
        let ln = self.b.launch(&kn, 14.0);
        let nf = self.b.op("aten::nll_loss_forward", 7.0, 2.0, vec![ln]);
        let nl = self.b.op("aten::nll_loss", 2.0, 1.0, vec![nf]);
        let nll = self.b.op("aten::nll_loss_nd", 2.0, 1.0, vec![nl]);
        let lo = format!("{TOK},{VOCAB}");
        let el = self.b.sh(
            &["", "", "", "1", "-100", "0."],
            &["float", "long int", "", "Scalar", "Scalar", "Scalar"],
            &[&contig(&lo), "1", "", "", "", ""],
            &[&lo, &TOK.to_string(), "", "", "", ""],
        );
        v.push(self.b.op_x("aten::cross_entropy_loss", &el, 4.0, 2.0, vec![lso, nll]));
        v
    }

    // ---- backward (autograd thread)

    fn eval_fn(&self, name: &str, inner: Vec<Node>) -> Node {
        let n = self.b.op(name, 3.0, 2.0, inner);
        self.b.op(&format!("autograd::engine::evaluate_function: {name}"), 4.0, 3.0, vec![n])
    }

    fn accumulate_grad(&self) -> Node {
        let inner =
            self.b.op("torch::autograd::AccumulateGrad", 3.0, 2.0, vec![self.b.op("aten::detach", 1.5, 0.8, vec![])]);
        self.b.op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 2.0, 2.0, vec![inner])
    }

    fn mm(&self, kern: &K, gpu: f64, a: &str, b: &str) -> Node {
        let e = self.b.sh(&["", ""], &[BF16, BF16], &[&contig(a), &contig(b)], &[a, b]);
        let l = self.b.launch(kern, gpu);
        self.b.op_x("aten::mm", &e, 8.0, 2.0, vec![l])
    }

    fn addmm_bwd(&self, inf: u64, outf: u64, gemm_us: f64, bias: bool) -> Vec<Node> {
        let (kn, kt, kr) = (self.k.gemm_bwd_nn.clone(), self.k.gemm_bwd_nt.clone(), self.k.reduce_sum.clone());
        let g = format!("{TOK},{outf}");
        let w = format!("{outf},{inf}");
        let x = format!("{TOK},{inf}");
        let mut inner = vec![
            self.t(inf, outf),
            self.mm(&kn, gemm_us, &g, &w),
            self.t(TOK, inf),
            self.mm(&kt, gemm_us, &format!("{outf},{TOK}"), &x),
        ];
        if bias {
            let e = self.b.sh(
                &["", "[0]", "True", ""],
                &[BF16, "ScalarList", "Scalar", ""],
                &[&contig(&g), "", "", ""],
                &[&g, "", "", ""],
            );
            let l = self.b.launch(&kr, (outf as f64 / 2048.0) * 14.0 + 8.0);
            inner.push(self.b.op_x("aten::sum", &e, 8.0, 2.0, vec![l]));
        }
        let name = if bias { "AddmmBackward0" } else { "MmBackward0" };
        vec![
            self.eval_fn("UnsafeViewBackward0", vec![self.b.op("aten::reshape", 2.0, 1.0, vec![self.view(&g)])]),
            self.eval_fn(name, inner),
            self.eval_fn("TBackward0", vec![self.t(inf, outf)]),
        ]
    }

    fn layer_norm_bwd(&self) -> Node {
        let (ki, kg) = (self.k.ln_bwd_in.clone(), self.k.ln_bwd_gamma.clone());
        let x = dims3(BATCH, SEQ, DM);
        let e = self.b.sh(
            &["", "", &format!("[{DM}]"), "", "", "", "", "[True, True, True]"],
            &[BF16, BF16, "ScalarList", "float", "float", BF16, BF16, "ScalarList"],
            &[&contig(&x), &contig(&x), "", "", "", "1", "1", ""],
            &[
                &x,
                &x,
                "",
                &format!("{BATCH},{SEQ},1"),
                &format!("{BATCH},{SEQ},1"),
                &DM.to_string(),
                &DM.to_string(),
                "",
            ],
        );
        let kids = vec![self.empty(), self.empty(), self.empty(), self.b.launch(&ki, 68.0), self.b.launch(&kg, 38.0)];
        let n = self.b.op_x("aten::native_layer_norm_backward", &e, 8.0, 3.0, kids);
        self.eval_fn("NativeLayerNormBackward0", vec![n])
    }

    fn dropout_bwd(&self) -> Node {
        let kd = self.k.dropout_bwd.clone();
        let x = dims3(BATCH, SEQ, DM);
        let e = self.b.sh(
            &["", "", "1.1111111111111112"],
            &[BF16, "bool", "Scalar"],
            &[&contig(&x), &contig(&x), ""],
            &[&x, &x, ""],
        );
        let l = self.b.launch(&kd, 52.0);
        let n = self.b.op_x("aten::native_dropout_backward", &e, 6.0, 2.0, vec![self.empty(), l]);
        self.eval_fn("NativeDropoutBackward0", vec![n])
    }

    fn sdpa_bwd(&self) -> Vec<Node> {
        let q = format!("{BATCH},{NH},{SEQ},{HD}");
        let qs = format!("{},{},{},1", SEQ * DM, HD, DM);
        let e4 = |b: &Bld, n: usize, dt: &str| {
            let conc = vec![""; n];
            let types = vec![dt; n];
            let strides = vec![qs.as_str(); n];
            let dims = vec![q.as_str(); n];
            b.sh(&conc, &types, &strides, &dims)
        };
        match self.cfg().backend {
            Backend::Flash => {
                let (k1, k2, k3, kf) = (
                    self.k.flash_bwd_dot.clone(),
                    self.k.flash_bwd.clone(),
                    self.k.flash_bwd_convert.clone(),
                    self.k.fill.clone(),
                );
                let e = e4(self.b, 6, BF16);
                let fill = self.b.launch(&kf, 28.0);
                let zeros = self.b.op(
                    "aten::zeros",
                    3.0,
                    1.0,
                    vec![
                        self.empty(),
                        self.b.op("aten::zero_", 2.0, 1.0, vec![self.b.op("aten::fill_", 4.0, 1.0, vec![fill])]),
                    ],
                );
                let kids = vec![
                    self.b.op("aten::empty_like", 2.0, 1.0, vec![]),
                    self.b.op("aten::empty_like", 2.0, 1.0, vec![]),
                    self.b.op("aten::empty_like", 2.0, 1.0, vec![]),
                    self.empty(),
                    zeros,
                    self.b.launch(&k1, 32.0),
                    self.b.launch(&k2, 1120.0),
                    self.b.launch(&k3, 24.0),
                ];
                let fb = self.b.op_x("aten::_flash_attention_backward", &e, 10.0, 3.0, kids);
                let kids = vec![
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                    fb,
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                ];
                let sb = self.b.op_x("aten::_scaled_dot_product_flash_attention_backward", &e, 5.0, 2.0, kids);
                vec![self.eval_fn("ScaledDotProductFlashAttentionBackward0", vec![sb])]
            }
            Backend::Efficient => {
                let kb = self.k.eff_bwd.clone();
                let e = e4(self.b, 6, BF16);
                let kids = vec![
                    self.empty(),
                    self.empty(),
                    self.empty(),
                    self.empty(),
                    self.b.memset(BATCH * NH * SEQ * 4, 3.5),
                    self.b.launch(&kb, 1650.0),
                ];
                let fb = self.b.op_x("aten::_efficient_attention_backward", &e, 12.0, 3.0, kids);
                let kids = vec![
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                    fb,
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                ];
                let sb = self.b.op_x("aten::_scaled_dot_product_efficient_attention_backward", &e, 5.0, 2.0, kids);
                vec![self.eval_fn("ScaledDotProductEfficientAttentionBackward0", vec![sb])]
            }
            Backend::Cudnn => {
                let kb = self.k.cudnn_bwd.clone();
                let e = e4(self.b, 6, BF16);
                let kids = vec![self.empty(), self.empty(), self.empty(), self.b.launch(&kb, 950.0)];
                let sb = self.b.op_x("aten::_scaled_dot_product_cudnn_attention_backward", &e, 14.0, 3.0, kids);
                vec![self.eval_fn("ScaledDotProductCudnnAttentionBackward0", vec![sb])]
            }
            Backend::Math => {
                let (kg, ks, km, kc) =
                    (self.k.gemm_f32.clone(), self.k.softmax_bwd.clone(), self.k.mul_f32.clone(), self.k.copy.clone());
                let bs = format!("{},{SEQ},{SEQ}", BATCH * NH);
                let s = format!("{BATCH},{NH},{SEQ},{SEQ}");
                let eb = self.b.sh(&["", ""], &["float", "float"], &[&contig(&bs), &contig(&bs)], &[&bs, &bs]);
                let mut v = Vec::new();
                v.push(
                    self.eval_fn("ToCopyBackward0", vec![self.to_copy(&q, "float", "15", self.b.launch(&kc, 55.0))]),
                );
                for name in ["BmmBackward0", "SoftmaxBackward0", "AddBackward0", "BmmBackward0", "MulBackward0"] {
                    let inner = match name {
                        "BmmBackward0" => {
                            let l1 = self.b.launch(&kg, 410.0);
                            let l2 = self.b.launch(&kg, 410.0);
                            vec![
                                self.b.op_x("aten::bmm", &eb, 8.0, 2.0, vec![l1]),
                                self.b.op_x("aten::bmm", &eb, 8.0, 2.0, vec![l2]),
                            ]
                        }
                        "SoftmaxBackward0" => {
                            let l = self.b.launch(&ks, 640.0);
                            let esm = self.b.sh(
                                &["", "", "-1", "6"],
                                &["float", "float", "Scalar", "ScalarType"],
                                &[&contig(&s), &contig(&s), "", ""],
                                &[&s, &s, "", ""],
                            );
                            vec![self.b.op_x("aten::_softmax_backward_data", &esm, 6.0, 2.0, vec![self.empty(), l])]
                        }
                        "MulBackward0" => vec![self.binary("aten::mul", &km, 70.0, &q, "float")],
                        _ => vec![],
                    };
                    v.push(self.eval_fn(name, inner));
                }
                for _ in 0..3 {
                    let l = self.b.launch(&kc, 55.0);
                    let tc = self.to_copy(&q, "float", "15", l);
                    v.push(self.eval_fn("ToCopyBackward0", vec![tc]));
                }
                v
            }
        }
    }

    /// DDP bucket all-reduce issued from the autograd thread (grad hook).
    fn allreduce(&self, nelems: u64) -> Node {
        let w = self.cfg().world;
        let ranks: Vec<String> = (0..w).map(|r| r.to_string()).collect();
        let ranks = format!("[{}]", ranks.join(", "));
        let coll = format!(
            ", \"Collective name\": \"allreduce\", \"In msg nelems\": {nelems}, \"Out msg nelems\": {nelems}, \"Group size\": {w}, \"dtype\": \"BFloat16\", \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"{ranks}\""
        );
        let rpc_args = format!(
            ", \"Process Group Name\": \"0\", \"Global rank stride\": 1, \"Out msg nelems\": {nelems}, \"Process Group Ranks\": \"{ranks}\", \"Group size\": {w}, \"Global rank start\": 0, \"In msg nelems\": {nelems}, \"In split size\": \"[]\", \"Out split size\": \"[]\", \"dtype\": \"BFloat16\", \"Process Group Description\": \"default_pg\", \"Collective name\": \"allreduce\""
        );
        // ring all-reduce: 2 (w-1)/w * bytes at ~180 GB/s bus bandwidth, plus launch overheads
        let bytes = nelems as f64 * 2.0;
        let gpu_us = 2.0 * (w as f64 - 1.0) / w as f64 * bytes / 180e3 + 25.0;
        let kn = self.k.nccl.clone();
        let launch = self.b.comm_launch(&kn, &coll, gpu_us);
        let kids = vec![
            self.b.call("cudaStreamIsCapturing", 317, 1.2, Eff::None),
            self.b.call("cudaEventRecord", 135, 2.3, Eff::None),
            self.b.call("cudaStreamWaitEvent", 147, 1.6, Eff::CommWaitsCompute),
            self.b.ann("nccl:all_reduce", 12.0, 4.0, vec![launch]),
            self.b.call("cudaEventRecord", 135, 1.5, Eff::None),
        ];
        let rpc = self.b.op_x("record_param_comms", &rpc_args, 18.0, 10.0, kids);
        let e = self.b.sh(
            &["", "", "", "-1"],
            &["TensorList", "Object", "Object", "Scalar"],
            &["", "", "", ""],
            &["", "", "", ""],
        );
        self.b.op_x("c10d::allreduce_", &e, 20.0, 12.0, vec![rpc])
    }

    fn block_bwd(&self) -> Vec<Node> {
        let mut v = Vec::new();
        v.push(self.eval_fn("AddBackward0", vec![]));
        v.push(self.dropout_bwd());
        // mlp
        v.extend(self.addmm_bwd(FF, DM, 1000.0, true));
        match self.cfg().mlp {
            Mlp::Gelu => {
                let kg = self.k.gelu_bwd.clone();
                let h = dims3(BATCH, SEQ, FF);
                let e = self.b.sh(&["", "", "none"], &[BF16, BF16, ""], &[&contig(&h), &contig(&h), ""], &[&h, &h, ""]);
                let l = self.b.launch(&kg, 150.0);
                let gb = self.b.op_x("aten::gelu_backward", &e, 6.0, 2.0, vec![self.empty(), l]);
                v.push(self.eval_fn("GeluBackward0", vec![gb]));
                v.extend(self.addmm_bwd(DM, FF, 1010.0, true));
            }
            Mlp::SwiGlu => {
                let (km, ks) = (self.k.mul.clone(), self.k.silu_bwd.clone());
                let h = dims3(BATCH, SEQ, FF);
                let m1 = self.binary("aten::mul", &km, 110.0, &h, BF16);
                let m2 = self.binary("aten::mul", &km, 110.0, &h, BF16);
                v.push(self.eval_fn("MulBackward0", vec![m1, m2]));
                let sb = self.unary("aten::silu_backward", &ks, 140.0, &h, BF16);
                v.push(self.eval_fn("SiluBackward0", vec![sb]));
                v.extend(self.addmm_bwd(DM, FF, 1010.0, true));
                v.extend(self.addmm_bwd(DM, FF, 1010.0, true));
            }
        }
        v.push(self.layer_norm_bwd());
        v.push(self.eval_fn("AddBackward0", vec![]));
        v.push(self.dropout_bwd());
        v.extend(self.addmm_bwd(DM, DM, 265.0, true));
        let x = dims3(BATCH, SEQ, DM);
        v.push(self.eval_fn("ViewBackward0", vec![self.b.op("aten::reshape", 2.0, 1.0, vec![self.view(&x)])]));
        v.push(self.eval_fn("CloneBackward0", vec![]));
        let q = format!("{BATCH},{NH},{SEQ},{HD}");
        let qs = format!("{},{},{},1", SEQ * DM, HD, DM);
        v.push(self.eval_fn("TransposeBackward0", vec![self.transpose(&q, &qs)]));
        v.extend(self.sdpa_bwd());
        for _ in 0..3 {
            v.push(self.eval_fn("TransposeBackward0", vec![self.transpose(&q, &qs)]));
            v.push(self.eval_fn("ViewBackward0", vec![self.b.op("aten::reshape", 2.0, 1.0, vec![self.view(&q)])]));
        }
        let kc = self.k.cat.clone();
        let e = self.b.sh(&["", "2"], &["TensorList", "Scalar"], &["", ""], &["", ""]);
        let l = self.b.launch(&kc, 88.0);
        let cat = self.b.op_x("aten::cat", &e, 8.0, 2.0, vec![l]);
        v.push(self.eval_fn("SplitBackward0", vec![cat]));
        v.extend(self.addmm_bwd(DM, 3 * DM, 760.0, true));
        v.push(self.layer_norm_bwd());
        let nparams = if self.cfg().mlp == Mlp::SwiGlu { 14 } else { 12 };
        for _ in 0..nparams {
            v.push(self.accumulate_grad());
        }
        if self.cfg().world > 1 {
            let per_layer = 4 * DM * DM + 2 * DM * FF + if self.cfg().mlp == Mlp::SwiGlu { DM * FF } else { 0 };
            v.push(self.allreduce(per_layer + 9 * DM));
        }
        v
    }

    fn embedding_bwd(&self, rows: u64, memset_us: f64, gpu: f64) -> Node {
        let ke = self.k.emb_bwd.clone();
        let ms = self.b.memset(rows * DM * 2, memset_us);
        let zeros =
            self.b.op("aten::zeros", 3.0, 1.0, vec![self.empty(), self.b.op("aten::zero_", 3.0, 1.0, vec![ms])]);
        let l = self.b.launch(&ke, gpu);
        let e = self.b.sh(
            &["", "", &rows.to_string(), "-1", "False"],
            &[BF16, "long int", "Scalar", "Scalar", "Scalar"],
            &[&contig(&dims3(BATCH, SEQ, DM)), &format!("{SEQ},1"), "", "", ""],
            &[&dims3(BATCH, SEQ, DM), &format!("{BATCH},{SEQ}"), "", "", ""],
        );
        let dense = self.b.op_x("aten::embedding_dense_backward", &e, 10.0, 3.0, vec![zeros, l]);
        let eb = self.b.op_x("aten::embedding_backward", &e, 3.0, 1.0, vec![dense]);
        self.eval_fn("EmbeddingBackward0", vec![eb])
    }

    fn backward(&self) -> Vec<Node> {
        let mut v = Vec::new();
        let (kf, kn, kls, kc) =
            (self.k.fill.clone(), self.k.nll_bwd.clone(), self.k.log_softmax_bwd.clone(), self.k.copy_f32.clone());
        // loss
        let lf = self.b.launch(&kf, 1050.0);
        let zeros = self.b.op(
            "aten::zeros",
            3.0,
            1.0,
            vec![self.empty(), self.b.op("aten::zero_", 2.0, 1.0, vec![self.b.op("aten::fill_", 4.0, 1.0, vec![lf])])],
        );
        let ln = self.b.launch(&kn, 15.0);
        let nb = self.b.op("aten::nll_loss_backward", 6.0, 2.0, vec![zeros, ln]);
        v.push(self.eval_fn("NllLossBackward0", vec![nb]));
        let l = self.b.launch(&kls, 2450.0);
        let lb = self.b.op("aten::_log_softmax_backward_data", 6.0, 2.0, vec![self.empty(), l]);
        v.push(self.eval_fn("LogSoftmaxBackward0", vec![lb]));
        let logits = format!("{BATCH},{SEQ},{VOCAB}");
        let l = self.b.launch(&kc, 1200.0);
        let tc = self.to_copy(&logits, "float", "15", l);
        v.push(self.eval_fn("ToCopyBackward0", vec![tc]));
        // lm head (tied with wte)
        v.extend(self.addmm_bwd(DM, VOCAB, 5900.0, false));
        v.push(self.layer_norm_bwd());
        v.push(self.accumulate_grad());
        v.push(self.accumulate_grad());
        for _ in 0..self.cfg().layers {
            v.extend(self.block_bwd());
        }
        v.push(self.dropout_bwd());
        v.push(self.eval_fn("AddBackward0", vec![]));
        v.push(self.embedding_bwd(SEQ, 6.0, 9.0));
        v.push(self.embedding_bwd(VOCAB, 95.0, 330.0));
        v.push(self.accumulate_grad());
        v.push(self.accumulate_grad());
        if self.cfg().world > 1 {
            v.push(self.allreduce(VOCAB * DM + SEQ * DM + 2 * DM));
        }
        v
    }

    fn optimizer(&self) -> Node {
        let layers = self.cfg().layers as u64;
        let nparams = layers * if self.cfg().mlp == Mlp::SwiGlu { 14 } else { 12 } + 6;
        let launches = (nparams / 24 + 1).max(1);
        let mut kids = Vec::new();
        if self.cfg().world > 1 {
            // DDP: the optimizer's kernels wait for the last all-reduce
            kids.push(self.b.call("cudaStreamWaitEvent", 147, 1.7, Eff::ComputeWaitsComm));
        }
        let tl = self.b.sh(&["", ""], &["TensorList", "Scalar"], &["", ""], &["", ""]);
        kids.push(self.b.op_x("aten::_foreach_add_", &tl, 40.0 + nparams as f64 * 0.6, 3.0, vec![]));
        let mta = self.k.mta.clone();
        for (name, kern) in mta.iter() {
            let per = (layers as f64 * 210.0 + 120.0) / launches as f64;
            let mut inner = Vec::new();
            if *name == "aten::_foreach_sqrt" {
                for _ in 0..(nparams / 8).max(1) {
                    inner.push(self.empty());
                }
            }
            for _ in 0..launches {
                inner.push(self.b.launch(kern, per));
            }
            kids.push(self.b.op_x(name, &tl, 12.0 + nparams as f64 * 0.3, 4.0, inner));
        }
        let inner = self.b.py("torch/optim/adamw.py(472): _multi_tensor_adamw", 30.0, 8.0, kids);
        let inner = self.b.py("torch/optim/adamw.py(209): step", 20.0, 5.0, vec![inner]);
        let ann = self.b.ann("Optimizer.step#AdamW.step", 8.0, 4.0, vec![inner]);
        self.b.py("torch/optim/optimizer.py(485): wrapper", 10.0, 4.0, vec![ann])
    }
}

fn contig(dims: &str) -> String {
    // row-major strides of a shape given as "a,b,c"
    if dims.is_empty() {
        return String::new();
    }
    let d: Vec<u64> = dims.split(',').map(|x| x.trim().parse().unwrap_or(1)).collect();
    let mut s = vec![1u64; d.len()];
    for i in (0..d.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * d[i + 1];
    }
    s.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

fn build(cfg: &Cfg) -> Prog {
    let b = Bld::new(cfg);
    let gpu_step = b.gpu_step_tpl();
    let k = kernels();
    let m = Model { b: &b, k };
    let x = format!("{BATCH},{SEQ}");

    // data loading + host-to-device copies
    let loader = {
        let gap = Node::Gap(us(2400.0 * m.cfg().loader_factor));
        let ann = m.b.ann("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 30.0, 10.0, vec![gap]);
        m.b.py("torch/utils/data/dataloader.py(733): __next__", 6.0, 4.0, vec![ann])
    };
    let h2d = |m: &Model| {
        let mc = m.b.memcpy("Memcpy HtoD (Pinned -> Device)", BATCH * SEQ * 8, 7.5);
        let e = m.b.sh(
            &["", "", "True", "False", ""],
            &["long int", "Device", "Scalar", "Scalar", ""],
            &[&format!("{SEQ},1"), "", "", "", ""],
            &[&x, "", "", "", ""],
        );
        let copy = m.b.op_x("aten::copy_", &e, 6.0, 2.0, vec![mc]);
        let tc = m.b.op_x("aten::_to_copy", &e, 4.0, 1.5, vec![m.b.op("aten::empty_strided", 3.0, 1.0, vec![]), copy]);
        m.b.op_x("aten::to", &e, 2.0, 1.0, vec![tc])
    };
    let mut train = Vec::new();
    let nparams = m.cfg().layers as f64 * 12.0 + 6.0;
    train.push(m.b.ann("Optimizer.zero_grad#AdamW.zero_grad", 25.0 + nparams * 2.0, 5.0, vec![]));
    train.extend(m.forward());
    // backward: the main thread waits in Python while the autograd thread runs
    m.b.th.set(Th::Bwd);
    let bwd = m.backward();
    m.b.th.set(Th::Main);
    let eng = m.b.py("torch/autograd/graph.py(824): _engine_run_backward", 15.0, 10.0, bwd);
    let ab = m.b.py("torch/autograd/__init__.py(353): backward", 12.0, 3.0, vec![eng]);
    train.push(m.b.py("torch/_tensor.py(648): backward", 8.0, 3.0, vec![ab]));
    train.push(m.optimizer());
    let train_py = m.b.py("train.py(131): train_step", 10.0, 6.0, train);

    // loss.item(): device-to-host copy, then the host waits for the device
    let d2h = m.b.memcpy("Memcpy DtoH (Device -> Pageable)", 4, 1.6);
    let sync = m.b.call("cudaStreamSynchronize", 131, 3.0, Eff::Sync);
    let lsd = m.b.op("aten::_local_scalar_dense", 5.0, 2.0, vec![d2h, sync]);
    let item = m.b.op("aten::item", 3.0, 1.0, vec![lsd]);
    let prof = {
        let g = Node::Gap(us(20.0));
        m.b.py("torch/profiler/profiler.py(794): step", 5.0, 3.0, vec![g])
    };

    let kids = vec![loader, h2d(&m), h2d(&m), train_py, item, prof];
    let step_tpl = m.b.step_tpl();
    let step = Node::Scope { tpl: step_tpl, pre: us(15.0), post: us(8.0), kids };
    drop(m);
    Prog { tpls: b.tpls.into_inner(), step, gpu_step }
}

// ------------------------------------------------------------------------------ simulation

#[derive(Clone, Copy)]
struct SRec {
    tpl: u32,
    ts: u64,
    dur: u64,
    /// External id (ops, annotations) or Python id (python_function)
    id: u64,
    /// Ev Idx
    idx: u64,
    /// Python parent id (0 = null)
    parent: u64,
    /// step number for ProfilerStep#
    num: u64,
}

#[derive(Clone, Copy)]
struct GRec {
    rt: u32,
    ts: u64,
    dur: u64,
    ext: u64,
    corr: u64,
    /// activity template or u32::MAX
    act: u32,
    ats: u64,
    adur: u64,
    bytes: u64,
}

#[derive(Default)]
struct StepOut {
    main: Vec<SRec>,
    bwd: Vec<SRec>,
    py: Vec<SRec>,
    gpu: Vec<GRec>,
    num: u64,
    gpu_first: u64,
    gpu_last: u64,
    step_ext: u64,
}

impl StepOut {
    fn clear(&mut self) {
        self.main.clear();
        self.bwd.clear();
        self.py.clear();
        self.gpu.clear();
        self.gpu_first = u64::MAX;
        self.gpu_last = 0;
        self.step_ext = 0;
    }
    fn vec_mut(&mut self, kind: Kind, th: Th) -> &mut Vec<SRec> {
        match (kind, th) {
            (Kind::Py, _) => &mut self.py,
            (_, Th::Main) => &mut self.main,
            (_, Th::Bwd) => &mut self.bwd,
        }
    }
}

/// Everything that carries from one step to the next. All fields grow by (nearly) the
/// same amount every step, which is what `plan_steps` relies on.
#[derive(Clone, Debug)]
struct Sim {
    t: u64,
    s_comp: u64,
    s_comm: u64,
    comm_ready: u64,
    ext: u64,
    corr: u64,
    idx: u64,
    pyid: u64,
}

const FIRST_STEP: u64 = 5;
const ROOT_PY_ID: u64 = 1;

impl Sim {
    fn new(t0: u64) -> Sim {
        Sim { t: t0, s_comp: t0, s_comm: t0, comm_ready: t0, ext: 0, corr: 8192, idx: 0, pyid: ROOT_PY_ID }
    }

    /// state expected before step k, extrapolated from the first step (for size planning)
    fn extrapolate(a: &Sim, b: &Sim, k: u64) -> Sim {
        let f = |x: u64, y: u64| x + (y - x) * k;
        Sim {
            t: f(a.t, b.t),
            s_comp: f(a.s_comp, b.s_comp),
            s_comm: f(a.s_comm, b.s_comm),
            comm_ready: f(a.comm_ready, b.comm_ready),
            ext: f(a.ext, b.ext),
            corr: f(a.corr, b.corr),
            idx: f(a.idx, b.idx),
            pyid: f(a.pyid, b.pyid),
        }
    }

    fn step(&mut self, p: &Prog, cfg: &Cfg, k: u64, out: &mut StepOut) {
        out.clear();
        out.num = FIRST_STEP + k;
        let mut rng = Rng::new(mix(mix(cfg.seed, cfg.rank as u64 + 1), k));
        self.run(p, &p.step, out, &mut rng, 0, 0, ROOT_PY_ID);
        // the next step starts right after this one
        self.t += rng.gap();
    }

    #[allow(clippy::too_many_arguments)]
    fn run(&mut self, p: &Prog, n: &Node, out: &mut StepOut, rng: &mut Rng, op_ext: u64, any_ext: u64, py_par: u64) {
        match n {
            Node::Gap(ns) => self.t += rng.cpu(*ns),
            Node::Scope { tpl, pre, post, kids } => {
                let t = &p.tpls[*tpl as usize];
                let (kind, th) = (t.kind, t.th);
                self.t += rng.gap();
                let ts = self.t;
                let idx = self.idx;
                self.idx += 1;
                let (id, parent) = if kind == Kind::Py {
                    self.pyid += 1;
                    (self.pyid, py_par)
                } else {
                    self.ext += 1;
                    (self.ext, 0)
                };
                if kind == Kind::Step {
                    out.step_ext = id;
                }
                let num = out.num;
                let v = out.vec_mut(kind, th);
                v.push(SRec { tpl: *tpl, ts, dur: 0, id, idx, parent, num });
                let pos = v.len() - 1;
                self.t += rng.cpu(*pre);
                let (oe, ae, pp) = match kind {
                    Kind::Op => (id, id, py_par),
                    Kind::Py => (op_ext, any_ext, id),
                    _ => (op_ext, id, py_par),
                };
                for kid in kids {
                    self.run(p, kid, out, rng, oe, ae, pp);
                }
                self.t += rng.cpu(*post);
                out.vec_mut(kind, th)[pos].dur = self.t - ts;
            }
            Node::Launch { rt, act, comm, cpu, gpu, bytes } => {
                self.t += rng.gap();
                let ts = self.t;
                let dur = rng.cpu(*cpu);
                self.t += dur;
                self.corr += 1;
                let ready = ts + dur + rng.lat();
                let adur = rng.gpu(*gpu);
                let ats = if *comm {
                    let s = (self.s_comm + rng.kgap()).max(ready).max(self.comm_ready);
                    self.s_comm = s + adur;
                    s
                } else {
                    let s = (self.s_comp + rng.kgap()).max(ready);
                    self.s_comp = s + adur;
                    s
                };
                out.gpu_first = out.gpu_first.min(ats);
                out.gpu_last = out.gpu_last.max(ats + adur);
                let ext = if op_ext != 0 { op_ext } else { any_ext };
                out.gpu.push(GRec { rt: *rt, ts, dur, ext, corr: self.corr, act: *act, ats, adur, bytes: *bytes });
            }
            Node::Call { rt, cpu, eff } => {
                self.t += rng.gap();
                let ts = self.t;
                let mut dur = rng.cpu(*cpu);
                match eff {
                    Eff::None => {}
                    Eff::CommWaitsCompute => self.comm_ready = self.s_comp,
                    Eff::ComputeWaitsComm => self.s_comp = self.s_comp.max(self.s_comm),
                    Eff::Sync => {
                        let done = self.s_comp.max(self.s_comm);
                        if done + 1000 > ts + dur {
                            dur = done - ts + 1000 + rng.next() % 2000;
                        }
                    }
                }
                self.t = ts + dur;
                self.corr += 1;
                let ext = if op_ext != 0 { op_ext } else { any_ext };
                out.gpu.push(GRec { rt: *rt, ts, dur, ext, corr: self.corr, act: u32::MAX, ats: 0, adur: 0, bytes: 0 });
            }
        }
    }
}

// ------------------------------------------------------------------------------ emitter

const FLUSH_AT: usize = 1 << 20;

static DIGITS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

struct Emitter<W: Write> {
    buf: Vec<u8>,
    w: W,
    written: u64,
    events: u64,
}

impl<W: Write> Emitter<W> {
    fn new(w: W) -> Self {
        Emitter { buf: Vec::with_capacity(FLUSH_AT + (1 << 16)), w, written: 0, events: 0 }
    }

    fn bytes(&self) -> u64 {
        self.written + self.buf.len() as u64
    }

    #[inline]
    fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.w.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    #[inline]
    fn s(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    #[inline]
    fn u(&mut self, mut v: u64) {
        let mut tmp = [0u8; 20];
        let mut i = 20;
        while v >= 100 {
            let d = ((v % 100) * 2) as usize;
            v /= 100;
            i -= 2;
            tmp[i] = DIGITS[d];
            tmp[i + 1] = DIGITS[d + 1];
        }
        if v >= 10 {
            let d = (v * 2) as usize;
            i -= 2;
            tmp[i] = DIGITS[d];
            tmp[i + 1] = DIGITS[d + 1];
        } else {
            i -= 1;
            tmp[i] = b'0' + v as u8;
        }
        self.buf.extend_from_slice(&tmp[i..]);
    }

    /// nanoseconds as microseconds with three decimals
    #[inline]
    fn t(&mut self, ns: u64) {
        self.u(ns / 1000);
        let f = (ns % 1000) as usize;
        let d = (f % 100) * 2;
        self.buf.extend_from_slice(&[b'.', b'0' + (f / 100) as u8, DIGITS[d], DIGITS[d + 1]]);
    }

    fn scope(&mut self, p: &Prog, r: &SRec) {
        let t = &p.tpls[r.tpl as usize];
        self.s(&t.a);
        if t.kind == Kind::Step {
            self.u(r.num);
            self.s(&t.b);
        }
        self.t(r.ts);
        self.s(b", \"dur\": ");
        self.t(r.dur);
        self.s(b",\n    \"args\": {\n      ");
        if t.kind == Kind::Py {
            self.s(b"\"Python parent id\": ");
            if r.parent == 0 {
                self.s(b"null");
            } else {
                self.u(r.parent);
            }
            self.s(b", \"Python id\": ");
            self.u(r.id);
        } else {
            self.s(b"\"External id\": ");
            self.u(r.id);
            self.s(b",\"Record function id\": ");
            self.u(r.id);
            if t.kind != Kind::Step {
                self.s(&t.b);
            }
        }
        self.s(b", \"Ev Idx\": ");
        self.u(r.idx);
        self.s(b"\n    }\n  },\n");
        self.events += 1;
    }

    fn gpu(&mut self, p: &Prog, g: &GRec) {
        let rt = &p.tpls[g.rt as usize];
        self.s(&rt.a);
        self.t(g.ts);
        self.s(b", \"dur\": ");
        self.t(g.dur);
        self.s(b",\n    \"args\": {\n      \"External id\": ");
        self.u(g.ext);
        self.s(&rt.b);
        self.u(g.corr);
        self.s(b"\n    }\n  },\n");
        self.events += 1;
        if g.act == u32::MAX {
            return;
        }
        // flow start on the launching thread
        self.s(b"  {\n    \"ph\": \"s\", \"id\": ");
        self.u(g.corr);
        self.s(&rt.c);
        self.t(g.ts);
        self.s(b",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n");
        // the GPU activity
        let a = &p.tpls[g.act as usize];
        self.s(&a.a);
        self.t(g.ats);
        self.s(b", \"dur\": ");
        self.t(g.adur);
        self.s(b",\n    \"args\": {\n      \"External id\": ");
        self.u(g.ext);
        self.s(&a.b);
        self.u(g.corr);
        if a.kind == Kind::Kernel {
            self.s(&a.c);
        } else {
            self.s(b",      \"bytes\": ");
            self.u(g.bytes);
            self.s(b", \"memory bandwidth (GB/s)\": ");
            let bw = g.bytes as f64 / g.adur.max(1) as f64;
            let _ = write!(self.buf, "{bw}");
            self.s(b"\n    }\n  },\n");
        }
        // flow end on the GPU stream
        self.s(b"  {\n    \"ph\": \"f\", \"id\": ");
        self.u(g.corr);
        self.s(&a.d);
        self.t(g.ats);
        self.s(b",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n");
        self.events += 3;
    }

    fn gpu_step(&mut self, p: &Prog, num: u64, ts: u64, dur: u64, ext: u64) {
        let t = &p.tpls[p.gpu_step as usize];
        self.s(&t.a);
        self.u(num);
        self.s(&t.b);
        self.t(ts);
        self.s(b", \"dur\": ");
        self.t(dur);
        self.s(b",\n    \"args\": {\n      \"External id\": ");
        self.u(ext);
        self.s(b"\n    }\n  },\n");
        self.events += 1;
    }

    fn meta(&mut self, name: &str, ts: u64, pid: &str, tid: &str, arg: &str) {
        let _ = write!(self.buf, "  {{\n    \"name\": \"{name}\", \"ph\": \"M\", \"ts\": ");
        self.t(ts);
        let _ = write!(self.buf, ", \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      {arg}\n    }}\n  }},\n");
        self.events += 1;
    }
}

// ------------------------------------------------------------------------------ file layout

const BASE_TIME_NS: u64 = 1_700_000_000_000_000_000;
const T0_NS: u64 = 1_419_247_332_500_684;

fn header(cfg: &Cfg) -> String {
    let ndev = cfg.world.clamp(1, 8);
    let mut s = String::from("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for d in 0..ndev {
        s += &format!(
            "    {{\n      \"id\": {d}, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85018279936,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": 233472\n    }}{}\n",
            if d + 1 < ndev { "," } else { "" }
        );
    }
    s += "  ],\n";
    let ranks: Vec<String> = (0..cfg.world).map(|r| r.to_string()).collect();
    // Kineto records distributedInfo only when torch.distributed is initialised
    if cfg.world > 1 {
        s += &format!(
        "  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {}, \"pg_count\": 1, \"pg_config\": [{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": {}, \"ranks\": [{}]}}], \"nccl_version\": \"2.21.5\"}},\n",
        cfg.rank,
        cfg.world,
        cfg.world,
        ranks.join(", ")
        );
    }
    let trace_id = format!("{:016X}{:016X}", mix(cfg.seed, 11 + cfg.rank as u64), mix(cfg.seed, 13 + cfg.rank as u64));
    s += &format!(
        "  \"cuda_runtime_version\": 12060,\n  \"with_flops\": 0,\n  \"cupti_version\": 24,\n  \"with_modules\": 1,\n  \"record_shapes\": {},\n  \"cuda_driver_version\": 12080,\n  \"profile_memory\": 0,\n  \"with_stack\": 1,\n  \"trace_id\": \"{trace_id}\",\n  \"traceEvents\": [\n",
        cfg.shapes as u8
    );
    s
}

fn t0(cfg: &Cfg) -> u64 {
    T0_NS + cfg.rank as u64 * 37_219
}

/// Python root frame, metadata, profiler span and the closing keys.
fn trailer<W: Write>(em: &mut Emitter<W>, cfg: &Cfg, start: u64, end: u64, root_py_idx: Option<u64>) {
    let prof_start = start - 2_103_000;
    if let Some(idx) = root_py_idx {
        emit_root_py(em, cfg, start, end, idx);
    }
    let pid = cfg.pid.to_string();
    let dev = cfg.device.to_string();
    em.meta("process_name", prof_start, &pid, "0", "\"name\": \"python3\"");
    em.meta("process_labels", prof_start, &pid, "0", "\"labels\": \"CPU\"");
    em.meta("process_sort_index", prof_start, &pid, "0", &format!("\"sort_index\": {pid}"));
    em.meta("process_name", prof_start, &dev, "0", "\"name\": \"python3\"");
    em.meta("process_labels", prof_start, &dev, "0", &format!("\"labels\": \"GPU {dev}\""));
    em.meta("process_sort_index", prof_start, &dev, "0", &format!("\"sort_index\": {}", 16_777_216 + cfg.device));
    for stream in [COMPUTE_STREAM, COMM_STREAM] {
        em.meta("thread_name", prof_start, &dev, &stream.to_string(), &format!("\"name\": \"stream {stream} \""));
        em.meta("thread_sort_index", prof_start, &dev, &stream.to_string(), &format!("\"sort_index\": {stream}"));
    }
    for (tid, label) in [(cfg.tid_main, "python3"), (cfg.tid_bwd, "pt_autograd_0")] {
        let t = tid.to_string();
        em.meta("thread_name", prof_start, &pid, &t, &format!("\"name\": \"thread {tid} ({label})\""));
        em.meta("thread_sort_index", prof_start, &pid, &t, &format!("\"sort_index\": {tid}"));
    }
    let b = &mut em.buf;
    b.extend_from_slice(b"  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    em.t(prof_start);
    em.s(b", \"dur\": ");
    em.t(end + 1_250_000 - prof_start);
    em.s(b",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {\n      \"Op count\": 0\n    }\n  },\n");
    em.s(b"  {\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": ");
    em.t(prof_start);
    em.s(b",\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {\n      \"sort_index\": 536870912\n    }\n  },\n");
    em.s(b"  {\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    em.t(prof_start);
    em.s(b"\n  },\n");
    em.s(b"  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    em.t(end + 1_250_000);
    em.s(b"\n  }\n  ],\n");
    em.events += 4;
    let name = format!(
        "  \"traceName\": \"/tmp/profile/rank{}/node0_{}.{}.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {BASE_TIME_NS}\n}}\n",
        cfg.rank,
        cfg.pid,
        BASE_TIME_NS / 1_000_000 + start / 1_000_000
    );
    em.s(name.as_bytes());
}

fn emit_root_py<W: Write>(em: &mut Emitter<W>, cfg: &Cfg, start: u64, end: u64, idx: u64) {
    let _ = write!(
        em.buf,
        "  {{\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"train.py(214): <module>\", \"pid\": {}, \"tid\": {},\n    \"ts\": ",
        cfg.pid, cfg.tid_main
    );
    em.t(start - 1_507_000);
    em.s(b", \"dur\": ");
    em.t(end + 1_100_000 - (start - 1_507_000));
    em.s(b",\n    \"args\": {\n      \"Python parent id\": null, \"Python id\": 1, \"Ev Idx\": ");
    em.u(idx);
    em.s(b"\n    }\n  },\n");
    em.events += 1;
}

// ------------------------------------------------------------------------------ driver

#[derive(Clone, Copy, PartialEq)]
enum Pass {
    Main,
    Bwd,
    Py,
    Gpu,
}

fn emit_step<W: Write>(em: &mut Emitter<W>, p: &Prog, out: &StepOut, pass: Pass) {
    match pass {
        Pass::Main => out.main.iter().for_each(|r| em.scope(p, r)),
        Pass::Bwd => out.bwd.iter().for_each(|r| em.scope(p, r)),
        Pass::Py => out.py.iter().for_each(|r| em.scope(p, r)),
        Pass::Gpu => out.gpu.iter().for_each(|g| em.gpu(p, g)),
    }
}

/// Bytes one step takes when it starts from state `st` (nothing is written).
fn measure(p: &Prog, cfg: &Cfg, st: &Sim, k: u64) -> (u64, Sim) {
    let mut s = st.clone();
    let mut out = StepOut::default();
    s.step(p, cfg, k, &mut out);
    let mut em = Emitter::new(io::sink());
    for pass in [Pass::Main, Pass::Bwd, Pass::Py, Pass::Gpu] {
        emit_step(&mut em, p, &out, pass);
    }
    em.gpu_step(p, out.num, out.gpu_first, out.gpu_last - out.gpu_first, out.step_ext);
    (em.bytes(), s)
}

/// Number of whole steps whose output comes closest to `size` bytes.
fn plan_steps(p: &Prog, cfg: &Cfg, size: u64) -> u64 {
    let fixed = header(cfg).len() as u64 + 6000;
    if size <= fixed {
        return 1;
    }
    let budget = size - fixed;
    let nearest = |per_step: u64| ((budget + per_step / 2) / per_step.max(1)).max(1);
    let s0 = Sim::new(t0(cfg));
    let (b0, s1) = measure(p, cfg, &s0, 0);
    let mut n = nearest(b0);
    for _ in 0..2 {
        if n <= 4 {
            break;
        }
        // ids grow (more digits) along the trace: sample steps across it
        let mut sum = 0;
        for q in 1..=3 {
            let k = n * q / 4;
            let st = Sim::extrapolate(&s0, &s1, k);
            sum += measure(p, cfg, &st, k).0;
        }
        n = nearest(sum / 3);
    }
    n
}

fn step_bytes(o: &Opts, rank: u32, world: u32, layers: u32) -> u64 {
    let cfg = Cfg::new(o, rank, world, layers);
    let p = build(&cfg);
    measure(&p, &cfg, &Sim::new(t0(&cfg)), 0).0
}

fn choose_layers(o: &Opts, rank: u32, world: u32) -> u32 {
    if let Some(l) = o.layers {
        return l;
    }
    let Some(size) = o.size else { return 12 };
    let (target_steps, max_layers) = match o.steps {
        Some(n) => (n, 96),
        None => (3, 12),
    };
    let per_step = size / target_steps;
    if o.steps.is_none() && per_step >= step_bytes(o, rank, world, 12) {
        return 12;
    }
    let b1 = step_bytes(o, rank, world, 1);
    let b2 = step_bytes(o, rank, world, 2);
    let per_layer = b2.saturating_sub(b1).max(1);
    let fixed = b1.saturating_sub(per_layer);
    let l = (per_step.saturating_sub(fixed) + per_layer / 2) / per_layer;
    (l as u32).clamp(1, max_layers)
}

struct Summary {
    bytes: u64,
    events: u64,
    steps: u64,
    layers: u32,
    secs: f64,
    path: String,
}

fn generate<W: Write>(o: &Opts, rank: u32, world: u32, w: W) -> io::Result<(Summary, W)> {
    let started = Instant::now();
    let layers = choose_layers(o, rank, world);
    let cfg = Cfg::new(o, rank, world, layers);
    let p = build(&cfg);
    let steps = match o.steps {
        Some(n) => n,
        None => plan_steps(&p, &cfg, o.size.unwrap_or(1)),
    };
    let mut em = Emitter::new(w);
    em.s(header(&cfg).as_bytes());
    let start = t0(&cfg);
    let mut out = StepOut::default();
    let mut gpu_steps: Vec<(u64, u64, u64, u64)> = Vec::new();
    let mut end = start;
    let mut idx_total = 0;
    match o.order {
        Order::Kineto => {
            for pass in [Pass::Main, Pass::Bwd, Pass::Py, Pass::Gpu] {
                if pass == Pass::Py {
                    emit_root_py(&mut em, &cfg, start, end, idx_total);
                }
                let mut sim = Sim::new(start);
                for k in 0..steps {
                    sim.step(&p, &cfg, k, &mut out);
                    emit_step(&mut em, &p, &out, pass);
                    if pass == Pass::Main {
                        gpu_steps.push((out.num, out.gpu_first, out.gpu_last - out.gpu_first, out.step_ext));
                    }
                    em.maybe_flush()?;
                }
                end = end.max(sim.t).max(sim.s_comp).max(sim.s_comm);
                idx_total = sim.idx;
            }
            for &(num, ts, dur, ext) in &gpu_steps {
                em.gpu_step(&p, num, ts, dur, ext);
                em.maybe_flush()?;
            }
            trailer(&mut em, &cfg, start, end, None);
        }
        Order::Step => {
            let mut sim = Sim::new(start);
            for k in 0..steps {
                sim.step(&p, &cfg, k, &mut out);
                for pass in [Pass::Main, Pass::Bwd, Pass::Py, Pass::Gpu] {
                    emit_step(&mut em, &p, &out, pass);
                }
                em.gpu_step(&p, out.num, out.gpu_first, out.gpu_last - out.gpu_first, out.step_ext);
                em.maybe_flush()?;
            }
            end = sim.t.max(sim.s_comp).max(sim.s_comm);
            trailer(&mut em, &cfg, start, end, Some(sim.idx));
        }
    }
    em.flush_buf()?;
    let s = Summary {
        bytes: em.bytes(),
        events: em.events,
        steps,
        layers,
        secs: started.elapsed().as_secs_f64(),
        path: String::new(),
    };
    Ok((s, em.w))
}

fn write_one(o: &Opts, rank: u32, world: u32, path: Option<&Path>) -> io::Result<Summary> {
    let (mut s, label) = match path {
        None => {
            let stdout = io::stdout();
            if stdout.is_terminal() {
                return Err(io::Error::other("refusing to write a trace to a terminal: give OUT or redirect stdout"));
            }
            let lock = BufWriter::with_capacity(1 << 20, stdout.lock());
            let s = if o.gzip {
                let enc = flate2::write::GzEncoder::new(lock, flate2::Compression::new(o.gzip_level));
                let (s, enc) = generate(o, rank, world, enc)?;
                enc.finish()?.flush()?;
                s
            } else {
                let (s, mut w) = generate(o, rank, world, lock)?;
                w.flush()?;
                s
            };
            (s, "<stdout>".to_string())
        }
        Some(p) => {
            let f = BufWriter::with_capacity(1 << 20, File::create(p)?);
            let s = if o.gzip {
                let enc = flate2::write::GzEncoder::new(f, flate2::Compression::new(o.gzip_level));
                let (s, enc) = generate(o, rank, world, enc)?;
                let mut f = enc.finish()?;
                f.flush()?;
                f.get_ref().sync_all().ok();
                s
            } else {
                let (s, mut w) = generate(o, rank, world, f)?;
                w.flush()?;
                s
            };
            (s, p.display().to_string())
        }
    };
    s.path = label;
    Ok(s)
}

fn report(o: &Opts, s: &Summary, path: Option<&Path>) {
    if o.quiet {
        return;
    }
    let on_disk = path.and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len());
    let gz = match (o.gzip, on_disk) {
        (true, Some(n)) => format!(", {:.1} MB gzip ({:.1}x)", n as f64 / 1e6, s.bytes as f64 / n.max(1) as f64),
        _ => String::new(),
    };
    eprintln!(
        "gen_trace: {}: {:.1} MB JSON{gz}, {} events ({:.0} B/event), {} steps x {} layers, {:?} backend, {:.2} s ({:.0} MB/s)",
        s.path,
        s.bytes as f64 / 1e6,
        s.events,
        s.bytes as f64 / s.events.max(1) as f64,
        s.steps,
        s.layers,
        o.backend,
        s.secs,
        s.bytes as f64 / 1e6 / s.secs.max(1e-9)
    );
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("gen_trace: {e}");
            std::process::exit(2);
        }
    };
    let result = if o.ranks > 1 {
        let dir = PathBuf::from(o.out.clone().unwrap());
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("gen_trace: {}: {e}", dir.display());
            std::process::exit(1);
        }
        let world = o.world.unwrap_or(o.ranks).max(o.ranks);
        let ext = if o.gzip { "pt.trace.json.gz" } else { "pt.trace.json" };
        std::thread::scope(|sc| {
            let handles: Vec<_> = (0..o.ranks)
                .map(|r| {
                    let path = dir.join(format!("rank{r}.{ext}"));
                    let o = &o;
                    sc.spawn(move || write_one(o, r, world, Some(&path)).map(|s| (s, path)))
                })
                .collect();
            let mut res = Ok(());
            for h in handles {
                match h.join().expect("rank thread panicked") {
                    Ok((s, path)) => report(&o, &s, Some(&path)),
                    Err(e) => res = Err(e),
                }
            }
            res
        })
    } else {
        let world = o.world.unwrap_or(8).max(o.rank + 1);
        let path = match o.out.as_deref() {
            None | Some("-") => None,
            Some(p) => Some(PathBuf::from(p)),
        };
        write_one(&o, o.rank, world, path.as_deref()).map(|s| report(&o, &s, path.as_deref()))
    };
    if let Err(e) = result {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("gen_trace: {e}");
        std::process::exit(1);
    }
}
