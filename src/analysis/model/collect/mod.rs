//! The sink that turns streamed events into the compact per-event data the analysis needs:
//! interned names and fixed-size records. Nothing here depends on event order, because
//! Kineto writes CPU and GPU rows, and metadata, in no guaranteed order.

pub use super::rows::{GpuKind, GpuRow, GpuRows, RowBrief, NONE};
pub use crate::analysis::rules::name_flags::*;
use crate::limits;
use crate::trace::{Args, Event, Id, Loose, Meta, Sink};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

mod graph_args;
mod interner;
mod join;
mod meta;
mod progress;
mod records;
mod sink;
mod work_memo;

use interner::cut_str;
pub use interner::Interner;
use meta::DeferredSums;
pub use meta::{Metadata, NotJoinable};
pub use progress::Progress;
pub use records::*;

pub const NO_NAME: u32 = u32::MAX;

#[derive(Default, Serialize, Deserialize)]
pub struct Collector {
    pub names: Interner,
    pub gpu: GpuRows,
    pub runtime: Vec<RuntimeCall>,
    pub ops: Vec<OpRow>,
    /// `nn.Module: ...` spans (python_function events), which name the layer a kernel ran in.
    pub modules: Vec<OpRow>,
    /// First start and last end of any CPU op (the CPU extent of the trace).
    pub cpu_extent: Option<(i64, i64)>,
    /// Runtime call names by correlation are not needed; synchronising calls are summed here.
    pub sync_ns: i64,
    pub launch_ns: i64,
    /// Runtime kernel-launch calls (with a correlation id), counted with `launch_ns`.
    pub launch_calls: u64,
    pub sdpa_calls: Vec<SdpaCall>,
    /// `[memory]` events, in file order.
    pub memory: Vec<MemEvent>,
    /// Synchronising runtime calls.
    pub syncs: Vec<SyncCall>,
    /// What the `cuda_sync` rows say each synchronising call and stream wait waited on.
    #[serde(default)]
    pub gpu_syncs: Vec<GpuSync>,
    /// Collective metadata of GPU rows (by row index, in row order).
    pub gpu_comm: Vec<(u32, CommArgs)>,
    /// Collective metadata of ops, by their External id.
    pub op_comm: FxHashMap<i64, CommArgs>,
    /// The work of ops with recorded shapes or FLOP counts, by their External id.
    #[serde(default)]
    pub op_work: FxHashMap<i64, OpWork>,
    /// Inductor's FLOP and byte counts on kernel rows, in row order.
    #[serde(default)]
    pub gpu_work: Vec<KernelCount>,
    /// CPU ops that carried `Input Dims` (0: the trace was recorded without shapes).
    #[serde(default)]
    pub ops_with_shapes: u64,
    pub threads: FxHashMap<(i64, i64), u32>,
    /// The thread [`Collector::thread_key`] found last: events come in runs on one thread.
    #[serde(skip)]
    last_thread: Option<((i64, i64), u32)>,
    /// Replayed rows' graph and node ids, in row order (only rows that carry them).
    #[serde(default)]
    pub gpu_graph: Vec<GraphNode>,
    /// Kernel names written on launch calls, kept only by [`Collector::for_capture`].
    #[serde(default)]
    pub launch_kernels: Vec<LaunchKernel>,
    #[serde(default)]
    keep_launch_kernels: bool,
    string_ids: Interner,
    /// Duration-weighted sums for the SM efficiency / occupancy estimates.
    pub sm_eff_weighted: f64,
    pub sm_eff_dur: f64,
    pub occupancy_weighted: f64,
    pub occupancy_dur: f64,
    /// Kernel time whose occupancy the profiler wrote as 0 (it could not measure it): left out
    /// of the average.
    #[serde(default)]
    pub occupancy_unknown_dur: f64,
    pub counters: Counters,
    /// Not carried between workers: a later part carries its metadata in `deferred`.
    #[serde(skip)]
    pub meta: Metadata,
    /// In a later part of a split file: the duration-weighted terms, kept to be added in file
    /// order when the parts are joined (floating-point sums depend on the order).
    deferred: Option<Box<DeferredSums>>,
    /// How far through its input the collector is, where the input's size is known: the
    /// per-event lists grow by it ([`Progress`]). Not carried between workers.
    #[serde(skip)]
    pub progress: Progress,
    /// Ops' work by their shapes, worked out once per distinct shapes (not carried).
    #[serde(skip)]
    work_memo: work_memo::WorkMemo,
}

impl Collector {
    /// Keeps what falls inside `w`: GPU rows overlapping it, clipped to it (their times become
    /// time inside the range), and the memory events and synchronising calls in it. CPU ops
    /// stay whole: they still attribute the rows, whenever they ran.
    pub fn restrict_to(&mut self, w: crate::report::TimeWindow) {
        let (from, to) = (w.start_ns, w.end_ns);
        let index = self.gpu.retain_clipped(|g| {
            let end = g.start + g.dur;
            if !(g.start < to && (end > from || (g.dur == 0 && g.start >= from))) {
                return None;
            }
            let start = g.start.max(from);
            Some((start, end.min(to) - start))
        });
        self.gpu_comm.retain_mut(|(row, _)| {
            *row = index[*row as usize];
            *row != u32::MAX
        });
        self.gpu_work.retain_mut(|k| {
            k.row = index[k.row as usize];
            k.row != u32::MAX
        });
        self.gpu_graph.retain_mut(|g| {
            g.row = index[g.row as usize];
            g.row != u32::MAX
        });
        self.memory.retain(|m| m.ts >= from && m.ts < to);
        self.syncs.retain(|s| s.end > from && s.start < to);
    }

    /// A collector for a later part of a file split between events, to be joined to the parts
    /// before it with [`Collector::join`].
    pub fn for_later_part() -> Collector {
        Collector { deferred: Some(Box::default()), ..Collector::default() }
    }

    /// Top-level metadata: a later value of a key replaces an earlier one.
    fn read_metadata(&mut self, meta: Meta) {
        match meta {
            Meta::Devices(d) => self.meta.devices = d,
            Meta::Distributed { rank, world_size, backend } => {
                self.meta.rank = rank;
                self.meta.world_size = world_size;
                self.meta.backend = backend;
            }
        }
    }

    /// Gives back the room the per-event lists grew into but did not fill (up to half of
    /// each, as a list doubles when it grows): done once reading ends, before the analysis
    /// builds its own per-row data. Shrinking a large allocation remaps it; nothing is copied.
    pub fn shrink_to_fit(&mut self) {
        self.gpu.shrink_to_fit();
        self.runtime.shrink_to_fit();
        self.ops.shrink_to_fit();
        self.modules.shrink_to_fit();
        self.memory.shrink_to_fit();
        self.syncs.shrink_to_fit();
        self.gpu_syncs.shrink_to_fit();
        self.gpu_comm.shrink_to_fit();
        self.gpu_work.shrink_to_fit();
        self.gpu_graph.shrink_to_fit();
        self.launch_kernels.shrink_to_fit();
    }

    /// The collective metadata in an event's args, if it has any.
    fn comm_args(&mut self, a: &Args) -> Option<CommArgs> {
        let text = |raw: Option<&[u8]>| raw.and_then(|r| serde_json::from_slice::<String>(r).ok());
        let name = text(a.collective_name)?;
        let group = text(a.process_group);
        let size = text(a.dtype).and_then(|d| dtype_size(&d));
        let bytes = |nelems: Option<Loose>| match (nelems.and_then(Loose::as_i64), size) {
            (Some(n), Some(s)) => n.saturating_mul(s),
            _ => NONE,
        };
        Some(CommArgs {
            name: self.names.intern(name.as_bytes()),
            group: group.map(|g| self.names.intern(g.as_bytes())).unwrap_or(NO_NAME),
            seq: a.seq.and_then(Loose::as_i64).unwrap_or(NONE),
            bytes: bytes(a.in_msg_nelems),
            out_bytes: bytes(a.out_msg_nelems),
            group_size: a.group_size.and_then(Loose::as_i64).unwrap_or(NONE),
        })
    }

    fn memory_event(&mut self, ev: &Event) {
        let Some(ts) = ev.start else {
            self.counters.missing_ts += 1;
            return;
        };
        let Some(a) = ev.args else { return };
        let int = |v: Option<Loose>| v.and_then(Loose::as_i64).unwrap_or(NONE);
        let bytes = int(a.bytes);
        if bytes == NONE {
            return;
        }
        if self.memory.len() >= limits::MAX_ROWS {
            self.counters.rows_dropped += 1;
            return;
        }
        let thread = self.thread_key(ev.process, ev.thread);
        self.progress.make_room(&mut self.memory);
        self.memory.push(MemEvent {
            ts,
            bytes,
            addr: int(a.addr),
            total_allocated: int(a.total_allocated),
            total_reserved: int(a.total_reserved),
            device: int(a.device_id).clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            thread,
        });
    }

    /// Thread-id strings cut to the name limit.
    pub fn string_ids_long(&self) -> u64 {
        self.string_ids.long_names
    }
    /// Thread-id strings past the distinct-name limit.
    pub fn string_ids_over(&self) -> u64 {
        self.string_ids.over_limit
    }

    /// A stable key for (pid, tid): numeric ids as numbers ("123" and 123 are one thread),
    /// other strings interned.
    fn thread_key(&mut self, pid: &Id, tid: &Id) -> u32 {
        let key = (self.id_key(pid), self.id_key(tid));
        if let Some((last, id)) = self.last_thread {
            if last == key {
                return id;
            }
        }
        let next = self.threads.len() as u32;
        let id = *self.threads.entry(key).or_insert(next);
        self.last_thread = Some((key, id));
        id
    }

    fn id_key(&mut self, id: &Id) -> i64 {
        match id.as_int() {
            Some(i) => i,
            None => match id {
                Id::Str(s) => {
                    // Strings live in their own key space below every realistic integer id.
                    i64::MIN / 2 + self.string_ids.intern(s.as_bytes()) as i64
                }
                _ => i64::MIN / 2 - 1,
            },
        }
    }

    fn count_unknown(&mut self, cat: &str) {
        let cat = cut_str(cat, limits::MAX_NAME_BYTES);
        if let Some(e) = self.counters.unknown_cats.iter_mut().find(|(c, _)| c == cat) {
            e.1 += 1;
        } else if self.counters.unknown_cats.len() < 64 {
            self.counters.unknown_cats.push((cat.to_string(), 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Collector;
    use crate::trace::Id;

    /// A thread met again, after others or at once, keeps its first id (the last one looked up
    /// is remembered); "7" and 7 are one thread, a name another.
    #[test]
    fn a_thread_keeps_its_id_however_it_is_met_again() {
        let mut c = Collector::default();
        let (one, two, name) = (Id::Int(1), Id::Int(2), Id::Str("main".into()));
        let seven = Id::Str("7".into());
        let got: Vec<u32> = [(&one, &one), (&one, &one), (&one, &two), (&one, &one), (&name, &two), (&one, &two)]
            .into_iter()
            .map(|(p, t)| c.thread_key(p, t))
            .collect();
        assert_eq!(got, [0, 0, 1, 0, 2, 1]);
        assert_eq!((c.thread_key(&Id::Int(7), &one), c.thread_key(&seven, &one)), (3, 3));
        assert_eq!(c.threads.len(), 4);
    }
}
