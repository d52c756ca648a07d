//! Advice that fits the evidence: graph replays are not told to use graphs, one long gap is
//! one-time work, the idle causes split the idle, one tiny optimizer kernel is not training.

mod common;
use common::{hint, Trace};
use tracesight::analysis::passes::hints::HintId;
use tracesight::report::TraceReport;

const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";

/// Five decode steps 400 us apart, each 10 kernels of 20 us: replayed by one graph launch
/// each (`graphs`), else launched one by one. The GPU idles about half the span, in equal gaps.
fn decode_steps(graphs: bool) -> TraceReport {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    for step in 0..5i64 {
        let base = step * 400;
        t.cpu = base;
        let kernels: Vec<(&str, i64, i64)> =
            (0..10).map(|k| (if k % 2 == 0 { GEMM } else { ADD }, base + 10 + k * 20, 20)).collect();
        if graphs {
            t.launch_on(&["model_forward"], "cudaGraphLaunch", 8, &kernels, 7);
        } else {
            for (k, ts, dur) in kernels {
                t.launch(&["aten::mm"], k, ts, dur);
            }
        }
    }
    t.report()
}

#[test]
fn graph_replays_are_not_told_to_capture_graphs() {
    let r = decode_steps(true);
    assert_eq!((r.launch.graph_kernels, r.launch.graph_launches), (50, 5));
    let h = hint(&r, HintId::GpuIdle);
    assert!(h.fix.starts_with("graphs already replay the kernels"), "{}", h.fix);
    assert!(!h.fix.contains("CUDA graphs") && !h.fix.contains("reduce-overhead"), "{}", h.fix);
    let line = h.evidence.iter().find(|e| e.starts_with("graphs: ")).expect("a graphs line");
    assert!(line.contains("50 of 50 kernels replayed by 5 graph launches"), "{line}");
    assert!(!h.fix.starts_with("one gap"), "equal gaps are the steady state: {}", h.fix);
}

#[test]
fn eager_decode_is_told_to_capture_graphs() {
    let r = decode_steps(false);
    assert_eq!(r.launch.graph_kernels, 0);
    let h = hint(&r, HintId::GpuIdle);
    assert!(h.fix.contains("CUDA graphs"), "{}", h.fix);
    assert!(h.evidence.iter().all(|e| !e.starts_with("graphs: ")), "{:?}", h.evidence);
}

#[test]
fn one_long_gap_is_one_time_work_with_the_window_to_narrow() {
    // Two kernels, 5 ms apart, then steady work with short gaps: the 5 ms gap is most of the idle.
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.cpu = 0;
    t.launch(&["aten::mm"], GEMM, 0, 100);
    for i in 0..20i64 {
        let ts = 5_000 + i * 160;
        t.cpu = ts - 30;
        t.launch(&["aten::mm"], GEMM, ts, 100);
    }
    let r = t.report();
    let h = hint(&r, HintId::GpuIdle);
    assert!(h.fix.starts_with("one gap holds"), "{}", h.fix);
    assert!(h.fix.contains("--range") && h.fix.contains("schedule("), "{}", h.fix);
    assert!(h.evidence.iter().any(|e| e.starts_with("largest gap = ")), "{:?}", h.evidence);
}

#[test]
fn idle_causes_split_the_idle_when_streams_overlap() {
    // Stream 7 and stream 20 run at once with gaps of their own; the GPU as a whole idles
    // only where both do (600-1000 us).
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.cpu = 0;
    t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, 0, 300)], 7);
    t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, 200, 400)], 20);
    t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, 350, 100)], 7);
    t.cpu = 990;
    t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, 1_000, 100)], 7);
    t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, 1_050, 100)], 20);
    let r = t.report();
    let i = &r.idle;
    assert!((r.gpu.idle_us - 400.0).abs() < 1e-9, "idle {}", r.gpu.idle_us);
    let causes = i.host_wait_us + i.kernel_wait_us + i.other_us;
    assert!((causes - r.gpu.idle_us).abs() < 1e-9, "causes {causes} vs idle {}", r.gpu.idle_us);
    // The one device gap ends with a row launched at ~1000 us, after the GPU went idle at 600.
    assert!((i.host_wait_us - 400.0).abs() < 1e-9, "{i:?}");
    let per_stream: f64 = i.streams.iter().map(|s| s.host_wait_us + s.kernel_wait_us + s.other_us).sum();
    assert!(per_stream > r.gpu.idle_us, "each stream's own gaps overlap the other's work: {per_stream}");
}

#[test]
fn one_tiny_optimizer_kernel_does_not_make_a_training_run() {
    let run = |optimizer_us: i64| {
        let mut t = Trace::new("NVIDIA A100", (8, 0));
        t.cpu = 0;
        t.launch(&["aten::mm"], GEMM, 0, 1_000);
        t.launch(&["Optimizer.step#AdamW.step", "aten::add_"], ADD, 1_000, optimizer_us);
        t.report()
    };
    let tiny = run(3);
    assert!(tiny.buckets.iter().any(|b| b.id == tracesight::vocab::Bucket::Optimizer), "{:?}", tiny.buckets);
    assert!(!tiny.training, "3 us of optimizer under 1 ms of GEMM");
    assert!(run(200).training, "a sixth of the GPU time in the optimizer");
}

#[test]
fn occupancy_leaves_out_the_kernels_written_as_zero() {
    // 300 us at 40%, 100 us at 0 (the profiler had no figure): 40%, with 100 us said unknown.
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.cpu = 0;
    t.launch(&["aten::mm"], GEMM, 0, 300);
    t.launch(&["aten::add"], ADD, 300, 100);
    let mut kernels = t.events.iter_mut().filter(|e| e["cat"] == "kernel");
    kernels.next().unwrap()["args"]["est. achieved occupancy %"] = 40.into();
    kernels.next().unwrap()["args"]["est. achieved occupancy %"] = 0.into();
    let r = t.report();
    assert_eq!(r.gpu.achieved_occupancy_pct, Some(40.0));
    assert_eq!(r.gpu.occupancy_unknown_us, 100.0);
}

#[test]
fn the_gpu_time_says_how_it_was_launched() {
    let graphs = decode_steps(true);
    let c = graphs.launch_coverage;
    assert_eq!((c.graph_us, c.op_us), (1000.0, 0.0));
    assert!(tracesight::text::render(&report_of(&graphs)).contains("GPU time replayed by graph launches 100.0%"));
    let eager = decode_steps(false).launch_coverage;
    assert_eq!((eager.op_us, eager.graph_us), (1000.0, 0.0));
    // Rows that carry only an External id (no correlation, no launch call): linked through it,
    // and the diagnostic says so.
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.launch(&["aten::mm"], GEMM, 100, 50);
    let ext = t.events.iter().find(|e| e["cat"] == "cpu_op").unwrap()["args"]["External id"].clone();
    t.events.retain(|e| e["cat"] != "cuda_runtime");
    let k = t.events.iter_mut().find(|e| e["cat"] == "kernel").unwrap();
    k["args"] = serde_json::json!({ "External id": ext, "device": 0, "stream": 7 });
    let r = t.report();
    assert_eq!(r.launch_coverage.external_only_us, 50.0);
    assert_eq!(r.top_kernels[0].op.as_deref(), Some("aten::mm"));
    let d = r
        .diagnostics
        .iter()
        .find(|d| d.id == tracesight::analysis::passes::diagnostics::DiagnosticId::GpuRowWithoutCorrelation);
    assert!(d.is_some_and(|d| d.message.contains("through their own External id")), "{:?}", r.diagnostics);
}

fn report_of(t: &TraceReport) -> tracesight::Report {
    tracesight::Report {
        tool_version: String::new(),
        traces: vec![t.clone()],
        errors: vec![],
        ranks: vec![],
        job: None,
    }
}
