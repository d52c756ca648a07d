//! What a name says about its event, worked out once per distinct name when it is interned:
//! a synchronising call, a launch, an SDPA op, a ProfilerStep, the data loader, a graph launch,
//! a backward op.

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

pub const NAME_SYNC: u8 = 1;
pub const NAME_LAUNCH: u8 = 2;
pub const NAME_SDPA: u8 = 4;
pub const NAME_STEP: u8 = 8;
pub const NAME_DATALOADER: u8 = 16;
/// A CUDA/HIP graph launch: one call replays many kernels.
pub const NAME_GRAPH_LAUNCH: u8 = 32;
/// An autograd backward op (the trace is of training).
pub const NAME_BACKWARD: u8 = 64;
/// An op whose work (FLOPs, bytes) the roofline models from its shapes.
pub const NAME_WORK: u8 = 128;

/// Runtime calls that synchronise although their names do not say so.
const BLOCKING_CALLS: &[&[u8]] =
    &[b"cudaMemcpy", b"cudaMemcpy2D", b"hipMemcpy", b"hipMemcpyWithStream", b"hipMemcpy2D", b"cudaFree", b"hipFree"];

pub fn name_flags(name: &[u8]) -> u8 {
    let mut f = 0;
    // Calls that block the host until the device is done: the synchronize calls, the
    // blocking (not *Async) copies, and frees (cudaFree synchronises the device).
    if contains(name, b"Synchronize") || BLOCKING_CALLS.contains(&name) {
        f |= NAME_SYNC;
    }
    if contains(name, b"Launch") || contains(name, b"launch") {
        f |= NAME_LAUNCH;
    }
    if name.starts_with(b"aten::scaled_dot_product_attention") || name.starts_with(b"aten::_scaled_dot_product_") {
        f |= NAME_SDPA;
    }
    if name.starts_with(b"ProfilerStep#") {
        f |= NAME_STEP;
    }
    if name.starts_with(b"enumerate(DataLoader)") {
        f |= NAME_DATALOADER;
    }
    if contains(name, b"GraphLaunch") {
        f |= NAME_GRAPH_LAUNCH;
    }
    if contains(name, b"Backward") || contains(name, b"autograd::engine") || contains(name, b"_backward") {
        f |= NAME_BACKWARD;
    }
    if std::str::from_utf8(name).is_ok_and(super::op_work::is_modelled) {
        f |= NAME_WORK;
    }
    f
}
