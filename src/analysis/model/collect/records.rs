//! The fixed-size records the collector keeps per event.

use serde::{Deserialize, Serialize};

/// A runtime (launch, memcpy, sync) call on the CPU.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct RuntimeCall {
    pub correlation: i64,
    pub external: i64,
    pub start: i64,
    pub dur: i64,
    pub thread: u32,
    pub name: u32,
}

/// A runtime call as the model's passes read it, once attribution has used its ids: 24 bytes
/// instead of 40 (26 MB of a 2 GB trace's peak). The few calls found by correlation id later
/// (those the `cuda_sync` rows name) are kept in [`CallIds`].
#[derive(Debug, Clone, Copy)]
pub struct Call {
    pub start: i64,
    pub dur: i64,
    pub thread: u32,
    pub name: u32,
}

impl From<&RuntimeCall> for Call {
    fn from(r: &RuntimeCall) -> Self {
        Call { start: r.start, dur: r.dur, thread: r.thread, name: r.name }
    }
}

/// The calls of the correlation ids the `cuda_sync` rows name (theirs and their record calls'):
/// per id, the range of its calls' indices in the calls sorted by correlation id.
#[derive(Debug, Default)]
pub struct CallIds(rustc_hash::FxHashMap<i64, (u32, u32)>);

impl CallIds {
    /// `sorted`: the calls, sorted by correlation id; `syncs`: the `cuda_sync` rows.
    pub fn new(sorted: &[RuntimeCall], syncs: &[GpuSync]) -> CallIds {
        let mut ids = rustc_hash::FxHashMap::default();
        for id in syncs.iter().flat_map(|g| [g.correlation, g.record_correlation]).filter(|&id| id != none()) {
            ids.entry(id).or_insert_with(|| {
                let from = sorted.partition_point(|r| r.correlation < id);
                let to = from + sorted[from..].partition_point(|r| r.correlation == id);
                (from as u32, to as u32)
            });
        }
        CallIds(ids)
    }

    /// The indices of the calls of correlation id `id` (empty when none, or not a named id).
    pub fn calls(&self, id: i64) -> std::ops::Range<usize> {
        self.0.get(&id).map_or(0..0, |&(from, to)| from as usize..to as usize)
    }
}

/// A replayed GPU row's graph and node, as the profiler wrote them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct GraphNode {
    pub row: u32,
    pub graph: i64,
    pub node: i64,
}

/// The kernel a launch call names, by the call's correlation id.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LaunchKernel {
    pub correlation: i64,
    pub name: u32,
}

/// A CPU op or annotation (`cpu_op`, `user_annotation`, old `Operator`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct OpRow {
    pub start: i64,
    pub end: i64,
    pub external: i64,
    /// Autograd sequence number (links a backward op to its forward op), or NONE.
    pub seq: i64,
    pub name: u32,
    pub thread: u32,
}

/// A `[memory]` event: an allocation (bytes > 0) or a free (bytes < 0).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct MemEvent {
    pub ts: i64,
    pub bytes: i64,
    /// The block's address, or NONE (older traces do not write it).
    pub addr: i64,
    /// The allocator's totals after the event, or NONE.
    pub total_allocated: i64,
    pub total_reserved: i64,
    pub device: i32,
    pub thread: u32,
}

/// A synchronising runtime call (cudaDeviceSynchronize, cudaStreamSynchronize, ...).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SyncCall {
    pub start: i64,
    pub end: i64,
    pub name: u32,
    pub thread: u32,
    /// The call's correlation id (NONE when the trace wrote none): its `cuda_sync` row's.
    #[serde(default = "none")]
    pub correlation: i64,
}

fn none() -> i64 {
    crate::analysis::model::rows::NONE
}

/// What a `cuda_sync` row (CUPTI's synchronisation activity, as Kineto writes it with
/// `enable_cuda_sync_events`) says a call waited on: Kineto's CudaSyncActivity
/// (libkineto/src/CuptiActivity.cpp) writes `stream` (the waiting stream, or the synchronised
/// one), `correlation` (the runtime call's) and, for an event wait or an event sync,
/// `wait_on_stream` and `wait_on_cuda_event_record_corr_id` (the recording stream and the
/// `cudaEventRecord` call's correlation id). HIP traces write no such rows.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct GpuSync {
    pub kind: SyncKind,
    /// The runtime call's correlation id.
    pub correlation: i64,
    pub device: i32,
    pub stream: i32,
    /// The recording stream (NO_STREAM) and record call (NONE) unless an event wait or sync.
    pub record_stream: i32,
    pub record_correlation: i64,
}

/// No stream written (CUPTI's invalid stream is written as -1 or 4294967295).
pub const NO_STREAM: i32 = i32::MIN;

/// Which synchronisation a `cuda_sync` row is (its name: CUPTI's synchronisation type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncKind {
    /// `cudaStreamWaitEvent`: a stream waits, on the GPU, for an event of another stream.
    StreamWaitEvent,
    /// `cudaEventSynchronize`: the CPU waits for an event.
    EventSync,
    /// `cudaStreamSynchronize`: the CPU waits for a stream.
    StreamSync,
    /// `cudaDeviceSynchronize` / context sync: the CPU waits for every stream.
    ContextSync,
}

impl SyncKind {
    pub fn of(name: &[u8]) -> Option<SyncKind> {
        Some(match name {
            b"Stream Wait Event" => SyncKind::StreamWaitEvent,
            b"Event Sync" => SyncKind::EventSync,
            b"Stream Sync" => SyncKind::StreamSync,
            b"Context Sync" => SyncKind::ContextSync,
            _ => return None,
        })
    }
}

/// Arguments of a scaled-dot-product-attention op, kept (a few) to explain the backend.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SdpaCall {
    pub op: String,
    pub input_dims: Option<String>,
    pub input_types: Option<String>,
    pub concrete_inputs: Option<String>,
}

/// An op's work, worked out from its recorded shapes when it was read (the shapes themselves
/// are not kept), or the profiler's own FLOP count.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct OpWork {
    pub flops: f64,
    pub bytes: f64,
    pub precision: Option<crate::vocab::Precision>,
    pub source: crate::report::WorkSource,
    pub causal: bool,
}

/// Inductor's counts on one kernel row.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct KernelCount {
    pub row: u32,
    pub flops: f64,
    pub bytes: f64,
}

/// Collective metadata a kernel or a `record_param_comms` op carries (current Kineto writes
/// it on NCCL kernels, older versions on the op). Names are interned; absent fields are
/// `NO_NAME` / `NONE`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct CommArgs {
    pub name: u32,
    pub group: u32,
    pub seq: i64,
    pub bytes: i64,
    /// "Out msg nelems" x dtype, and "Group size" (`NONE` when absent).
    pub out_bytes: i64,
    pub group_size: i64,
}

/// Bytes per element of the dtype names PyTorch records (`Float`, `BFloat16`, ...).
pub(super) fn dtype_size(dtype: &str) -> Option<i64> {
    Some(match dtype {
        "Double" | "Long" | "ComplexFloat" => 8,
        "Float" | "Int" | "ComplexHalf" => 4,
        "Half" | "BFloat16" | "Short" => 2,
        "Byte" | "Char" | "Bool" | "QInt8" | "QUInt8" => 1,
        d if d.starts_with("Float8") => 1,
        _ => return None,
    })
}

/// Event counters that feed the diagnostics table.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Counters {
    pub no_category: u64,
    pub missing_ts: u64,
    pub negative_dur: u64,
    pub zero_dur_gpu: u64,
    pub cuda_sync_rows: u64,
    pub gpu_annotations: u64,
    /// Of those, `ProfilerStep#N` spans (the GPU side of the CPU's step spans).
    #[serde(default)]
    pub gpu_step_annotations: u64,
    pub begin_end: u64,
    pub malformed: u64,
    pub first_malformed: Option<(u64, String)>,
    pub gpu_without_correlation: u64,
    pub flow: u64,
    pub instant: u64,
    pub counters: u64,
    /// Unknown categories with their counts, in first-seen order.
    pub unknown_cats: Vec<(String, u64)>,
    /// Events not kept because their kind reached [`limits::MAX_ROWS`].
    pub rows_dropped: u64,
}
