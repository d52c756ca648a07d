//! The collector as the importers' sink: one neutral event at a time into records.

use super::*;
use crate::report::WorkSource;
use crate::trace::{Args, Event, Kind, Meta, Phase};

/// A GPU row's stream: args.stream, else its tid (a number, or "stream 7").
pub(super) fn stream_of(arg: Option<i64>, tid: &Id) -> i32 {
    let n = arg.or_else(|| tid.as_int()).or_else(|| match tid {
        Id::Str(s) => s.rsplit(' ').next().and_then(|d| d.parse().ok()),
        _ => None,
    });
    n.unwrap_or(0).clamp(i32::MIN as i64, i32::MAX as i64) as i32
}
impl Sink for Collector {
    fn event(&mut self, ev: &Event<'_>) {
        if ev.phase == Phase::Memory {
            self.memory_event(ev);
            return;
        }
        match ev.kind {
            // Metadata rows (process and thread names) never carry a category.
            Kind::Missing if ev.phase != Phase::Metadata => self.counters.no_category += 1,
            Kind::Unknown => self.count_unknown(&String::from_utf8_lossy(ev.category)),
            _ => {}
        }
        match ev.phase {
            Phase::Complete => self.complete_event(ev),
            Phase::BeginEnd => self.counters.begin_end += 1,
            Phase::Flow => self.counters.flow += 1,
            Phase::Instant => self.counters.instant += 1,
            Phase::Counter => self.counters.counters += 1,
            Phase::Metadata | Phase::Memory | Phase::Other => {}
        }
    }

    fn metadata(&mut self, meta: Meta) {
        match &mut self.deferred {
            // A later part of a split file: replayed in order when joined.
            Some(d) => d.metadata.push(meta),
            None => self.read_metadata(meta),
        }
    }

    fn malformed(&mut self, offset: u64, why: &str) {
        self.counters.malformed += 1;
        if self.counters.first_malformed.is_none() {
            self.counters.first_malformed = Some((offset, why.to_string()));
        }
    }
}

/// Turning one complete event into records.
impl Collector {
    /// A kernel's achieved SM efficiency and occupancy, as the profiler wrote them, weighted by
    /// its time.
    fn kernel_efficiency(&mut self, a: &Args, dur: i64) {
        if let Some(bps) = a.blocks_per_sm.and_then(Loose::as_f64) {
            let term = bps.clamp(0.0, 1.0) * dur as f64;
            match &mut self.deferred {
                Some(d) => d.sm_eff.push(term),
                None => self.sm_eff_weighted += term,
            }
            self.sm_eff_dur += dur as f64;
        }
        let occupancy = a.occupancy_pct.and_then(Loose::as_f64);
        if occupancy == Some(0.0) {
            // Kineto writes 0 where CUPTI had no figure (a kernel too short to
            // sample, or one it could not instrument): unknown, not empty SMs.
            self.occupancy_unknown_dur += dur as f64;
        } else if let Some(occ) = occupancy {
            let term = occ.clamp(0.0, 100.0) * dur as f64;
            match &mut self.deferred {
                Some(d) => d.occupancy.push(term),
                None => self.occupancy_weighted += term,
            }
            self.occupancy_dur += dur as f64;
        }
    }

    fn complete_event(&mut self, ev: &Event) {
        let Some(start) = ev.start else {
            self.counters.missing_ts += 1;
            return;
        };
        let mut dur = ev.dur.unwrap_or(0);
        if dur < 0 {
            self.counters.negative_dur += 1;
            dur = 0;
        }
        let args = ev.args;
        let external = args.and_then(|a| a.external_id()).unwrap_or(NONE);
        if let Some(a) = args {
            self.graph_args(ev.kind, a);
        }
        let span = Span { start, dur, external };
        match ev.kind {
            Kind::Gpu(kind) => self.gpu_row(ev, span, kind),
            Kind::Runtime => self.runtime_call(ev, span),
            Kind::Op if self.ops.len() >= limits::MAX_ROWS => self.counters.rows_dropped += 1,
            Kind::Op => self.op_row(ev, span),
            Kind::Python => self.module_row(ev, span),
            Kind::CudaSync => {
                self.counters.cuda_sync_rows += 1;
                if let Some(g) = args.and_then(|a| gpu_sync(ev.name, a)) {
                    if self.gpu_syncs.len() < limits::MAX_ROWS {
                        self.gpu_syncs.push(g);
                    }
                }
            }
            Kind::GpuAnnotation => {
                self.counters.gpu_annotations += 1;
                // Kineto writes each ProfilerStep on the CPU and again on the GPU: the steps are
                // the CPU's; these are only counted, so that the diagnostic can say so.
                if ev.name.starts_with(b"ProfilerStep#") {
                    self.counters.gpu_step_annotations += 1;
                }
            }
            Kind::Ignored | Kind::Missing | Kind::Unknown => {}
        }
    }

    /// A kernel, memcpy or memset row: its counters, efficiency figures and work, then the row.
    #[inline]
    fn gpu_row(&mut self, ev: &Event, Span { start, dur, external }: Span, kind: GpuKind) {
        let args = ev.args;
        let correlation = args.and_then(|a| a.correlation).and_then(Loose::as_i64).unwrap_or(NONE);
        if correlation == NONE {
            self.counters.gpu_without_correlation += 1;
        }
        if dur == 0 {
            self.counters.zero_dur_gpu += 1;
        }
        let device = args.and_then(|a| a.device).and_then(Loose::as_i64).or_else(|| ev.process.as_int()).unwrap_or(0);
        if let Some(a) = args {
            self.kernel_efficiency(a, dur);
        }
        if self.gpu.len() >= limits::MAX_ROWS {
            self.counters.rows_dropped += 1;
            return;
        }
        let name = self.names.intern(ev.name);
        if let Some(c) = args.and_then(|a| self.comm_args(a)) {
            self.gpu_comm.push((self.gpu.len() as u32, c));
        }
        if let Some(k) = args.and_then(|a| kernel_count(a, self.gpu.len() as u32)) {
            self.gpu_work.push(k);
        }
        let row = GpuRow {
            start,
            dur,
            name,
            device: device.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            stream: stream_of(args.and_then(|a| a.stream).and_then(Loose::as_i64), ev.thread),
            kind,
        };
        self.gpu.push(row, correlation, external);
    }

    /// A CUDA/HIP runtime call: synchronising ones into the sync list, launches counted, and
    /// every call with a correlation kept to tie kernels to their launches.
    #[inline]
    fn runtime_call(&mut self, ev: &Event, Span { start, dur, external }: Span) {
        let args = ev.args;
        let id = self.names.intern(ev.name);
        let flags = self.names.flags[id as usize];
        if flags & NAME_SYNC != 0 {
            self.sync_ns += dur;
            let thread = self.thread_key(ev.process, ev.thread);
            let correlation = args.and_then(|a| a.correlation).and_then(Loose::as_i64).unwrap_or(NONE);
            if self.syncs.len() < limits::MAX_ROWS {
                let end = start.saturating_add(dur);
                self.progress.make_room(&mut self.syncs);
                self.syncs.push(SyncCall { start, end, name: id, thread, correlation });
            }
        }
        let correlation = args.and_then(|a| a.correlation).and_then(Loose::as_i64).unwrap_or(NONE);
        if correlation != NONE && self.runtime.len() >= limits::MAX_ROWS {
            self.counters.rows_dropped += 1;
        } else if correlation != NONE {
            if flags & NAME_LAUNCH != 0 {
                self.launch_ns += dur;
                self.launch_calls += 1;
            }
            let thread = self.thread_key(ev.process, ev.thread);
            self.progress.make_room(&mut self.runtime);
            self.runtime.push(RuntimeCall { correlation, external, start, dur, thread, name: id });
        }
    }

    /// A CPU op (the row limit checked by the caller): its communication and work arguments,
    /// the first SDPA calls' shapes, the CPU extent, then the row.
    #[inline]
    fn op_row(&mut self, ev: &Event, Span { start, dur, external }: Span) {
        let args = ev.args;
        let thread = self.thread_key(ev.process, ev.thread);
        let name = self.names.intern(ev.name);
        if external != NONE {
            if let Some(c) = args.and_then(|a| self.comm_args(a)) {
                self.op_comm.insert(external, c);
            }
        }
        if self.names.is(name, NAME_SDPA) && self.sdpa_calls.len() < 16 {
            self.sdpa_call(ev);
        }
        let end = start.saturating_add(dur);
        self.cpu_extent = Some(match self.cpu_extent {
            Some((a, b)) => (a.min(start), b.max(end)),
            None => (start, end),
        });
        if let Some(a) = args {
            self.ops_with_shapes += u64::from(a.input_dims.is_some());
            if external != NONE && self.names.is(name, NAME_WORK) {
                if let Some(w) = op_work(&mut self.work_memo, (name, self.names.get(name)), a) {
                    self.op_work.entry(external).or_insert(w);
                }
            }
        }
        let seq = args.and_then(|a| a.sequence_number).and_then(Loose::as_i64).unwrap_or(NONE);
        self.progress.make_room(&mut self.ops);
        self.ops.push(OpRow { start, end, external, seq, name, thread });
    }

    /// A scaled-dot-product-attention op's name and input shapes, as written (cut), to tell
    /// the attention backend's case.
    #[cold]
    fn sdpa_call(&mut self, ev: &Event) {
        let args = ev.args;
        let raw =
            |v: Option<&[u8]>| v.map(|r| cut_str(&String::from_utf8_lossy(r), 16 * limits::MAX_NAME_BYTES).to_string());
        self.sdpa_calls.push(SdpaCall {
            op: cut_str(&String::from_utf8_lossy(ev.name), limits::MAX_NAME_BYTES).to_string(),
            input_dims: raw(args.and_then(|a| a.input_dims)),
            input_types: raw(args.and_then(|a| a.input_type)),
            concrete_inputs: raw(args.and_then(|a| a.concrete_inputs)),
        });
    }

    /// A Python-level row: only `nn.Module: ` scopes are kept (the module tree).
    #[inline]
    fn module_row(&mut self, ev: &Event, Span { start, dur, .. }: Span) {
        if ev.name.starts_with(b"nn.Module: ") && self.modules.len() >= limits::MAX_ROWS {
            self.counters.rows_dropped += 1;
        } else if ev.name.starts_with(b"nn.Module: ") {
            let thread = self.thread_key(ev.process, ev.thread);
            let name = self.names.intern(ev.name);
            self.progress.make_room(&mut self.modules);
            self.modules.push(OpRow { start, end: start.saturating_add(dur), external: NONE, seq: NONE, name, thread });
        }
    }
}

/// A complete event's place in time (its duration clamped to zero) and its external id.
#[derive(Clone, Copy)]
struct Span {
    start: i64,
    dur: i64,
    external: i64,
}

/// What a `cuda_sync` row waited on (see [`GpuSync`]); None without a kind or a correlation.
fn gpu_sync(name: &[u8], a: &Args) -> Option<GpuSync> {
    let int = |v: Option<Loose>| v.and_then(Loose::as_i64);
    let small = |v: Option<i64>| v.map_or(NO_STREAM, |s| s.clamp(i32::MIN as i64, i32::MAX as i64) as i32);
    // -1 is CUPTI's "invalid" (a context sync's stream; an event record it did not see).
    let record = int(a.wait_on_record).filter(|&c| c >= 0).unwrap_or(NONE);
    Some(GpuSync {
        kind: SyncKind::of(name)?,
        correlation: int(a.correlation)?,
        device: small(int(a.device)),
        stream: small(int(a.stream)),
        record_stream: small(int(a.wait_on_stream).filter(|&s| s >= 0)),
        record_correlation: record,
    })
}

/// An op's work from its shapes, with the profiler's FLOP count (`with_flops=True`) in place
/// of the formula's where the trace carries one.
fn op_work(memo: &mut work_memo::WorkMemo, (id, name): (u32, &str), a: &Args) -> Option<OpWork> {
    use crate::analysis::rules::op_work::{work, Inputs};
    let shaped = a.input_dims.and_then(|dims| {
        let key = work_memo::Key { name: id, dims, types: a.input_type, concrete: a.concrete_inputs };
        memo.get_or(key, || Inputs::parse(dims, a.input_type, a.concrete_inputs).and_then(|x| work(name, &x)))
    });
    let counted = a.flops.and_then(Loose::as_f64).filter(|f| *f > 0.0);
    let (flops, source) = match (counted, &shaped) {
        (Some(f), _) => (f, WorkSource::Profiler),
        (None, Some(w)) => (w.flops, WorkSource::Shapes),
        (None, None) => return None,
    };
    let w =
        shaped.unwrap_or(crate::analysis::rules::op_work::Work { flops, bytes: 0.0, precision: None, causal: false });
    Some(OpWork {
        flops,
        bytes: w.bytes,
        precision: w.precision,
        source,
        causal: w.causal && source == WorkSource::Shapes,
    })
}

/// Inductor's counts on a kernel row, when it carries them.
fn kernel_count(a: &Args, row: u32) -> Option<KernelCount> {
    let flops = a.kernel_flop.and_then(Loose::as_f64).filter(|f| *f >= 0.0);
    let gb = a.kernel_num_gb.and_then(Loose::as_f64).filter(|g| *g >= 0.0);
    if flops.is_none() && gb.is_none() {
        return None;
    }
    Some(KernelCount { row, flops: flops.unwrap_or(0.0), bytes: gb.unwrap_or(0.0) * 1e9 })
}
