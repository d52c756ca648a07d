//! The sink that turns streamed events into the compact per-event data the analysis needs:
//! interned names and fixed-size records. Nothing here depends on event order, because
//! Kineto writes CPU and GPU rows, and metadata, in no guaranteed order.

pub use super::name_flags::*;
pub use super::rows::{GpuKind, GpuRow, GpuRows, NONE};
use crate::limits;
use crate::trace::{Id, Loose, RawEvent, Sink};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Interned strings: every distinct name is stored once; records hold a `u32`.
#[derive(Default, Serialize, Deserialize)]
pub struct Interner {
    ids: FxHashMap<Box<[u8]>, u32>,
    pub names: Vec<Box<str>>,
    /// Per name: the `NAME_*` facts, worked out once when the name is first seen.
    pub flags: Vec<u8>,
    /// Names cut to [`limits::MAX_NAME_BYTES`] (per occurrence).
    pub long_names: u64,
    /// Occurrences of new names past [`limits::MAX_NAMES`], merged into one placeholder.
    pub over_limit: u64,
    other: Option<u32>,
}

impl Interner {
    pub fn intern(&mut self, s: &[u8]) -> u32 {
        let s = if s.len() > limits::MAX_NAME_BYTES {
            self.long_names += 1;
            cut_name(s)
        } else {
            s
        };
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        if self.names.len() >= limits::MAX_NAMES {
            self.over_limit += 1;
            if let Some(id) = self.other {
                return id;
            }
            let id = self.names.len() as u32;
            self.names.push(limits::OTHER_NAME.into());
            self.flags.push(0);
            self.other = Some(id);
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(String::from_utf8_lossy(s).into());
        self.flags.push(name_flags(s));
        self.ids.insert(s.into(), id);
        id
    }
    pub fn get(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
    /// Whether the name has the `NAME_*` fact `flag`.
    pub fn is(&self, id: u32, flag: u8) -> bool {
        self.flags[id as usize] & flag != 0
    }
}

/// Interns `part`'s names into `into` in the order `part` first saw them (its id order), which
/// is the order one reading of both parts would have seen them in; returns part id -> id.
fn remap_names(into: &mut Interner, part: &Interner) -> Vec<u32> {
    let mut raw: Vec<&[u8]> = vec![&[]; part.names.len()];
    for (bytes, &id) in &part.ids {
        raw[id as usize] = bytes;
    }
    raw.into_iter().map(|b| into.intern(b)).collect()
}

/// The first [`limits::MAX_NAME_BYTES`] bytes of `s`, cut back to a UTF-8 character boundary
/// (when `s` is UTF-8 there).
fn cut_name(s: &[u8]) -> &[u8] {
    let mut end = limits::MAX_NAME_BYTES.min(s.len());
    // Back over at most three continuation bytes to the start of the cut character.
    let mut back = 0;
    while end > 0 && back < 3 && s[end] & 0xC0 == 0x80 {
        end -= 1;
        back += 1;
    }
    &s[..end]
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn cut_str(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

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
}

/// Arguments of a scaled-dot-product-attention op, kept (a few) to explain the backend.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SdpaCall {
    pub op: String,
    pub input_dims: Option<String>,
    pub input_types: Option<String>,
    pub concrete_inputs: Option<String>,
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
}

pub const NO_NAME: u32 = u32::MAX;

/// Bytes per element of the dtype names PyTorch records (`Float`, `BFloat16`, ...).
fn dtype_size(dtype: &str) -> Option<i64> {
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
    /// Collective metadata of GPU rows (by row index, in row order).
    pub gpu_comm: Vec<(u32, CommArgs)>,
    /// Collective metadata of ops, by their External id.
    pub op_comm: FxHashMap<i64, CommArgs>,
    pub threads: FxHashMap<(i64, i64), u32>,
    string_ids: Interner,
    /// Duration-weighted sums for the SM efficiency / occupancy estimates.
    pub sm_eff_weighted: f64,
    pub sm_eff_dur: f64,
    pub occupancy_weighted: f64,
    pub occupancy_dur: f64,
    pub counters: Counters,
    /// Not carried between workers: a later part carries its metadata as text in `deferred`.
    #[serde(skip)]
    pub meta: Metadata,
    /// In a later part of a split file: the duration-weighted terms, kept to be added in file
    /// order when the parts are joined (floating-point sums depend on the order).
    deferred: Option<Box<DeferredSums>>,
}

#[derive(Default, Serialize, Deserialize)]
struct DeferredSums {
    sm_eff: Vec<f64>,
    occupancy: Vec<f64>,
    /// Top-level metadata (key, JSON text) the part read, replayed onto the parts before it
    /// (a later value replaces an earlier one, as in one reading).
    metadata: Vec<(MetaKey, String)>,
}

/// The top-level metadata the analysis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum MetaKey {
    /// `deviceProperties` (2021 traces: `computeProperties`).
    Devices,
    /// `distributedInfo`.
    Distributed,
}

impl MetaKey {
    fn of(key: &str) -> Option<MetaKey> {
        match key {
            "deviceProperties" | "computeProperties" => Some(MetaKey::Devices),
            "distributedInfo" => Some(MetaKey::Distributed),
            _ => None,
        }
    }
}

/// A part of a split file that cannot be joined to the parts before it with the result of one
/// reading: a limit was reached; the file is then read whole.
#[derive(Debug)]
pub struct NotJoinable;

/// Top-level metadata of the trace file.
#[derive(Debug, Default, Clone)]
pub struct Metadata {
    pub devices: Vec<DeviceProps>,
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub struct DeviceProps {
    #[serde(default)]
    pub id: Option<Loose>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, rename = "numSms")]
    pub num_sms: Option<Loose>,
    #[serde(default, rename = "computeMajor")]
    pub compute_major: Option<Loose>,
    #[serde(default, rename = "computeMinor")]
    pub compute_minor: Option<Loose>,
    #[serde(default, rename = "totalGlobalMem")]
    pub total_global_mem: Option<Loose>,
}

#[derive(Debug, Default, Deserialize)]
struct DistributedInfo {
    #[serde(default)]
    backend: Option<String>,
    #[serde(default)]
    rank: Option<Loose>,
    #[serde(default)]
    world_size: Option<Loose>,
}

/// Category of an event, decided case-insensitively (old traces capitalise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cat {
    Gpu(GpuKind),
    Runtime,
    Op,
    CudaSync,
    GpuAnnotation,
    /// python_function: only `nn.Module` spans are kept.
    Python,
    Ignored,
    Missing,
    Unknown,
}

fn category(cat: &[u8]) -> Cat {
    const IGNORED: &[&str] = &[
        "cpu_instant_event",
        "ac2g",
        "fwdbwd",
        "trace",
        "async",
        "async_gpu",
        "async_cpu_to_gpu",
        "python",
        "memory",
        "overhead",
        "cuda_profiler_range",
        "gpu_memory",
        "kineto",
    ];
    let c = cat.trim_ascii();
    if c.is_empty() {
        return Cat::Missing;
    }
    let is = |s: &str| c.eq_ignore_ascii_case(s.as_bytes());
    if is("kernel") {
        Cat::Gpu(GpuKind::Kernel)
    } else if is("gpu_memcpy") || is("memcpy") {
        Cat::Gpu(GpuKind::Memcpy)
    } else if is("gpu_memset") || is("memset") {
        Cat::Gpu(GpuKind::Memset)
    } else if is("cuda_runtime") || is("runtime") || is("cuda_driver") || is("hip_runtime") {
        Cat::Runtime
    } else if is("cpu_op") || is("operator") || is("user_annotation") {
        Cat::Op
    } else if is("cuda_sync") {
        Cat::CudaSync
    } else if is("gpu_user_annotation") {
        Cat::GpuAnnotation
    } else if is("python_function") {
        Cat::Python
    } else if IGNORED.iter().any(|s| is(s)) {
        Cat::Ignored
    } else {
        Cat::Unknown
    }
}

/// A GPU row's stream: args.stream, else its tid (a number, or "stream 7").
fn stream_of(arg: Option<i64>, tid: &Id) -> i32 {
    let n = arg.or_else(|| tid.as_int()).or_else(|| match tid {
        Id::Str(s) => s.rsplit(' ').next().and_then(|d| d.parse().ok()),
        _ => None,
    });
    n.unwrap_or(0).clamp(i32::MIN as i64, i32::MAX as i64) as i32
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
            || !exact(self.sm_eff_dur, p.sm_eff_dur)
            || !exact(self.occupancy_dur, p.occupancy_dur)
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
            for (key, text) in d.metadata {
                if let Ok(value) = RawValue::from_string(text) {
                    self.read_metadata(key, &value);
                }
            }
        }
        self.sm_eff_dur += p.sm_eff_dur;
        self.occupancy_dur += p.occupancy_dur;
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
    fn read_metadata(&mut self, key: MetaKey, value: &RawValue) {
        match key {
            MetaKey::Devices => {
                if let Ok(d) = serde_json::from_str::<Vec<DeviceProps>>(value.get()) {
                    self.meta.devices = d;
                }
            }
            MetaKey::Distributed => {
                if let Ok(d) = serde_json::from_str::<DistributedInfo>(value.get()) {
                    self.meta.rank = d.rank.and_then(Loose::as_i64);
                    self.meta.world_size = d.world_size.and_then(Loose::as_i64);
                    self.meta.backend = d.backend;
                }
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
        self.gpu_comm.shrink_to_fit();
    }

    /// The collective metadata in an event's args, if it has any.
    fn comm_args(&mut self, a: &crate::trace::event::Args) -> Option<CommArgs> {
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

    fn memory_event(&mut self, ev: &RawEvent) {
        let Some(ts) = ev.ts.and_then(crate::trace::event::micros_to_nanos) else {
            self.counters.missing_ts += 1;
            return;
        };
        let Some(a) = ev.args.as_ref() else { return };
        let int = |v: Option<Loose>| v.and_then(Loose::as_i64).unwrap_or(NONE);
        let bytes = int(a.bytes);
        if bytes == NONE {
            return;
        }
        if self.memory.len() >= limits::MAX_ROWS {
            self.counters.rows_dropped += 1;
            return;
        }
        let thread = self.thread_key(&ev.pid, &ev.tid);
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

    fn complete_event(&mut self, ev: &RawEvent, cat: Cat) {
        let Some(start) = ev.ts.and_then(crate::trace::event::micros_to_nanos) else {
            self.counters.missing_ts += 1;
            return;
        };
        let mut dur = ev.dur.and_then(crate::trace::event::micros_to_nanos).unwrap_or(0);
        if dur < 0 {
            self.counters.negative_dur += 1;
            dur = 0;
        }
        let args = ev.args.as_ref();
        let external = args.and_then(|a| a.external_id()).unwrap_or(NONE);
        match cat {
            Cat::Gpu(kind) => {
                let correlation = args.and_then(|a| a.correlation).and_then(Loose::as_i64).unwrap_or(NONE);
                if correlation == NONE {
                    self.counters.gpu_without_correlation += 1;
                }
                if dur == 0 {
                    self.counters.zero_dur_gpu += 1;
                }
                let device =
                    args.and_then(|a| a.device).and_then(Loose::as_i64).or_else(|| ev.pid.as_int()).unwrap_or(0);
                if let Some(a) = args {
                    if let Some(bps) = a.blocks_per_sm.and_then(Loose::as_f64) {
                        let term = bps.clamp(0.0, 1.0) * dur as f64;
                        match &mut self.deferred {
                            Some(d) => d.sm_eff.push(term),
                            None => self.sm_eff_weighted += term,
                        }
                        self.sm_eff_dur += dur as f64;
                    }
                    if let Some(occ) = a.occupancy_pct.and_then(Loose::as_f64) {
                        let term = occ.clamp(0.0, 100.0) * dur as f64;
                        match &mut self.deferred {
                            Some(d) => d.occupancy.push(term),
                            None => self.occupancy_weighted += term,
                        }
                        self.occupancy_dur += dur as f64;
                    }
                }
                if self.gpu.len() >= limits::MAX_ROWS {
                    self.counters.rows_dropped += 1;
                    return;
                }
                let name = self.names.intern(ev.name.bytes());
                if let Some(c) = args.and_then(|a| self.comm_args(a)) {
                    self.gpu_comm.push((self.gpu.len() as u32, c));
                }
                let row = GpuRow {
                    start,
                    dur,
                    name,
                    device: device.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
                    stream: stream_of(args.and_then(|a| a.stream).and_then(Loose::as_i64), &ev.tid),
                    kind,
                };
                self.gpu.push(row, correlation, external);
            }
            Cat::Runtime => {
                let id = self.names.intern(ev.name.bytes());
                let flags = self.names.flags[id as usize];
                if flags & NAME_SYNC != 0 {
                    self.sync_ns += dur;
                    let thread = self.thread_key(&ev.pid, &ev.tid);
                    if self.syncs.len() < limits::MAX_ROWS {
                        self.syncs.push(SyncCall { start, end: start.saturating_add(dur), name: id, thread });
                    }
                }
                let correlation = args.and_then(|a| a.correlation).and_then(Loose::as_i64).unwrap_or(NONE);
                if correlation != NONE && self.runtime.len() >= limits::MAX_ROWS {
                    self.counters.rows_dropped += 1;
                } else if correlation != NONE {
                    if flags & NAME_LAUNCH != 0 {
                        self.launch_ns += dur;
                    }
                    let thread = self.thread_key(&ev.pid, &ev.tid);
                    self.runtime.push(RuntimeCall { correlation, external, start, dur, thread, name: id });
                }
            }
            Cat::Op if self.ops.len() >= limits::MAX_ROWS => self.counters.rows_dropped += 1,
            Cat::Op => {
                let thread = self.thread_key(&ev.pid, &ev.tid);
                let name = self.names.intern(ev.name.bytes());
                if external != NONE {
                    if let Some(c) = args.and_then(|a| self.comm_args(a)) {
                        self.op_comm.insert(external, c);
                    }
                }
                if self.names.is(name, NAME_SDPA) && self.sdpa_calls.len() < 16 {
                    let raw = |v: Option<&[u8]>| {
                        v.map(|r| cut_str(&String::from_utf8_lossy(r), 16 * limits::MAX_NAME_BYTES).to_string())
                    };
                    self.sdpa_calls.push(SdpaCall {
                        op: cut_str(&ev.name.to_str(), limits::MAX_NAME_BYTES).to_string(),
                        input_dims: raw(args.and_then(|a| a.input_dims)),
                        input_types: raw(args.and_then(|a| a.input_type)),
                        concrete_inputs: raw(args.and_then(|a| a.concrete_inputs)),
                    });
                }
                let end = start.saturating_add(dur);
                self.cpu_extent = Some(match self.cpu_extent {
                    Some((a, b)) => (a.min(start), b.max(end)),
                    None => (start, end),
                });
                let seq = args.and_then(|a| a.sequence_number).and_then(Loose::as_i64).unwrap_or(NONE);
                self.ops.push(OpRow { start, end, external, seq, name, thread });
            }
            Cat::Python => {
                if ev.name.bytes().starts_with(b"nn.Module: ") && self.modules.len() >= limits::MAX_ROWS {
                    self.counters.rows_dropped += 1;
                } else if ev.name.bytes().starts_with(b"nn.Module: ") {
                    let thread = self.thread_key(&ev.pid, &ev.tid);
                    let name = self.names.intern(ev.name.bytes());
                    self.modules.push(OpRow {
                        start,
                        end: start.saturating_add(dur),
                        external: NONE,
                        seq: NONE,
                        name,
                        thread,
                    });
                }
            }
            Cat::CudaSync => self.counters.cuda_sync_rows += 1,
            Cat::GpuAnnotation => self.counters.gpu_annotations += 1,
            Cat::Ignored | Cat::Missing | Cat::Unknown => {}
        }
    }
}

impl Sink for Collector {
    fn event(&mut self, ev: &RawEvent<'_>, _offset: u64) {
        // `[memory]` instant events (profile_memory=True); 2021 traces write them without a cat.
        if ev.name.bytes() == b"[memory]" && matches!(ev.ph.bytes(), b"i" | b"I") {
            self.memory_event(ev);
            return;
        }
        let cat = category(ev.cat.bytes());
        match cat {
            // Metadata rows (process and thread names) never carry a category.
            Cat::Missing if ev.ph.bytes() != b"M" => self.counters.no_category += 1,
            Cat::Unknown => self.count_unknown(&ev.cat.to_str()),
            _ => {}
        }
        match ev.ph.bytes() {
            b"X" => self.complete_event(ev, cat),
            b"B" | b"E" => self.counters.begin_end += 1,
            b"s" | b"f" | b"t" => self.counters.flow += 1,
            b"i" | b"I" | b"n" => self.counters.instant += 1,
            b"C" => self.counters.counters += 1,
            _ => {}
        }
    }

    fn metadata(&mut self, key: &str, value: &RawValue) {
        let Some(key) = MetaKey::of(key) else { return };
        match &mut self.deferred {
            // A later part of a split file: replayed in order when joined.
            Some(d) => d.metadata.push((key, value.get().to_string())),
            None => self.read_metadata(key, value),
        }
    }

    fn malformed(&mut self, offset: u64, why: &str) {
        self.counters.malformed += 1;
        if self.counters.first_malformed.is_none() {
            self.counters.first_malformed = Some((offset, why.to_string()));
        }
    }
}
