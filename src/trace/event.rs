//! One event, as every format hands it on: what kind of row it is, its name, thread, times
//! and the arguments the analysis reads. Strings and arguments are borrowed from the
//! importer's chunk: handing an event on allocates nothing.
//!
//! Adding an argument: a field in [`Args`], and its spelling in each format that writes it
//! (for Chrome JSON, a line in `ArgKey`'s table in `input/formats/chrome_json/event`).

use super::value::{Id, Loose};
use serde::{Deserialize, Serialize};

/// What kind of GPU row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GpuKind {
    Kernel,
    Memcpy,
    Memset,
}

/// What a row is, by its category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A kernel, memcpy or memset on a GPU stream.
    Gpu(GpuKind),
    /// A runtime or driver call on the CPU (launches, copies, synchronisations).
    Runtime,
    /// A CPU op or a user annotation.
    Op,
    /// A synchronisation row of the GPU timeline.
    CudaSync,
    /// A user annotation on the GPU timeline.
    GpuAnnotation,
    /// A Python function (only `nn.Module: ...` spans are kept).
    Python,
    /// A known category the analysis does not read.
    Ignored,
    /// No category.
    Missing,
    /// A category the analysis does not know (counted, by its text, for the diagnostics).
    Unknown,
}

/// The event's shape in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A span with a start and a duration.
    Complete,
    /// A begin or an end mark (spans the analysis does not pair).
    BeginEnd,
    /// A flow arrow's start, step or end.
    Flow,
    /// An instant.
    Instant,
    /// A counter sample.
    Counter,
    /// A process or thread name, or other per-thread metadata.
    Metadata,
    /// An allocator event (an allocation or a free, with the allocator's totals).
    Memory,
    /// Anything else.
    Other,
}

/// One event. Times are nanoseconds, read for spans and memory events (the only ones whose
/// time the analysis uses); `None` when the event has none or it could not be read.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub phase: Phase,
    pub kind: Kind,
    /// The category as the trace wrote it (named in the diagnostics when unknown).
    pub category: &'a [u8],
    /// Raw bytes, not checked for UTF-8: names are mostly compared or hashed, and the
    /// interner converts each distinct one once.
    pub name: &'a [u8],
    pub process: &'a Id<'a>,
    pub thread: &'a Id<'a>,
    pub start: Option<i64>,
    pub dur: Option<i64>,
    pub args: Option<&'a Args<'a>>,
}

/// The arguments the analysis reads. Numbers are [`Loose`] (an integer, a float, or none);
/// the op's inputs and the collective's names are kept as the profiler wrote them (Kineto's
/// JSON notation: a list of shapes, a quoted string) and read only where used (attention
/// ops, ops with a work formula, collectives), so that no event pays for parsing them.
#[derive(Debug, Default, PartialEq)]
pub struct Args<'a> {
    pub correlation: Option<Loose>,
    pub external_id: Option<Loose>,
    pub device: Option<Loose>,
    pub stream: Option<Loose>,
    pub blocks_per_sm: Option<Loose>,
    pub occupancy_pct: Option<Loose>,
    /// The op's input shapes, types and constant inputs.
    pub input_dims: Option<&'a [u8]>,
    pub input_type: Option<&'a [u8]>,
    pub concrete_inputs: Option<&'a [u8]>,
    /// Collective metadata (on NCCL kernels in current Kineto, on `record_param_comms`).
    pub collective_name: Option<&'a [u8]>,
    pub process_group: Option<&'a [u8]>,
    pub seq: Option<Loose>,
    pub in_msg_nelems: Option<Loose>,
    pub out_msg_nelems: Option<Loose>,
    pub group_size: Option<Loose>,
    pub dtype: Option<&'a [u8]>,
    /// Autograd: a forward op and its backward share a sequence number.
    pub sequence_number: Option<Loose>,
    /// Allocator events.
    pub addr: Option<Loose>,
    pub bytes: Option<Loose>,
    pub total_allocated: Option<Loose>,
    pub total_reserved: Option<Loose>,
    pub device_id: Option<Loose>,
    /// The op's FLOPs, counted by the profiler.
    pub flops: Option<Loose>,
    /// A kernel's FLOPs and GB moved, as Inductor's analysis writes them.
    pub kernel_flop: Option<Loose>,
    pub kernel_num_gb: Option<Loose>,
    /// The kernel a launch call launched (ROCm writes it on the call), as JSON text.
    pub kernel: Option<&'a [u8]>,
    /// The CUDA graph a replayed GPU row belongs to, and its node (CUDA 12+ Kineto).
    pub graph_id: Option<Loose>,
    pub graph_node_id: Option<Loose>,
    /// A `cuda_sync` row's event: the stream it was recorded on and the correlation id of the
    /// `cudaEventRecord` call that recorded it (Kineto with `enable_cuda_sync_events`).
    pub wait_on_stream: Option<Loose>,
    pub wait_on_record: Option<Loose>,
}

impl Args<'_> {
    pub fn external_id(&self) -> Option<i64> {
        self.external_id.and_then(Loose::as_i64)
    }
}

/// Metadata of the whole trace. A later value of the same kind replaces an earlier one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Meta {
    /// The GPUs the trace was recorded on.
    Devices(Vec<Device>),
    /// The job's distributed setup.
    Distributed { rank: Option<i64>, world_size: Option<i64>, backend: Option<String> },
}

/// One GPU, as the trace describes it.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub id: Option<i64>,
    pub name: Option<String>,
    pub num_sms: Option<i64>,
    pub compute_major: Option<i64>,
    pub compute_minor: Option<i64>,
    pub total_global_mem: Option<i64>,
}
