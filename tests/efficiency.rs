//! How far from fast, end to end: an op's shapes become its kernels' FLOPs and bytes, measured
//! against the device's peaks; the trace's own counts win over the formulas; MFU per step;
//! and, on the shared real traces that record shapes, figures a GPU can reach.

mod common;
use common::{shared_traces, Trace};
use serde_json::{json, Value};
use tracesight::analysis::passes::hints::HintId;
use tracesight::report::{Bound, Efficiency, KernelWork, TraceReport, WorkSource};
use tracesight::vocab::{Bucket, Precision};

const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
const SPLITK: &str =
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)";
const REDUCE: &str = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)";
const TRITON: &str = "triton_poi_fused_add_mul_0";
const NCCL: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

/// Gives the last cpu_op named `op` these arguments (beside its External id).
fn with_args(t: &mut Trace, op: &str, args: Value) {
    let e = t.events.iter_mut().rev().find(|e| e["cat"] == "cpu_op" && e["name"] == op).expect("op");
    for (k, v) in args.as_object().unwrap() {
        e["args"][k] = v.clone();
    }
}

fn mm_args(m: i64, k: i64, n: i64) -> Value {
    json!({ "Input Dims": [[m, k], [k, n]], "Input type": ["c10::BFloat16", "c10::BFloat16"], "Concrete Inputs": ["", ""] })
}

fn kernel<'a>(e: &'a Efficiency, name: &str) -> &'a KernelWork {
    e.kernels.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("{name} not in {:?}", e.kernels))
}

/// One step on an H100: an mm (2 x 1024 x 4096 x 4096 FLOP in 200 us), an addmm that launches a
/// split-K GEMM and its reduction, an Inductor kernel with its own counts, an op whose FLOPs the
/// profiler counted, and an all-reduce.
fn step() -> TraceReport {
    step_trace().report()
}

fn step_trace() -> Trace {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.cpu = 0;
    t.span("user_annotation", "ProfilerStep#1", 0, 2_000, common::CPU_TID, None);
    t.cpu = 10;
    t.launch(&["aten::linear", "aten::mm"], GEMM, 100, 200);
    with_args(&mut t, "aten::mm", mm_args(1024, 4096, 4096));
    let addmm = json!({ "Input Dims": [[4096], [1024, 4096], [4096, 4096], [], []],
        "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"] });
    t.launch_on(&["aten::addmm"], "cudaLaunchKernel", 5, &[(SPLITK, 400, 150), (REDUCE, 560, 50)], 7);
    with_args(&mut t, "aten::addmm", addmm);
    t.launch(&["triton_poi_fused_add_mul_0"], TRITON, 700, 100);
    let k = t.events.iter_mut().rev().find(|e| e["name"] == TRITON).unwrap();
    k["args"]["kernel_flop"] = json!(1e9);
    k["args"]["kernel_num_gb"] = json!(0.25);
    t.launch(&["aten::bmm"], GEMM, 900, 100);
    with_args(
        &mut t,
        "aten::bmm",
        json!({ "Input Dims": [[8, 512, 64], [8, 64, 512]], "Input type": ["c10::BFloat16", "c10::BFloat16"], "flops": 5e9 }),
    );
    t.launch(&["record_param_comms"], NCCL, 1_100, 300);
    t
}

/// Each layer's work is its kernels' work, split as the efficiency section splits it: the
/// model holds all of it, a block holds its mm and addmm (both 2 x 1024 x 4096 x 4096 FLOP
/// in 200 + 150 + 50 us), and the all-reduce does no work.
#[test]
fn layers_get_the_work_of_their_kernels() {
    let mut t = step_trace();
    t.module("nn.Module: Model_0", 1, 1_990);
    // The mm's and the addmm's launches (CPU 17 and 65 us), not the later ones.
    t.module("nn.Module: Block_0", 5, 100);
    let r = t.report();
    let e = r.efficiency.as_ref().unwrap();
    let layer =
        |name: &str| r.layers.iter().find(|l| l.name == name).unwrap_or_else(|| panic!("{name}: {:?}", r.layers));
    let model = layer("Model_0");
    assert!((model.flops - e.flops).abs() < 1.0, "{} vs {}", model.flops, e.flops);
    assert!((model.bytes - e.bytes).abs() < 1.0);
    // Known work everywhere but the all-reduce (300 us of 900).
    assert_eq!(model.work_us, 600.0);
    let block = layer("Block_0");
    let gemm = 2.0 * 1024.0 * 4096.0 * 4096.0;
    assert!((block.flops - 2.0 * gemm).abs() < 1.0, "{}", block.flops);
    assert_eq!(block.work_us, 400.0);
    let want = 2.0 * gemm / 400e-6 / 1e12;
    assert!((block.tflops_per_s().unwrap() - want).abs() < 1e-9);
    assert_eq!(block.work_known_pct(), 100.0);
    // Without shapes or counts, no layer claims work.
    let bare = common::Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    let mut bare = bare;
    bare.module("nn.Module: Model_0", 0, 500);
    bare.cpu = 10;
    bare.launch(&["aten::mm"], GEMM, 100, 200);
    let r = bare.report();
    assert!(
        r.layers.iter().all(|l| l.flops == 0.0 && l.work_us == 0.0 && l.tflops_per_s().is_none()),
        "{:?}",
        r.layers
    );
}

#[test]
fn shapes_become_kernel_work_against_the_device_peaks() {
    let r = step();
    let e = r.efficiency.as_ref().expect("efficiency");
    let peaks = e.peaks.as_ref().expect("an H100 is in the table");
    assert!(peaks.device.contains("H100") && peaks.source.contains("nvidia.com"), "{peaks:?}");
    // aten::mm: 2 * 1024 * 4096 * 4096 FLOP in 200 us.
    let mm = e.kernels.iter().find(|k| k.name == GEMM && k.count == 2).expect("the GEMM");
    let mm_flops = 2.0 * 1024.0 * 4096.0 * 4096.0;
    // The bmm's FLOPs are the profiler's count (5e9), not the formula's.
    assert_eq!(mm.flops, mm_flops + 5e9);
    assert_eq!(mm.precision, Some(Precision::Bf16));
    assert_eq!(mm.bound, Some(Bound::Compute));
    let rate = (mm_flops + 5e9) / 300e-6 / 1e12;
    assert!((mm.tflops_per_s - rate).abs() < 1e-9 && (mm.pct_of_peak.unwrap() - rate / 989.5 * 100.0).abs() < 1e-9);
    // The addmm's FLOPs all went to its GEMM; its bytes were split by time (150 : 50).
    let gemm = kernel(e, SPLITK);
    let reduce = kernel(e, REDUCE);
    assert_eq!(gemm.flops, mm_flops);
    assert_eq!(reduce.flops, 0.0);
    assert!(gemm.split && reduce.split);
    assert!((gemm.bytes / reduce.bytes - 3.0).abs() < 1e-9);
    assert_eq!(reduce.bound, Some(Bound::Memory));
    // Inductor's own counts on the kernel.
    let triton = kernel(e, TRITON);
    assert_eq!((triton.flops, triton.bytes, triton.source), (1e9, 0.25e9, WorkSource::Inductor));
    // The all-reduce is not on the roofline; its time is said.
    assert!(e.kernels.iter().all(|k| k.bucket != Bucket::Communication));
    assert_eq!(e.coverage.communication_us, 300.0);
    assert_eq!(e.coverage.kernel_us, 600.0);
    let known: f64 = e.coverage.known_us.iter().map(|x| x.1).sum();
    assert_eq!(known, 600.0);
    // Per op, for the top ops table: the addmm's two kernels together (its whole work over their
    // 200 us), the mm alone; every top op with work has its row, named as in that table.
    let op = |n: &str| e.ops.iter().find(|o| o.name == n).unwrap_or_else(|| panic!("{n} not in {:?}", e.ops));
    let addmm = op("aten::addmm");
    assert_eq!((addmm.flops, addmm.count, addmm.time_us), (mm_flops, 2, 200.0));
    assert!((addmm.bytes - (gemm.bytes + reduce.bytes)).abs() < 1e-3);
    assert!((op("aten::mm").tflops_per_s - mm_flops / 200e-6 / 1e12).abs() < 1e-9);
    assert_eq!(op("aten::bmm").flops, 5e9);
    for row in r.top_ops.iter().filter(|o| o.name != "record_param_comms") {
        assert!(e.ops.iter().any(|o| o.name == row.name), "{} has no figures", row.name);
    }
    // MFU over the step: every FLOP (the Inductor ones, of no known precision, with the bf16).
    let total = 2.0 * mm_flops + 5e9 + 1e9;
    assert_eq!(e.flops, total);
    let step = &e.mfu[1];
    assert_eq!(step.name, "ProfilerStep#1");
    let expect = total / (step.span_us * 1e-6) / 989.5e12 * 100.0;
    assert!((step.mfu_pct.unwrap() - expect).abs() < 1e-9, "{step:?}");
}

#[test]
fn no_shapes_is_said_once_and_unknown_devices_take_the_users_peaks() {
    let mut t = Trace::new("Some Future GPU", (12, 0));
    t.launch(&["aten::mm"], GEMM, 100, 200);
    let r = t.report();
    let e = r.efficiency.as_ref().unwrap();
    assert!(e.peaks.is_none() && e.unknown_device.as_deref() == Some("Some Future GPU"));
    assert_eq!(e.coverage.unknown_us, 200.0);
    assert!(r.hints.iter().any(|h| h.id == HintId::NoShapes), "{:?}", r.hints);
    // With shapes and the user's figures, the unknown device is measured against them.
    with_args(&mut t, "aten::mm", mm_args(1024, 4096, 4096));
    let opts = tracesight::Options {
        peaks: tracesight::analysis::UserPeaks { tflops: vec![(None, 100.0)], tbps: Some(1.0) },
        ..Default::default()
    };
    let r = tracesight::analyze_reader("t.json", &t.bytes()[..], &opts, &mut |_| true).unwrap();
    let e = r.efficiency.unwrap();
    let k = kernel(&e, GEMM);
    assert_eq!(e.peaks.as_ref().unwrap().source, "given by the user");
    assert!((k.pct_of_peak.unwrap() - k.tflops_per_s).abs() < 1e-9, "100 TFLOP/s: the rate is the percent");
    assert!(!r.hints.iter().any(|h| h.id == HintId::NoShapes));
}

#[test]
fn a_kernel_far_below_its_roof_earns_a_hint_with_its_numbers() {
    // 2 * 256^3 FLOP in 500 us: 0.07 TFLOP/s on an H100, the whole span.
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.launch(&["aten::mm"], GEMM, 100, 500);
    with_args(&mut t, "aten::mm", mm_args(256, 256, 256));
    let r = t.report();
    let h = r.hints.iter().find(|h| h.id == HintId::BelowRoof).expect("below_roof");
    let k = &r.efficiency.as_ref().unwrap().kernels[0];
    assert_eq!(h.stake_us, k.recoverable_us.round());
    assert!(h.message.contains("% of") && h.evidence.iter().any(|e| e.contains("TFLOP/s")), "{h:?}");
}

/// On the shared traces that record shapes: no kernel above its roof (the old V100 trace's
/// Winograd convolutions excepted: they do fewer multiplies than the formula counts), and the
/// same model on two GPUs does the same work.
#[test]
fn real_traces_stay_under_their_roofs() {
    let Some(dir) = shared_traces() else {
        eprintln!("skipping: ../shared/traces is not here");
        return;
    };
    let read = |name: &str| {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let r = tracesight::analyze_reader(name, &bytes[..], &Default::default(), &mut |_| true).unwrap();
        r.efficiency.unwrap_or_else(|| panic!("{name}: no efficiency"))
    };
    let mut bert_flops = Vec::new();
    for name in ["h100-bert-small-flash.json.gz", "mi300x-bert-small-attn-fwd.json.gz", "mi300x-ddp-resnet18.json.gz"] {
        let e = read(name);
        assert!(e.peaks.is_some(), "{name}: device not matched");
        let known: f64 = e.coverage.known_us.iter().map(|x| x.1).sum();
        assert!(known / e.coverage.kernel_us > 0.95, "{name}: work known for {known} of {} us", e.coverage.kernel_us);
        for k in &e.kernels {
            assert!(
                !k.above_roof(),
                "{name}: {} at {:?}% of peak, {:?}% of bandwidth",
                k.name,
                k.pct_of_peak,
                k.pct_of_bandwidth
            );
        }
        let mfu = e.mfu[0].mfu_pct.unwrap();
        assert!(mfu > 0.0 && mfu < 100.0, "{name}: MFU {mfu}");
        if name.contains("bert") {
            bert_flops.push(e.flops);
        }
    }
    assert!(
        (bert_flops[0] / bert_flops[1] - 1.0).abs() < 1e-9,
        "BERT-small's FLOPs differ between GPUs: {bert_flops:?}"
    );
    let v100 = read("old-2021-resnet50-v100-memory.pt.trace.json.gz");
    for k in v100.kernels.iter().filter(|k| k.above_roof() && k.bucket == Bucket::Gemm) {
        let winograd = ["winograd", "sgemm", "fft"].iter().any(|w| k.name.to_lowercase().contains(w));
        assert!(winograd && k.split, "{} above its roof", k.name);
    }
}

#[test]
fn graph_replays_are_said_to_need_the_capture_trace() {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.launch(&["aten::mm"], GEMM, 100, 200);
    with_args(&mut t, "aten::mm", mm_args(1024, 4096, 4096));
    t.launch_on(&["vllm::decode"], "cudaGraphLaunch", 8, &[(GEMM, 400, 50), (GEMM, 460, 50)], 7);
    let r = t.report();
    let c = &r.efficiency.as_ref().unwrap().coverage;
    assert_eq!((c.graph_us, c.unmodelled_us, c.unknown_us), (100.0, 0.0, 0.0));
    let text = tracesight::text::render(&tracesight::Report {
        tool_version: String::new(),
        traces: vec![r],
        errors: vec![],
        ranks: vec![],
        job: None,
    });
    assert!(text.contains("replayed by graph launches 33.3% (per-op work needs the capture trace)"), "{text}");
}

/// One kernel of 2 ms on an H100 whose work is `flops` FLOP over `bytes` bytes (the counts
/// Inductor writes on its kernels), launched under `chain`.
fn one_kernel(kernel: &str, chain: &[&str], args: Value, flops: f64, bytes: f64) -> TraceReport {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.launch(chain, kernel, 100, 2_000);
    with_args(&mut t, chain[chain.len() - 1], args);
    let k = t.events.iter_mut().rev().find(|e| e["name"] == kernel).unwrap();
    k["args"]["kernel_flop"] = json!(flops);
    k["args"]["kernel_num_gb"] = json!(bytes / 1e9);
    t.report()
}

#[test]
fn below_roof_gives_the_compute_bound_fix_by_the_roofline_side_not_the_bucket() {
    // An Inductor kernel (elementwise bucket) at 20,000 FLOP/byte, far above the H100's bf16
    // ridge (989.5 / 3.35 = 295): compute-bound at 10% of the peak.
    let r = one_kernel(TRITON, &["aten::mm"], mm_args(64, 64, 64), 2e11, 1e7);
    let k = &r.efficiency.as_ref().unwrap().kernels[0];
    assert_eq!((k.bucket, k.bound), (Bucket::Elementwise, Some(Bound::Compute)), "{k:?}");
    let h = common::hint(&r, HintId::BelowRoof);
    assert!(h.fix.starts_with("a compute-bound kernel") && h.fix.contains("tensor cores"), "{}", h.fix);
    assert!(!h.fix.contains("memory-bound"), "{}", h.fix);
    assert!(h.message.contains("of its precision's peak"), "{}", h.message);
    let ridge = "20000 FLOP/byte against the bf16 ridge point at 295 FLOP/byte (990 TFLOP/s over 3.35 TB/s), above it";
    assert!(h.evidence.iter().any(|e| e.contains(ridge)), "{:?}", h.evidence);
    // The same kernel at 2 FLOP/byte: below the ridge, so memory-bound, and the fix says bytes.
    let r = one_kernel(TRITON, &["aten::mm"], mm_args(64, 64, 64), 2e9, 1e9);
    let k = &r.efficiency.as_ref().unwrap().kernels[0];
    assert_eq!((k.bucket, k.bound), (Bucket::Elementwise, Some(Bound::Memory)), "{k:?}");
    let h = common::hint(&r, HintId::BelowRoof);
    assert!(!h.fix.starts_with("a compute-bound kernel") && h.fix.contains("moving its bytes"), "{}", h.fix);
    assert!(h.evidence.iter().any(|e| e.contains("below it: memory-bound")), "{:?}", h.evidence);
}
