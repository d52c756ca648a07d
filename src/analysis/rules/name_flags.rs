//! What a name says about its event, worked out once per distinct name when it is interned:
//! a synchronising call, a launch, an SDPA op, a ProfilerStep, the data loader, a graph launch,
//! a backward op.

use super::taxonomy::rule::{Match, Rule, Subject};
use Match::{Contains, Exact, Prefix};

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

/// Every rule that matches adds its flag (these are facts, not a first-match choice).
pub static NAME_FLAG_RULES: &[Rule<u8>] = &[
    Rule::new(Contains(&["Synchronize"]), NAME_SYNC, "a synchronize call"),
    // Calls that block the host until the device is done although their names do not say so:
    // the blocking (not *Async) copies, and frees (cudaFree synchronises the device).
    Rule::new(Exact(BLOCKING_COPIES), NAME_SYNC, "a blocking copy"),
    Rule::new(Exact(FREES), NAME_SYNC, "a free"),
    Rule::new(Contains(&["Launch", "launch"]), NAME_LAUNCH, "a launch call"),
    Rule::new(Prefix(&["aten::scaled_dot_product_attention", "aten::_scaled_dot_product_"]), NAME_SDPA, "an SDPA op"),
    Rule::new(Prefix(&["ProfilerStep#"]), NAME_STEP, "a profiler step"),
    Rule::new(Prefix(&["enumerate(DataLoader)"]), NAME_DATALOADER, "the data loader"),
    Rule::new(Contains(&["GraphLaunch"]), NAME_GRAPH_LAUNCH, "a graph launch"),
    Rule::new(Contains(&["Backward", "autograd::engine", "_backward"]), NAME_BACKWARD, "a backward op"),
];

const BLOCKING_COPIES: &[&str] = &["cudaMemcpy", "cudaMemcpy2D", "hipMemcpy", "hipMemcpyWithStream", "hipMemcpy2D"];
const FREES: &[&str] = &["cudaFree", "hipFree"];

/// Why a synchronising runtime call blocks the host: each kind has its own fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockingCall {
    /// cudaFree / hipFree: the caching allocator giving memory back, which waits for the
    /// whole device (c10/cuda/CUDACachingAllocator.cpp `release_cached_blocks`, run by
    /// `empty_cache()` and when an allocation fails and is retried).
    Free,
    /// A copy without `Async`: pageable host memory, or `.cpu()` / `.item()` / `.tolist()`.
    BlockingCopy,
    /// An explicit device / stream / event synchronize.
    Synchronize,
}

/// The kind of a synchronising call by its name (anything not a free or a blocking copy is
/// taken as an explicit synchronize).
pub fn blocking_call(name: &str) -> BlockingCall {
    if FREES.contains(&name) {
        BlockingCall::Free
    } else if BLOCKING_COPIES.contains(&name) {
        BlockingCall::BlockingCopy
    } else {
        BlockingCall::Synchronize
    }
}

pub fn name_flags(name: &[u8]) -> u8 {
    // Invalid bytes become U+FFFD, which no rule's ASCII text contains.
    let text = String::from_utf8_lossy(name);
    let subject = Subject::name(&text);
    let mut f = NAME_FLAG_RULES.iter().filter(|r| r.when.matches(&subject)).fold(0, |f, r| f | r.then);
    if std::str::from_utf8(name).is_ok_and(crate::analysis::rules::op_work::is_modelled) {
        f |= NAME_WORK;
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_matching_rule_adds_its_flag() {
        assert_eq!(name_flags(b"cudaDeviceSynchronize"), NAME_SYNC);
        assert_eq!(name_flags(b"cudaMemcpy"), NAME_SYNC);
        assert_eq!(name_flags(b"cudaMemcpyAsync"), 0, "an async copy does not block");
        assert_eq!(name_flags(b"cudaGraphLaunch"), NAME_LAUNCH | NAME_GRAPH_LAUNCH);
        assert_eq!(name_flags(b"autograd::engine::evaluate_function: MmBackward0"), NAME_BACKWARD);
        assert_eq!(name_flags(b"ProfilerStep#12"), NAME_STEP);
        // Invalid bytes match nothing they did not match before.
        assert_eq!(name_flags(b"cudaLaunchKernel\xff"), NAME_LAUNCH);
    }

    #[test]
    fn every_blocking_call_has_a_kind() {
        for name in BLOCKING_COPIES {
            assert_eq!(name_flags(name.as_bytes()), NAME_SYNC, "{name}");
            assert_eq!(blocking_call(name), BlockingCall::BlockingCopy, "{name}");
        }
        for name in FREES {
            assert_eq!(name_flags(name.as_bytes()), NAME_SYNC, "{name}");
            assert_eq!(blocking_call(name), BlockingCall::Free, "{name}");
        }
        assert_eq!(blocking_call("hipDeviceSynchronize"), BlockingCall::Synchronize);
        assert_eq!(blocking_call("cudaStreamSynchronize"), BlockingCall::Synchronize);
    }
}
