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
//!
//! Modules, in the order the data flows: `opts` (arguments), `prog` (templates, config,
//! model dimensions), `kernels`, `builder` and `model/` (one step as a program of nodes),
//! `rng` and `sim` (that step's times), `emit` and `layout` (the bytes), `driver` (sizes,
//! files). They share one namespace through the globs below (`use crate::*` in each), as
//! the single file they were split from did.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

mod builder;
mod driver;
mod emit;
mod kernels;
mod layout;
mod model;
mod opts;
mod prog;
mod rng;
mod sim;

use builder::*;
use driver::*;
use emit::*;
use kernels::*;
use layout::*;
use model::*;
use opts::*;
use prog::*;
use rng::*;
use sim::*;

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
