//! CUDA/HIP graph replays: grouped by graph without a capture trace, and mapped to the ops that
//! captured them with one (by graph node order, by kernel-name sequence, partly).

mod common;

use common::{shared_traces, Trace, CPU_TID};
use serde_json::json;
use tracesight::analysis::{analyze_with_capture, read_capture};
use tracesight::report::{MatchMethod, TraceReport};
use tracesight::vocab::Bucket;
use tracesight::{Options, Report};

const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
const NORM: &str = "void at::native::layer_norm_kernel<float>(long, float, float const*, float*)";
const MUL: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int)";

/// The ops around each captured launch (outermost first) and the kernel it launched.
const CAPTURED: &[(&[&str], &str)] = &[
    (&["model.forward", "aten::layer_norm"], NORM),
    // A GEMM of the math attention backend: attention by its op, not by its name.
    (&["model.forward", "aten::_scaled_dot_product_attention_math", "aten::bmm"], GEMM),
    (&["model.forward", "aten::linear", "aten::addmm"], GEMM),
    (&["model.forward", "aten::add"], ADD),
];

fn runtime(t: &mut Trace, name: &str, ts: i64, dur: i64, args: serde_json::Value) {
    let corr = t.id();
    let mut a = args;
    a["correlation"] = corr.into();
    t.events.push(json!({ "ph": "X", "cat": "cuda_runtime", "name": name, "pid": 100, "tid": CPU_TID, "ts": ts, "dur": dur, "args": a }));
}

/// A capture trace: BeginCapture, one launch call per entry under its ops (nothing runs on the
/// GPU during capture), EndCapture. `named`: the calls say their kernel (ROCm), else not (CUDA).
fn capture(kernels: &[(&[&str], &str)], named: bool) -> Trace {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    runtime(&mut t, "cudaStreamBeginCapture", 900, 5, json!({}));
    for (chain, kernel) in kernels {
        let c = t.cpu;
        for (i, op) in chain.iter().enumerate() {
            let ext = t.id();
            t.span("cpu_op", op, c + i as i64, 30 - 2 * i as i64, CPU_TID, Some(ext));
        }
        let args = if named { json!({ "kernel": kernel }) } else { json!({}) };
        runtime(&mut t, "cudaLaunchKernel", c + 10, 5, args);
        t.cpu = c + 40;
    }
    let end = t.cpu + 5;
    runtime(&mut t, "cudaStreamEndCapture", end, 5, json!({}));
    t
}

/// A replay trace: each launch replays `kernels` (name, us) back to back under `annotation`,
/// with graph id and node ids (capture order) when `graph_id` is given.
fn replay(launches: &[(&str, &[(&str, i64)])], graph_id: Option<i64>) -> Trace {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    let mut gpu = 10_000;
    for (annotation, kernels) in launches {
        let c = t.cpu;
        let ext = t.id();
        t.span("user_annotation", annotation, c, 50, CPU_TID, Some(ext));
        let corr = t.id();
        t.events.push(json!({ "ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 100, "tid": CPU_TID, "ts": c + 5, "dur": 20, "args": { "correlation": corr, "External id": ext } }));
        for (node, (k, dur)) in kernels.iter().enumerate() {
            let mut args = json!({ "correlation": corr, "device": 0, "stream": 7 });
            if let Some(g) = graph_id {
                (args["graph id"], args["graph node id"]) = (g.into(), (500 + node as i64).into());
            }
            t.events.push(json!({ "ph": "X", "cat": "kernel", "name": k, "pid": 0, "tid": 7, "ts": gpu, "dur": dur, "args": args }));
            gpu += dur;
        }
        gpu += 100;
        t.cpu = c + 1_000;
    }
    t
}

fn with_capture(replay: &Trace, capture: &Trace) -> TraceReport {
    let opts = Options::default();
    let k = read_capture("capture.json", &capture.bytes()[..], &opts).unwrap();
    analyze_with_capture("replay.json", &replay.bytes()[..], k, &opts, &mut |_| true).unwrap()
}

fn text(t: &TraceReport) -> String {
    let r = Report { tool_version: String::new(), traces: vec![t.clone()], errors: vec![], ranks: vec![], job: None };
    tracesight::text::render(&r)
}

fn bucket_us(t: &TraceReport, b: Bucket) -> f64 {
    t.buckets.iter().filter(|x| x.id == b).map(|x| x.time_us).sum()
}

fn op_of(t: &TraceReport, kernel_start: &str) -> Vec<String> {
    let mut ops: Vec<String> =
        t.top_kernels.iter().filter(|k| k.name.starts_with(kernel_start)).filter_map(|k| k.op.clone()).collect();
    ops.sort();
    ops.dedup();
    ops
}

/// The four captured kernels, each taking 10, 20, 30, 40 us.
const SEQ: &[(&str, i64)] = &[(NORM, 10), (GEMM, 20), (GEMM, 30), (ADD, 40)];

#[test]
fn a_replay_without_capture_is_grouped_by_graph_and_says_it_needs_the_capture() {
    let other: &[(&str, i64)] = &[(MUL, 5), (MUL, 5)];
    let r = replay(&[("decode", SEQ), ("decode", SEQ), ("prefill", other), ("decode", SEQ)], None).report();
    let g = r.graphs.as_ref().expect("graph replays");
    assert_eq!((g.launches, g.graphs.len(), g.more_graphs), (4, 2, 0));
    assert_eq!(g.replayed_us, 3.0 * 100.0 + 10.0);
    let (a, b) = (&g.graphs[0], &g.graphs[1]);
    assert_eq!((a.label.as_str(), a.launches, a.rows_min, a.rows_max, a.gpu_us), ("G1", 3, 4, 4, 300.0));
    assert_eq!((a.launched_under.as_deref(), a.launched_under_count), (Some("decode"), 3));
    assert_eq!((b.launches, b.rows_min, b.gpu_us, b.launched_under.as_deref()), (1, 2, 10.0, Some("prefill")));
    assert_ne!(a.signature, b.signature);
    assert!(a.first_kernels[0].contains("layer_norm"), "{:?}", a.first_kernels);
    assert!(g.capture.is_none() && a.method.is_none() && a.matched_us == 0.0);
    let out = text(&r);
    assert!(out.contains("Graph replays: 4 launches of 2 graphs"), "{out}");
    assert!(out.contains("G1: 3 replays x 4 rows, 300 us, launched under decode (3x)"), "{out}");
    assert!(out.contains("needs the capture trace (--capture FILE)"), "{out}");
    assert_eq!(r.launch_coverage.graph_us, 310.0);
    // The math-attention GEMM has only the annotation: a GEMM by its name.
    assert_eq!(bucket_us(&r, Bucket::Attention), 0.0);
    assert_eq!(op_of(&r, "sm90_xmma"), ["decode"]);
    // The same group without the signature: by graph id when the rows carry one.
    let by_id = replay(&[("decode", SEQ), ("decode", &SEQ[..3])], Some(9)).report();
    let g = by_id.graphs.unwrap();
    assert_eq!((g.graphs.len(), g.graphs[0].graph_id, g.graphs[0].rows_min, g.graphs[0].rows_max), (1, Some(9), 3, 4));
}

#[test]
fn a_capture_maps_replayed_kernels_by_name_sequence() {
    let r = with_capture(&replay(&[("decode", SEQ), ("decode", SEQ)], None), &capture(CAPTURED, true));
    let k = r.graphs.as_ref().and_then(|g| g.capture.clone()).expect("a capture summary");
    assert_eq!((k.captured_graphs, k.captured_launches, k.named_launches), (1, 4, 4));
    assert_eq!((k.matched_rows, k.replayed_rows), (8, 8));
    assert_eq!((k.matched_us, k.replayed_us, k.by_sequence_us, k.by_node_order_us), (200.0, 200.0, 200.0, 0.0));
    assert_eq!(k.matched_to_op_us, 200.0);
    assert_eq!(r.graphs.as_ref().unwrap().graphs[0].method, Some(MatchMethod::KernelSequence));
    // Each kernel takes the op that captured it: the math-attention GEMM is attention now.
    assert_eq!(op_of(&r, "void at::native::layer_norm"), ["aten::layer_norm"]);
    assert_eq!(op_of(&r, "sm90_xmma"), ["aten::addmm", "aten::bmm"]);
    assert_eq!(bucket_us(&r, Bucket::Attention), 2.0 * 20.0);
    assert_eq!(bucket_us(&r, Bucket::Gemm), 2.0 * 30.0);
    let c = r.launch_coverage;
    assert_eq!((c.graph_matched_us, c.graph_us, c.op_us), (200.0, 0.0, 0.0));
    let out = text(&r);
    assert!(out.contains("GPU time replayed, matched to the capture 100.0%"), "{out}");
    assert!(out.contains("matched 8 of 8 replayed rows, 200 us of 200 us (100.0%"), "{out}");
    // The op around the launch is still told.
    assert!(out.contains("launched under decode (2x), 200 us matched by kernel-name sequence"), "{out}");
}

#[test]
fn graph_node_ids_map_a_capture_that_names_no_kernels() {
    // CUDA: the calls name no kernel, so only node order can map them; the rows ran in another
    // order than their nodes (node ids say the capture order).
    let mut t = replay(&[("decode", SEQ)], Some(3));
    let rows: Vec<usize> = (0..t.events.len()).filter(|&i| t.events[i]["cat"] == "kernel").collect();
    let (first, last) = (rows[0], rows[3]);
    let ts = |t: &Trace, i: usize| t.events[i]["ts"].as_i64().unwrap();
    let (a, b) = (ts(&t, first), ts(&t, last));
    (t.events[first]["ts"], t.events[last]["ts"]) = (b.into(), a.into());
    let r = with_capture(&t, &capture(CAPTURED, false));
    let k = r.graphs.as_ref().and_then(|g| g.capture.clone()).unwrap();
    assert_eq!((k.named_launches, k.matched_rows, k.by_node_order_us, k.by_sequence_us), (0, 4, 100.0, 0.0));
    assert_eq!(op_of(&r, "void at::native::layer_norm"), ["aten::layer_norm"]);
    assert_eq!(
        op_of(&r, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"),
        ["aten::add"]
    );
    assert_eq!(bucket_us(&r, Bucket::Attention), 20.0);
    // Without node ids nothing can be aligned: the replay stays with its launch's op, and says so.
    let none = with_capture(&replay(&[("decode", SEQ)], None), &capture(CAPTURED, false));
    let k = none.graphs.as_ref().and_then(|g| g.capture.clone()).unwrap();
    assert_eq!((k.matched_rows, k.matched_us, k.replayed_us), (0, 0.0, 100.0));
    assert_eq!(none.launch_coverage.graph_us, 100.0);
    assert!(text(&none).contains("matched 0 of 4 replayed rows"), "{}", text(&none));
}

#[test]
fn a_capture_that_disagrees_in_part_maps_what_agrees_and_says_how_much() {
    // The replay ran MUL where the capture launched the bmm GEMM (another capture of the step).
    let seq: &[(&str, i64)] = &[(NORM, 10), (MUL, 20), (GEMM, 30), (ADD, 40)];
    let r = with_capture(&replay(&[("decode", seq)], None), &capture(CAPTURED, true));
    let k = r.graphs.as_ref().and_then(|g| g.capture.clone()).unwrap();
    assert_eq!((k.matched_rows, k.replayed_rows, k.matched_us, k.replayed_us), (3, 4, 80.0, 100.0));
    assert!((k.matched_pct() - 80.0).abs() < 1e-9);
    let c = r.launch_coverage;
    assert_eq!((c.graph_matched_us, c.graph_us), (80.0, 20.0));
    assert_eq!(op_of(&r, "sm90_xmma"), ["aten::addmm"]);
    assert_eq!(op_of(&r, "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor"), ["decode"]);
    let out = text(&r);
    assert!(out.contains("replayed, matched to the capture 80.0%, replayed, unmatched 20.0%"), "{out}");
    assert!(out.contains("matched 3 of 4 replayed rows, 80 us of 100 us (80.0%"), "{out}");
    // JSON keeps the split; Markdown says it too.
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["launch_coverage"]["graph_matched_us"], 80.0);
    assert_eq!(json["graphs"]["capture"]["matched_rows"], 3);
    let report = Report { tool_version: String::new(), traces: vec![r], errors: vec![], ranks: vec![], job: None };
    assert!(tracesight::export::markdown::render(&report).contains("- Capture capture.json: 1 captured graph"));
}

#[test]
fn an_eager_trace_of_the_step_serves_as_the_capture() {
    let mut eager = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    for (i, (chain, kernel)) in CAPTURED.iter().enumerate() {
        eager.launch(chain, kernel, 100 * i as i64, 10);
    }
    let r = with_capture(&replay(&[("decode", SEQ)], None), &eager);
    let k = r.graphs.as_ref().and_then(|g| g.capture.clone()).unwrap();
    assert_eq!((k.captured_graphs, k.captured_launches, k.matched_rows), (0, 4, 4));
    assert_eq!(bucket_us(&r, Bucket::Attention), 20.0);
    // A capture beside a trace that replays nothing: said, not dropped.
    let r = with_capture(&eager, &capture(CAPTURED, true));
    let g = r.graphs.expect("the capture is reported");
    assert_eq!((g.launches, g.capture.map(|k| (k.captured_launches, k.replayed_rows))), (0, Some((4, 0))));
}

#[test]
fn a_capture_that_is_not_a_trace_is_refused_with_a_reason() {
    let e = read_capture("capture.json", &b"hello"[..], &Options::default()).err().expect("not JSON");
    assert!(e.message.contains("not JSON"), "{}", e.message);
}

#[test]
fn the_real_vllm_pair_maps_the_replay_to_captured_ops() {
    let Some(dir) = shared_traces() else { return };
    let dir = dir.join("vllm-graph-pair-mi300");
    let (replay, capture) = (dir.join("vllm-decode-replay.json.gz"), dir.join("vllm-decode-capture.pt.trace.json.gz"));
    if !replay.exists() || !capture.exists() {
        eprintln!("SKIP: the vLLM graph pair is absent");
        return;
    }
    let opts = Options::default();
    let alone =
        tracesight::analyze_reader("replay", std::fs::File::open(&replay).unwrap(), &opts, &mut |_| true).unwrap();
    let k = read_capture("capture", std::fs::File::open(&capture).unwrap(), &opts).unwrap();
    let r = analyze_with_capture("replay", std::fs::File::open(&replay).unwrap(), k, &opts, &mut |_| true).unwrap();
    let g = alone.graphs.as_ref().unwrap();
    assert_eq!((g.launches, g.graphs.len(), g.graphs[0].rows_min), (1, 1, 421));
    let m = r.graphs.as_ref().and_then(|g| g.capture.clone()).unwrap();
    let share = m.matched_to_op_us / m.replayed_us * 100.0;
    eprintln!(
        "vLLM pair: {} of {} replayed rows matched, {:.1}% of replayed GPU time mapped to a captured op",
        m.matched_rows, m.replayed_rows, share
    );
    assert_eq!((m.captured_graphs, m.captured_launches, m.matched_rows, m.replayed_rows), (1, 421, 421, 421));
    assert!(share > 99.0, "{share}");
    // Alone, the replayed kernels hang off the annotation; with the capture, off their ops.
    let op_of_top = |t: &TraceReport| t.top_kernels[0].op.clone().unwrap_or_default();
    assert!(op_of_top(&alone).starts_with("execute_32"), "{}", op_of_top(&alone));
    assert_eq!(op_of_top(&r), "vllm::moe_forward");
    assert!(r.launch_coverage.graph_matched_us > 0.96 * r.launch_coverage.total_us());
    assert_eq!(alone.gpu.kernel_time_us, r.gpu.kernel_time_us);
    // The captured ops' shapes give the replayed GEMMs their work; the rest is named by op.
    let cov = |t: &TraceReport| t.efficiency.as_ref().unwrap().coverage.clone();
    let (before, after) = (cov(&alone), cov(&r));
    assert!(after.known_total_us() > 4.0 * before.known_total_us(), "{before:?} {after:?}");
    assert_eq!((before.graph_us > 10_000.0, after.graph_us), (true, 0.0));
    common::assert_invariants(&r);
}

#[test]
fn the_cli_takes_the_capture_beside_one_replay() {
    let dir = std::env::temp_dir().join(format!("tracesight-graphs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (rp, cp) = (dir.join("replay.json"), dir.join("capture.json"));
    std::fs::write(&rp, replay(&[("decode", SEQ)], None).bytes()).unwrap();
    std::fs::write(&cp, capture(CAPTURED, true).bytes()).unwrap();
    let run = |args: &[&std::path::Path]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_tracesight")).args(args).output().unwrap()
    };
    let flag = std::path::Path::new("--capture");
    let ok = run(&[flag, &cp, &rp]);
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(out.contains("Capture capture.json: 1 captured graph (4 launches, 4 named); matched 4 of 4"), "{out}");
    let two = run(&[flag, &cp, &rp, &rp]);
    assert_eq!(two.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&two.stderr).contains("exactly one replay trace (2 given)"));
    let missing = run(&[flag, &dir.join("absent.json"), &rp]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("capture trace"));
    let _ = std::fs::remove_dir_all(&dir);
}
