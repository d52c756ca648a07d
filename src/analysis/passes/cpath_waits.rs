//! What the critical path's waits waited on. Where the trace has `cuda_sync` rows (Kineto's
//! CudaSyncActivity, libkineto/src/CuptiActivity.cpp, written with PyTorch's experimental
//! `enable_cuda_sync_events`; see [`GpuSync`]) a wait is read from its ids, as HTA does
//! (hta/analyzers/critical_path_analysis.py, `_get_cuda_event_record_df` and its event edges):
//! - `cudaStreamWaitEvent`: the last row launched on the recording stream before the
//!   `cudaEventRecord` call -> the first row launched on the waiting stream after the wait;
//! - `cudaEventSynchronize`: the CPU call waits on that same recorded row;
//! - `cudaStreamSynchronize`: the CPU call waits on the last row launched on its stream.
//!
//! Without those rows (HIP traces, and CUDA ones recorded without the flag: the runtime
//! calls' own args carry only `cbid` and `correlation`), a synchronising call falls back to
//! the last row launched before it that ended inside it, and a stream wait is no edge: the
//! report counts those waits so that a path reading CPU-bound says what it could not see.

use super::cpath_graph::Inputs;
use crate::analysis::model::attribution::NO;
use crate::analysis::model::collect::{Call, GpuSync, SyncKind};
use rustc_hash::FxHashMap;

/// A blocking call that waited for a GPU row (clipped to the step).
pub(super) struct Wait {
    pub start: i64,
    pub end: i64,
    pub thread: u32,
    pub name: u32,
    pub row: usize,
}

/// A step's waits: CPU calls on rows, GPU rows on rows (recorded -> waiting), and counts.
#[derive(Default)]
pub(super) struct StepWaits {
    pub waits: Vec<Wait>,
    /// (the recorded row, the first row of the waiting stream after the wait).
    pub events: Vec<(usize, usize)>,
    /// Synchronising calls inside which no row ended (their time stays on the CPU).
    pub unmatched: u64,
    /// Synchronising calls whose row the trace's ids named.
    pub by_id: u64,
    /// Stream waits the trace wrote no `cuda_sync` row for: not edges.
    pub unseen: u64,
}

/// The `cuda_sync` rows by their call: a runtime call's index, or a synchronising call's
/// correlation id.
pub(super) struct Ids {
    of_runtime: FxHashMap<u32, GpuSync>,
    of_sync: FxHashMap<i64, GpuSync>,
}

impl Ids {
    pub fn new(x: &Inputs) -> Ids {
        let of_runtime =
            x.c.gpu_syncs.iter().flat_map(|g| x.call_ids.calls(g.correlation).map(move |i| (i as u32, *g))).collect();
        Ids { of_runtime, of_sync: x.c.gpu_syncs.iter().map(|g| (g.correlation, *g)).collect() }
    }
}

/// The step's rows per (device, stream), in launch order.
struct Launched<'a> {
    x: &'a Inputs<'a>,
    streams: FxHashMap<(i32, i32), Vec<u32>>,
}

impl Launched<'_> {
    fn last_before(&self, device: i32, stream: i32, t: i64) -> Option<usize> {
        let list = self.streams.get(&(device, stream))?;
        let k = list.partition_point(|&i| self.x.key(i as usize) <= t);
        k.checked_sub(1).map(|k| list[k] as usize)
    }

    fn first_after(&self, device: i32, stream: i32, t: i64) -> Option<usize> {
        let list = self.streams.get(&(device, stream))?;
        list.get(list.partition_point(|&i| self.x.key(i as usize) < t)).map(|&i| i as usize)
    }
}

/// The runtime call of a correlation id (the first, as the calls are sorted by correlation).
fn call<'a>(x: &Inputs<'a>, correlation: i64) -> Option<&'a Call> {
    x.call_ids.calls(correlation).next().map(|i| &x.runtime[i])
}

/// The row an event wait or event sync waited on: the last launched on the recording stream
/// before the record call.
fn recorded_row(x: &Inputs, l: &Launched, g: &GpuSync) -> Option<usize> {
    let rec = call(x, g.record_correlation)?;
    l.last_before(g.device, g.record_stream, rec.start)
}

/// `held`: the step's GPU rows, runtime calls and synchronising calls (indices).
pub(super) fn step_waits<'a>(x: &'a Inputs<'a>, ids: &Ids, held: (&[u32], &[u32], &[u32]), e: i64) -> StepWaits {
    let (rows, runtime, syncs) = held;
    let lanes = x.c.gpu.lanes();
    let mut streams: FxHashMap<(i32, i32), Vec<u32>> = FxHashMap::default();
    for &i in rows {
        streams.entry(lanes[x.c.gpu.lane_of(i as usize) as usize]).or_default().push(i);
    }
    for list in streams.values_mut() {
        // Distinct keys (the index is one): the unstable sort gives the one order.
        list.sort_unstable_by_key(|&i| (x.key(i as usize), i));
    }
    let l = Launched { x, streams };
    let mut out = StepWaits::default();
    for (i, r) in runtime.iter().map(|&i| (i, &x.runtime[i as usize])) {
        match ids.of_runtime.get(&i).filter(|g| g.kind == SyncKind::StreamWaitEvent) {
            Some(g) => {
                let to = l.first_after(g.device, g.stream, r.start);
                if let (Some(from), Some(to)) = (recorded_row(x, &l, g), to) {
                    out.events.push((from, to));
                }
            }
            None if x.c.names.get(r.name).ends_with("StreamWaitEvent") => out.unseen += 1,
            None => {}
        }
    }
    sync_waits(x, ids, &l, (rows, syncs), e, &mut out);
    copy_waits(x, rows, e, &mut out.waits);
    out
}

/// A synchronising call waits for the row its `cuda_sync` row names; else (a device sync, or
/// no such row) for the last row launched before it that ended inside it.
fn sync_waits(x: &Inputs, ids: &Ids, l: &Launched, (rows, syncs): (&[u32], &[u32]), e: i64, out: &mut StepWaits) {
    let mut ends: Vec<(i64, u32)> =
        if syncs.is_empty() { Vec::new() } else { rows.iter().map(|&i| (x.c.gpu.end(i as usize), i)).collect() };
    ends.sort_unstable();
    for y in syncs.iter().map(|&i| &x.c.syncs[i as usize]) {
        let told = match ids.of_sync.get(&y.correlation) {
            Some(g) if g.kind == SyncKind::StreamSync => Some(l.last_before(g.device, g.stream, y.start)),
            Some(g) if g.kind == SyncKind::EventSync && call(x, g.record_correlation).is_some() => {
                Some(recorded_row(x, l, g))
            }
            _ => None,
        };
        let row = match told {
            Some(row) => {
                out.by_id += 1;
                // A row done before the call began: the call did not wait, its time is CPU.
                row.filter(|&i| x.c.gpu.end(i) >= y.start)
            }
            None => {
                let k = ends.partition_point(|&(t, _)| t <= y.end);
                let found = ends[..k]
                    .iter()
                    .rev()
                    .take_while(|&&(t, _)| t >= y.start)
                    .find(|&&(_, i)| x.key(i as usize) <= y.start);
                out.unmatched += u64::from(found.is_none());
                found.map(|&(_, i)| i as usize)
            }
        };
        if let Some(row) = row {
            out.waits.push(Wait { start: y.start, end: y.end.min(e), thread: y.thread, name: y.name, row });
        }
    }
}

/// A `*MemcpyAsync` (which HTA also counts as blocking) waits for its own copy, when the copy
/// ended inside the call.
fn copy_waits(x: &Inputs, rows: &[u32], e: i64, out: &mut Vec<Wait>) {
    for i in rows.iter().map(|&i| i as usize) {
        let Some(c) = (x.at.runtime[i] != NO).then(|| x.runtime[x.at.runtime[i] as usize]) else { continue };
        if !x.c.names.get(c.name).ends_with("MemcpyAsync") {
            continue;
        }
        let (t, end) = (x.c.gpu.end(i), (c.start + c.dur).min(e));
        if c.start <= t && t <= end {
            out.push(Wait { start: c.start, end, thread: c.thread, name: c.name, row: i });
        }
    }
}
