//! Event waits and stream synchronisations on the critical path, read from the trace's
//! `cuda_sync` rows (Kineto's `enable_cuda_sync_events`), with figures worked out by hand; and
//! what the path does without those rows (falls back, and says so).

mod common;
use common::*;
use serde_json::json;
use tracesight::report::{CriticalPath, PathSide, StepPath, TraceReport};

const GEMM: &str = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn";
const COPY: &str = "Memcpy HtoD (Pinned -> Device)";
const COMPUTE: i64 = 7;
const COPIES: i64 = 20;

fn cpu(t: &mut Trace, cat: &str, name: &str, ts: i64, dur: i64, args: serde_json::Value) {
    t.events.push(
        json!({ "ph": "X", "cat": cat, "name": name, "pid": 100, "tid": CPU_TID, "ts": ts, "dur": dur, "args": args }),
    );
}

/// An op (start, dur) whose call (start, dur) runs a row (start, dur) on `stream`.
fn launch(t: &mut Trace, op: (&str, i64, i64), call: (&str, i64, i64), row: (&str, i64, i64), stream: i64) {
    let (ext, corr) = (t.id(), t.id());
    cpu(t, "cpu_op", op.0, op.1, op.2, json!({ "External id": ext }));
    cpu(t, "cuda_runtime", call.0, call.1, call.2, json!({ "External id": ext, "correlation": corr }));
    let cat = if row.0.starts_with("Memcpy") { "gpu_memcpy" } else { "kernel" };
    t.events.push(json!({ "ph": "X", "cat": cat, "name": row.0, "pid": 0, "tid": stream, "ts": row.1, "dur": row.2, "args": { "correlation": corr, "device": 0, "stream": stream } }));
}

/// A runtime call with no row of its own; its correlation id comes back.
fn call(t: &mut Trace, name: &str, ts: i64, dur: i64) -> i64 {
    let corr = t.id();
    cpu(t, "cuda_runtime", name, ts, dur, json!({ "correlation": corr }));
    corr
}

/// The `cuda_sync` row Kineto writes for a call (CudaSyncActivity's args).
fn sync_row(t: &mut Trace, kind: &str, corr: i64, ts: i64, stream: i64, record: Option<(i64, i64)>) {
    let mut args = json!({ "cuda_sync_kind": kind, "stream": stream, "correlation": corr, "device": 0, "context": 1 });
    if let Some((on_stream, record_corr)) = record {
        args["wait_on_stream"] = json!(on_stream);
        args["wait_on_cuda_event_record_corr_id"] = json!(record_corr);
        args["wait_on_cuda_event_id"] = json!(1);
    }
    t.events.push(json!({ "ph": "X", "cat": "cuda_sync", "name": kind, "pid": 0, "tid": stream, "ts": ts, "dur": 1, "args": args }));
}

/// Step 0-1000 us. A copy launched at 12 runs 20-620 on the copy stream; an event recorded
/// on it at 40; the compute stream waits for it (cudaStreamWaitEvent at 50); a GEMM launched
/// at 65 on the compute stream runs 625-925; the CPU waits in cudaStreamSynchronize (compute
/// stream) 100-930. With `ids`, the trace carries the cuda_sync rows.
fn two_streams(copy: (i64, i64), ids: bool) -> Trace {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    cpu(&mut t, "user_annotation", "ProfilerStep#1", 0, 1000, json!({}));
    launch(&mut t, ("aten::copy_", 10, 20), ("cudaMemcpyAsync", 12, 5), (COPY, copy.0, copy.1), COPIES);
    let record = call(&mut t, "cudaEventRecord", 40, 2);
    let wait = call(&mut t, "cudaStreamWaitEvent", 50, 2);
    launch(&mut t, ("aten::mm", 60, 30), ("cudaLaunchKernel", 65, 5), (GEMM, 625, 300), COMPUTE);
    let sync = call(&mut t, "cudaStreamSynchronize", 100, 830);
    if ids {
        sync_row(&mut t, "Stream Wait Event", wait, 50, COMPUTE, Some((COPIES, record)));
        sync_row(&mut t, "Stream Sync", sync, 100, COMPUTE, None);
    }
    t
}

fn path(r: &TraceReport) -> (&CriticalPath, &StepPath) {
    let cp = r.critical_path.as_ref().expect("a critical path");
    assert_eq!(cp.steps.len(), 1);
    (cp, &cp.steps[0])
}

/// By hand: CPU 0-12 (12), the copy's launch delay 12-20 (8), the copy (600), the wait's gap
/// 620-625 (5), the GEMM (300), the stream sync's end at 930, CPU 930-1000 (70): 995 us, 82
/// of it CPU. The GEMM's own launch (at 65, held by the wait) carries no delay.
#[test]
fn the_compute_stream_waits_on_the_copy_and_the_path_goes_through_it() {
    let r = two_streams((20, 600), true).report();
    let (cp, s) = path(&r);
    assert_eq!((s.span_us, s.path_us), (1000.0, 995.0));
    assert_eq!((s.cpu_us, s.gpu_us, s.launch_us, s.gap_us), (82.0, 900.0, 8.0, 5.0));
    assert_eq!((s.syncs, s.event_waits), (1, 1));
    assert_eq!((cp.event_waits, cp.syncs_by_id, cp.stream_waits_unseen, cp.unmatched_syncs), (1, 1, 0, 0));
    let piece = |n: &str| s.pieces.iter().find(|p| cp.name(p.name) == n).map(|p| (p.side, p.us));
    assert_eq!(piece(COPY), Some((PathSide::Gpu, 600.0)));
    assert_eq!(piece(GEMM), Some((PathSide::Gpu, 300.0)));
    assert_eq!(piece("wait on another stream's event"), Some((PathSide::Gap, 5.0)));
}

/// The same step without the cuda_sync rows: the wait is no edge, the GEMM reads as launched
/// late (65 -> 625: 560 us of launch delay), the stream sync falls back to the row that ended
/// inside it (the GEMM); and the report says one stream wait was not seen.
#[test]
fn without_the_ids_the_wait_is_not_seen_and_the_report_says_so() {
    let r = two_streams((20, 600), false).report();
    let (cp, s) = path(&r);
    assert_eq!(s.path_us, 995.0);
    assert_eq!((s.cpu_us, s.gpu_us, s.launch_us, s.gap_us), (135.0, 300.0, 560.0, 0.0));
    assert_eq!((s.syncs, s.event_waits), (1, 0));
    assert_eq!((cp.event_waits, cp.syncs_by_id, cp.stream_waits_unseen), (0, 0, 1));
    let report =
        tracesight::Report { tool_version: String::new(), traces: vec![r], errors: vec![], ranks: vec![], job: None };
    let text = tracesight::text::render(&report);
    assert!(text.contains("1 stream wait(s) (cudaStreamWaitEvent / hipStreamWaitEvent) without"), "{text}");
}

/// Must not: a copy done (20-50) before the GEMM's launch (65) held nothing: the wait edge
/// carries no time, the GEMM's launch keeps its delay (65 -> 625).
#[test]
fn a_wait_on_a_row_already_done_holds_nothing() {
    let r = two_streams((20, 30), true).report();
    let (cp, s) = path(&r);
    assert_eq!(cp.event_waits, 1);
    assert_eq!((s.gap_us, s.event_waits), (0.0, 0));
    assert_eq!((s.launch_us, s.gpu_us), (560.0, 300.0));
}

/// Must not: a row launched on the recording stream after the record is not what the event
/// recorded (no row before it): no edge, no gap.
#[test]
fn a_row_launched_after_the_record_is_not_waited_on() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    cpu(&mut t, "user_annotation", "ProfilerStep#1", 0, 1000, json!({}));
    let record = call(&mut t, "cudaEventRecord", 5, 2);
    launch(&mut t, ("aten::copy_", 10, 20), ("cudaMemcpyAsync", 12, 5), (COPY, 20, 600), COPIES);
    let wait = call(&mut t, "cudaStreamWaitEvent", 50, 2);
    sync_row(&mut t, "Stream Wait Event", wait, 50, COMPUTE, Some((COPIES, record)));
    launch(&mut t, ("aten::mm", 60, 30), ("cudaLaunchKernel", 65, 5), (GEMM, 625, 300), COMPUTE);
    let r = t.report();
    let (cp, s) = path(&r);
    assert_eq!((cp.event_waits, s.event_waits, s.gap_us), (0, 0, 0.0));
    // Nothing holds the GEMM (65 + 560 + 300 = 925 us): the CPU's 1000 us are the path.
    assert_eq!((s.path_us, s.cpu_us), (1000.0, 1000.0));
}

/// Must not: a stream sync on the compute stream, whose last row (10-40) was done before the
/// call, did not wait, although a copy on another stream ended inside it (the fallback would
/// have taken that copy): its 830 us stay CPU time.
#[test]
fn a_stream_sync_waits_only_on_its_own_stream() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    cpu(&mut t, "user_annotation", "ProfilerStep#1", 0, 1000, json!({}));
    launch(&mut t, ("aten::copy_", 10, 20), ("cudaMemcpyAsync", 12, 5), (COPY, 20, 600), COPIES);
    launch(&mut t, ("aten::mm", 60, 30), ("cudaLaunchKernel", 65, 5), (GEMM, 72, 20), COMPUTE);
    let sync = call(&mut t, "cudaStreamSynchronize", 100, 830);
    sync_row(&mut t, "Stream Sync", sync, 100, COMPUTE, None);
    let r = t.report();
    let (cp, s) = path(&r);
    assert_eq!((cp.syncs_by_id, cp.unmatched_syncs, s.syncs), (1, 0, 0));
    assert_eq!((s.path_us, s.cpu_us), (1000.0, 1000.0));
}

/// cudaEventSynchronize waits on the row before its record (the copy, 20-620): CPU 0-12, the
/// copy's launch delay 8, the copy 600, then CPU from the sync's end (630) to 1000 (370).
#[test]
fn an_event_sync_waits_on_the_recorded_row() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    cpu(&mut t, "user_annotation", "ProfilerStep#1", 0, 1000, json!({}));
    launch(&mut t, ("aten::copy_", 10, 20), ("cudaMemcpyAsync", 12, 5), (COPY, 20, 600), COPIES);
    let record = call(&mut t, "cudaEventRecord", 40, 2);
    launch(&mut t, ("aten::mm", 60, 30), ("cudaLaunchKernel", 65, 5), (GEMM, 72, 20), COMPUTE);
    let sync = call(&mut t, "cudaEventSynchronize", 100, 530);
    sync_row(&mut t, "Event Sync", sync, 100, -1, Some((COPIES, record)));
    let r = t.report();
    let (cp, s) = path(&r);
    assert_eq!((cp.syncs_by_id, s.syncs), (1, 1));
    assert_eq!((s.path_us, s.cpu_us, s.launch_us, s.gpu_us), (990.0, 382.0, 8.0, 600.0));
}
