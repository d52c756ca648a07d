//! The sink that turns streamed events into the compact per-event data the analysis needs:
//! interned names and fixed-size records. Nothing here depends on event order, because
//! Kineto writes CPU and GPU rows, and metadata, in no guaranteed order.

pub use super::rows::{GpuKind, GpuRow, GpuRows, NONE};
pub use crate::analysis::rules::name_flags::*;
use crate::limits;
use crate::trace::{Args, Event, Id, Loose, Meta, Sink};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

mod graph_args;
mod interner;
mod meta;
mod records;
mod sink;

pub use interner::Interner;
use interner::{cut_str, remap_names};
use meta::DeferredSums;
pub use meta::{Metadata, NotJoinable};
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

    /// Appends what a collector made of the next part of the same file collected, with the
    /// result of reading both parts in one collector: names and threads are re-interned in
    /// the order they were first seen, rows keep file order, metadata read later replaces what
    /// was read before. Refused (and `self` left unchanged) where that cannot be exact: a limit
    /// reached.
    pub fn join(&mut self, mut p: Collector) -> Result<(), NotJoinable> {
        let over = |a: usize, b: usize| a + b > limits::MAX_ROWS;
        // Integer-valued f64 sums are exact below 2^53, whatever the order.
        let exact = |a: f64, b: f64| a + b < (1u64 << 53) as f64;
        if self.deferred.is_some()
            || self.counters.rows_dropped > 0
            || p.counters.rows_dropped > 0
            || p.names.over_limit > 0
            || p.string_ids.over_limit > 0
            || self.names.names.len() + p.names.names.len() >= limits::MAX_NAMES
            || self.string_ids.names.len() + p.string_ids.names.len() >= limits::MAX_NAMES
            || p.counters.unknown_cats.len() >= 64
            || over(self.gpu.len(), p.gpu.len())
            || over(self.runtime.len(), p.runtime.len())
            || over(self.ops.len(), p.ops.len())
            || over(self.modules.len(), p.modules.len())
            || over(self.memory.len(), p.memory.len())
            || over(self.launch_kernels.len(), p.launch_kernels.len())
            || !exact(self.sm_eff_dur, p.sm_eff_dur)
            || !exact(self.occupancy_dur, p.occupancy_dur)
            || !exact(self.occupancy_unknown_dur, p.occupancy_unknown_dur)
        {
            return Err(NotJoinable);
        }
        let names = remap_names(&mut self.names, &p.names);
        let name = |id: u32| if id == NO_NAME { NO_NAME } else { names[id as usize] };
        let strings = remap_names(&mut self.string_ids, &p.string_ids);
        // Thread keys of string ids hold the string's id: re-keyed with it.
        let string_key = |k: i64| match k.checked_sub(i64::MIN / 2) {
            Some(s) if (0..strings.len() as i64).contains(&s) => i64::MIN / 2 + strings[s as usize] as i64,
            _ => k,
        };
        let mut keys = vec![(0, 0); p.threads.len()];
        for (&k, &id) in &p.threads {
            keys[id as usize] = k;
        }
        let threads: Vec<u32> = keys
            .into_iter()
            .map(|(pk, tk)| {
                let next = self.threads.len() as u32;
                *self.threads.entry((string_key(pk), string_key(tk))).or_insert(next)
            })
            .collect();
        let thread = |t: u32| threads[t as usize];
        let comm = |c: CommArgs| CommArgs { name: name(c.name), group: name(c.group), ..c };

        let base = self.gpu.len() as u32;
        self.gpu_comm.extend(p.gpu_comm.iter().map(|&(row, c)| (base + row, comm(c))));
        self.gpu_work.extend(p.gpu_work.iter().map(|&k| KernelCount { row: base + k.row, ..k }));
        self.gpu_graph.extend(p.gpu_graph.iter().map(|&g| GraphNode { row: base + g.row, ..g }));
        self.launch_kernels.extend(p.launch_kernels.iter().map(|&k| LaunchKernel { name: name(k.name), ..k }));
        self.ops_with_shapes += p.ops_with_shapes;
        for (&external, &w) in &p.op_work {
            self.op_work.entry(external).or_insert(w);
        }
        for i in 0..p.gpu.len() {
            let mut row = p.gpu.get(i);
            row.name = name(row.name);
            self.gpu.push(row, p.gpu.correlation(i), p.gpu.external(i));
        }
        drop(std::mem::take(&mut p.gpu));
        self.runtime.extend(p.runtime.iter().map(|r| RuntimeCall {
            thread: thread(r.thread),
            name: name(r.name),
            ..*r
        }));
        self.ops.extend(p.ops.iter().map(|o| OpRow { thread: thread(o.thread), name: name(o.name), ..*o }));
        self.modules.extend(p.modules.iter().map(|o| OpRow { thread: thread(o.thread), name: name(o.name), ..*o }));
        self.memory.extend(p.memory.iter().map(|m| MemEvent { thread: thread(m.thread), ..*m }));
        self.syncs.extend(p.syncs.iter().map(|c| SyncCall { thread: thread(c.thread), name: name(c.name), ..*c }));
        self.syncs.truncate(limits::MAX_ROWS);
        self.gpu_syncs.extend_from_slice(&p.gpu_syncs);
        self.gpu_syncs.truncate(limits::MAX_ROWS);
        for (&external, &c) in &p.op_comm {
            self.op_comm.insert(external, comm(c));
        }
        self.cpu_extent = match (self.cpu_extent, p.cpu_extent) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (a, b) => a.or(b),
        };
        self.sync_ns += p.sync_ns;
        self.launch_ns += p.launch_ns;
        self.sdpa_calls.extend(p.sdpa_calls);
        self.sdpa_calls.truncate(16);
        if let Some(d) = p.deferred {
            for t in d.sm_eff {
                self.sm_eff_weighted += t;
            }
            for t in d.occupancy {
                self.occupancy_weighted += t;
            }
            for meta in d.metadata {
                self.read_metadata(meta);
            }
        }
        self.sm_eff_dur += p.sm_eff_dur;
        self.occupancy_dur += p.occupancy_dur;
        self.occupancy_unknown_dur += p.occupancy_unknown_dur;
        self.names.long_names += p.names.long_names;
        self.string_ids.long_names += p.string_ids.long_names;
        let (k, q) = (&mut self.counters, p.counters);
        k.no_category += q.no_category;
        k.missing_ts += q.missing_ts;
        k.negative_dur += q.negative_dur;
        k.zero_dur_gpu += q.zero_dur_gpu;
        k.cuda_sync_rows += q.cuda_sync_rows;
        k.gpu_annotations += q.gpu_annotations;
        k.begin_end += q.begin_end;
        k.malformed += q.malformed;
        k.first_malformed = k.first_malformed.take().or(q.first_malformed);
        k.gpu_without_correlation += q.gpu_without_correlation;
        k.flow += q.flow;
        k.instant += q.instant;
        k.counters += q.counters;
        for (cat, n) in q.unknown_cats {
            if let Some(e) = k.unknown_cats.iter_mut().find(|(c, _)| *c == cat) {
                e.1 += n;
            } else if k.unknown_cats.len() < 64 {
                k.unknown_cats.push((cat, n));
            }
        }
        Ok(())
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
        let nelems = a.in_msg_nelems.and_then(Loose::as_i64);
        let size = text(a.dtype).and_then(|d| dtype_size(&d));
        Some(CommArgs {
            name: self.names.intern(name.as_bytes()),
            group: group.map(|g| self.names.intern(g.as_bytes())).unwrap_or(NO_NAME),
            seq: a.seq.and_then(Loose::as_i64).unwrap_or(NONE),
            bytes: match (nelems, size) {
                (Some(n), Some(s)) => n.saturating_mul(s),
                _ => NONE,
            },
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
        let pk = self.id_key(pid);
        let tk = self.id_key(tid);
        let next = self.threads.len() as u32;
        *self.threads.entry((pk, tk)).or_insert(next)
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
