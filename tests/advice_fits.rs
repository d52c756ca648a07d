//! Advice that fits what ran: launch-bound judged by the CPU time per op beside the kernel
//! time, no "fuse it" for kernels Inductor fused already or for index copies, ProfilerStep
//! windows written on both the CPU and the GPU counted once.

mod common;
use common::{find_hint as find, Trace, CPU_TID};
use serde_json::json;
use tracesight::analysis::passes::hints::HintId;
use tracesight::report::TraceReport;
use tracesight::vocab::Bucket;

// ATen's eager add (aten/src/ATen/native/cuda/CUDALoops.cuh vectorized_elementwise_kernel).
const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";

/// 200 ops launched one by one, each about 27 us of CPU (the builder's op span) around a 5 us
/// launch call; each kernel runs `kernel_us`. `queued`: the kernels run back to back from
/// 100 ms on (the CPU ran far ahead), else each starts 10 us after its launch call.
fn eager_ops(kernel_us: i64, queued: bool) -> TraceReport {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.cpu = 0;
    for i in 0..200i64 {
        let gpu_ts = if queued { 100_000 + i * kernel_us } else { t.cpu + 10 };
        t.launch(&["aten::add"], ADD, gpu_ts, kernel_us);
    }
    t.report()
}

#[test]
fn launch_bound_by_cpu_time_per_op_while_the_gpu_idles() {
    // Kernels of 6 us, each longer than its 5 us launch call: the launch call alone does not
    // call this launch-bound; the 27 us of CPU per op against 6 us of kernel does.
    let r = eager_ops(6, false);
    assert_eq!(r.launch.shorter_than_launch, 0);
    let h = find(&r, HintId::LaunchBound).unwrap_or_else(|| panic!("launch_bound does not fire: {:?}", r.hints));
    let line =
        h.evidence.iter().find(|e| e.starts_with("per launching op: ")).unwrap_or_else(|| panic!("{:?}", h.evidence));
    assert!(line.contains("CPU 27 us vs kernels 6.00 us (200 ops"), "{line}");
    assert!(h.message.contains("27 us of CPU time against 6.00 us of kernel time"), "{}", h.message);
    // At stake: the idle between those kernels, which is all the GPU's idle here.
    assert!((h.stake_us - r.gpu.idle_us.round()).abs() <= 1.0, "stake {} vs idle {}", h.stake_us, r.gpu.idle_us);
    assert!(h.stake_us > 0.5 * r.gpu.span_us, "{} of {}", h.stake_us, r.gpu.span_us);
}

#[test]
fn not_launch_bound_when_kernels_outlast_their_ops_or_the_gpu_never_idles() {
    // 60 us kernels against 27 us of CPU per op: the GPU sets the pace.
    let long = eager_ops(60, false);
    assert!(find(&long, HintId::LaunchBound).is_none(), "{:?}", long.hints);
    // 6 us kernels, but queued back to back: the CPU is slower per op, yet the GPU never waits.
    let queued = eager_ops(6, true);
    assert_eq!(queued.gpu.idle_us, 0.0);
    assert!(find(&queued, HintId::LaunchBound).is_none(), "{:?}", queued.hints);
}

/// Kernels launched back to back: 10 of `main` (30 us each) under `chain`, 10 GEMMs of 20 us.
fn mix(chain: &[&str], main: &str) -> TraceReport {
    const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.cpu = 0;
    for i in 0..10i64 {
        t.launch(chain, main, i * 50, 30);
        t.launch(&["aten::mm"], GEMM, i * 50 + 30, 20);
    }
    t.report()
}

#[test]
fn no_fuse_advice_for_kernels_inductor_fused_already() {
    // Inductor's kernel names: "_".join(["triton", category[:3], fused_name, suffix])
    // (torch/_inductor/codegen/simd.py, define_kernel).
    let r = mix(&["CompiledFunction"], "triton_poi_fused_add_mul_silu_0");
    assert!(r.buckets.iter().any(|b| b.id == Bucket::Elementwise && b.pct > 50.0), "{:?}", r.buckets);
    let h = find(&r, HintId::ElementwiseShare).unwrap_or_else(|| panic!("{:?}", r.hints));
    assert!(!h.fix.starts_with("fuse") && h.fix.contains("fused already"), "{}", h.fix);
    assert!(h.message.contains("already fused"), "{}", h.message);
    assert!(h.evidence.iter().any(|e| e.starts_with("already fused by torch.compile")), "{:?}", h.evidence);
}

#[test]
fn fuse_advice_for_eager_elementwise_kernels() {
    let r = mix(&["aten::add"], ADD);
    let h = find(&r, HintId::ElementwiseShare).unwrap_or_else(|| panic!("{:?}", r.hints));
    assert!(h.fix.starts_with("fuse norm + activation"), "{}", h.fix);
    assert!(h.evidence.iter().all(|e| !e.starts_with("already fused")), "{:?}", h.evidence);
}

#[test]
fn index_copies_are_named_as_data_movement() {
    // aten/src/ATen/native/cuda/IndexKernel.cu: index_elementwise_kernel under aten::index.
    const INDEX: &str = "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, bool)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, bool)::{lambda(int)#1})";
    let r = mix(&["aten::index"], INDEX);
    let h = find(&r, HintId::MemoryShare).unwrap_or_else(|| panic!("{:?}", r.hints));
    assert!(h.fix.starts_with("most of it is index copies"), "{}", h.fix);
    assert!(
        h.evidence.iter().any(|e| e.starts_with("index copies (ATen index / gather / scatter kernels) = 300 us")),
        "{:?}",
        h.evidence
    );
    assert!(find(&r, HintId::ElementwiseShare).is_none(), "{:?}", r.hints);
}

#[test]
fn layout_copies_keep_the_layout_advice() {
    // aten/src/ATen/native/cuda/Copy.cu: direct_copy_kernel_cuda under aten::copy_.
    const COPY: &str = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})";
    let r = mix(&["aten::contiguous", "aten::copy_"], COPY);
    let h = find(&r, HintId::MemoryShare).unwrap_or_else(|| panic!("{:?}", r.hints));
    assert!(h.fix.starts_with("check how often permute"), "{}", h.fix);
    assert!(h.evidence.iter().all(|e| !e.starts_with("index copies")), "{:?}", h.evidence);
}

/// Three ProfilerSteps as Kineto writes them: a `user_annotation` span on the CPU around the
/// step's launches and a `gpu_user_annotation` span of the same name on the GPU around its
/// kernels (libkineto ActivityType GPU_USER_ANNOTATION; torch.profiler's step annotations).
#[test]
fn profiler_steps_written_on_cpu_and_gpu_count_once() {
    const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    for n in 0..3i64 {
        let (cpu, gpu) = (n * 1_000, n * 1_000 + 50);
        let ext = t.id();
        t.span("user_annotation", &format!("ProfilerStep#{n}"), cpu, 400, CPU_TID, Some(ext));
        t.cpu = cpu + 10;
        t.launch(&["aten::mm"], GEMM, gpu, 100);
        t.launch(&["aten::mm"], GEMM, gpu + 300, 100);
        let ext = t.id();
        t.events.push(json!({ "ph": "X", "cat": "gpu_user_annotation", "name": format!("ProfilerStep#{n}"), "pid": 0, "tid": 7, "ts": gpu, "dur": 400, "args": { "External id": ext, "device": 0, "stream": 7 } }));
    }
    let r = t.report();
    common::assert_invariants(&r);
    let names: Vec<&str> = r.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]);
    assert_eq!(r.steps.iter().map(|s| s.kernel_count).sum::<u64>(), 6);
    // Each step: 400 us from its first kernel to its last, 200 us of it idle.
    assert!(r.steps.iter().all(|s| s.span_us == 400.0 && s.idle_us == 200.0), "{:?}", r.steps);
    assert_eq!(r.gpu.kernel_time_us, 600.0, "the GPU-side step spans are not GPU time");
    let d = r
        .diagnostics
        .iter()
        .find(|d| d.id == tracesight::analysis::passes::diagnostics::DiagnosticId::GpuUserAnnotations);
    assert!(
        d.is_some_and(
            |d| d.count == 3 && d.message.contains("3 of them are ProfilerStep spans: steps are taken from the CPU's")
        ),
        "{:?}",
        r.diagnostics
    );
}

#[test]
fn steps_whose_rows_overlap_do_not_count_a_gap_twice() {
    // Step 0 launches a kernel at GPU 0-10 us on stream 7 and one at 90-100 us on stream 20;
    // step 1 launches one at 10-90 us on stream 7. The GPU never idles; step 0's own rows
    // leave 80 us between them, all of it step 1's work.
    const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    for (n, kernels) in [(0i64, vec![(0i64, 10i64, 7i64), (90, 10, 20)]), (1, vec![(10, 80, 7)])] {
        let cpu = -1_000 + n * 300;
        let ext = t.id();
        t.span("user_annotation", &format!("ProfilerStep#{n}"), cpu, 250, CPU_TID, Some(ext));
        t.cpu = cpu + 10;
        for (ts, dur, stream) in kernels {
            t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, ts, dur)], stream);
        }
    }
    let r = t.report();
    assert_eq!(r.gpu.idle_us, 0.0);
    assert_eq!(r.steps.len(), 2);
    assert_eq!((r.steps[0].span_us, r.steps[0].busy_us), (100.0, 20.0));
    assert_eq!(r.steps.iter().map(|s| s.idle_us).sum::<f64>(), 0.0, "{:?}", r.steps);
    common::assert_invariants(&r);
}

fn whole(t: &TraceReport) -> tracesight::Report {
    tracesight::Report {
        tool_version: String::new(),
        traces: vec![t.clone()],
        errors: vec![],
        ranks: vec![],
        job: None,
    }
}

/// 300 us of GEMM and 100 us of add, with the occupancy the profiler wrote for each.
fn occupancy(gemm: i64, add: i64) -> TraceReport {
    const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.cpu = 0;
    t.launch(&["aten::mm"], GEMM, 0, 300);
    t.launch(&["aten::add"], ADD, 300, 100);
    let mut kernels = t.events.iter_mut().filter(|e| e["cat"] == "kernel");
    kernels.next().unwrap()["args"]["est. achieved occupancy %"] = gemm.into();
    kernels.next().unwrap()["args"]["est. achieved occupancy %"] = add.into();
    t.report()
}

#[test]
fn occupancy_written_as_zero_is_shown_as_unknown_with_its_time() {
    // Kineto writes 0 where CUPTI had no figure: left out, and its time said.
    let some = occupancy(40, 0);
    let line = "achieved occupancy 40.0% (leaving out 100 us of kernels written as 0: unknown)";
    assert!(tracesight::text::render(&whole(&some)).contains(line));
    assert!(tracesight::export::markdown::render(&whole(&some)).contains(line));
    // Every kernel's written as 0: unknown, not 0%.
    let none = occupancy(0, 0);
    assert_eq!((none.gpu.achieved_occupancy_pct, none.gpu.occupancy_unknown_us), (None, 400.0));
    for out in [tracesight::text::render(&whole(&none)), tracesight::export::markdown::render(&whole(&none))] {
        assert!(out.contains("achieved occupancy unknown (written as 0 for every kernel, 400 us)"), "{out}");
        assert!(!out.contains("occupancy 0"), "{out}");
    }
    // Known for every kernel: the plain average, nothing left out.
    let all = occupancy(40, 20);
    let text = tracesight::text::render(&whole(&all));
    assert!(text.contains("achieved occupancy 35.0%") && !text.contains("leaving out"), "{text}");
}

/// PyTorch's SDPA running cuDNN attention on `device`; `types`: the SDPA op's recorded
/// "Input type" (record_shapes=True), if any.
fn cudnn_sdpa(device: &str, cc: (i64, i64), types: Option<&[&str]>) -> TraceReport {
    // aten/src/ATen/native/transformers/cuda/attention.cu launches cuDNN's generated SDPA
    // kernels (cudnn_generated_fort_native_sdpa_*) under _scaled_dot_product_cudnn_attention.
    const CUDNN: &str = "cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_6_64x64x64_4x1x1_kernel0_0";
    const GEMM: &str =
        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage3_warpsize2x2x1_tensor16x8x16_kernel";
    let mut t = Trace::new(device, cc);
    t.cpu = 0;
    t.launch(&["aten::scaled_dot_product_attention", "aten::_scaled_dot_product_cudnn_attention"], CUDNN, 0, 300);
    t.launch(&["aten::mm"], GEMM, 300, 100);
    if let Some(types) = types {
        let op = t.events.iter_mut().find(|e| e["name"] == "aten::scaled_dot_product_attention").unwrap();
        op["args"]["Input type"] = json!(types);
    }
    t.report()
}

#[test]
fn cudnn_attention_off_hopper_is_worth_comparing_with_flash() {
    let r = cudnn_sdpa("NVIDIA A100-SXM4-80GB", (8, 0), None);
    assert_eq!(r.attention.backend, tracesight::vocab::Backend::Cudnn);
    assert!(r.attention.fix.is_none(), "named, not marked for replacing: {:?}", r.attention.fix);
    let h = find(&r, HintId::AttentionNotFlash).unwrap_or_else(|| panic!("{:?}", r.hints));
    assert_eq!(h.severity, tracesight::vocab::Severity::Info);
    assert!(h.message.contains("cuDNN backend") && h.fix.starts_with("compare:"), "{} / {}", h.message, h.fix);
    assert!(h.evidence.iter().any(|e| e.contains("compute capability 8.0")), "{:?}", h.evidence);
}

#[test]
fn cudnn_attention_is_only_named_on_hopper_or_where_flash_cannot_run() {
    let hopper = cudnn_sdpa("NVIDIA H100 80GB HBM3", (9, 0), None);
    assert!(find(&hopper, HintId::AttentionNotFlash).is_none(), "{:?}", hopper.hints);
    // fp32 inputs: flash cannot take them, so there is nothing to compare.
    let fp32 = cudnn_sdpa("NVIDIA A100-SXM4-80GB", (8, 0), Some(&["float", "float", "float"]));
    assert!(fp32.attention.not_flash_reasons.iter().any(|r| r.contains("(fp32)")), "{:?}", fp32.attention);
    assert!(find(&fp32, HintId::AttentionNotFlash).is_none(), "{:?}", fp32.hints);
}

/// Hand-written attention (q @ k^T, softmax, @ v between projections, as transformers'
/// `eager_attention_forward` runs it) inside the `nn.Module` spans `modules` (outermost first).
fn eager_attention_in(modules: &[&str]) -> TraceReport {
    const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
    // aten/src/ATen/native/cuda/PersistentSoftmax.cuh.
    const SOFTMAX: &str = "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)";
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    let start = t.cpu;
    let mut g = 0;
    for (chain, kernel, dur) in [
        (&["aten::linear", "aten::addmm"][..], GEMM, 30),
        (&["aten::matmul", "aten::bmm"], GEMM, 40),
        (&["aten::softmax", "aten::_softmax"], SOFTMAX, 20),
        (&["aten::matmul", "aten::bmm"], GEMM, 40),
        (&["aten::linear", "aten::addmm"], GEMM, 30),
    ] {
        t.launch(chain, kernel, g, dur);
        g += dur;
    }
    let end = t.cpu;
    for (depth, m) in modules.iter().enumerate() {
        t.module(m, start - 10 + depth as i64, end + 10 - depth as i64);
    }
    t.report()
}

#[test]
fn attn_implementation_sdpa_only_for_hugging_face_models_with_an_sdpa_path() {
    // LlamaPreTrainedModel._supports_sdpa = True (transformers, models/llama/modeling_llama.py).
    let r = eager_attention_in(&[
        "nn.Module: LlamaForCausalLM_0",
        "nn.Module: LlamaModel_0",
        "nn.Module: LlamaAttention_0",
    ]);
    assert_eq!(r.attention.backend, tracesight::vocab::Backend::Eager);
    let hf = r.attention.hf_model.as_ref().unwrap_or_else(|| panic!("not recognised: {:?}", r.attention));
    assert_eq!((hf.class.as_str(), hf.family.as_str(), hf.sdpa), ("LlamaForCausalLM", "Llama", true));
    let h = common::hint(&r, HintId::EagerAttention);
    assert!(
        h.fix.contains("Hugging Face LlamaForCausalLM") && h.fix.contains("attn_implementation=\"sdpa\""),
        "{}",
        h.fix
    );
    assert_eq!(r.attention.fix.as_deref(), Some(h.fix.as_str()));
}

#[test]
fn no_attn_implementation_sdpa_for_a_model_without_one_or_one_not_recognised() {
    // GptOssPreTrainedModel._supports_sdpa = False (models/gpt_oss/modeling_gpt_oss.py).
    let r = eager_attention_in(&["nn.Module: GptOssForCausalLM_0", "nn.Module: GptOssAttention_0"]);
    assert!(r.attention.hf_model.as_ref().is_some_and(|m| m.family == "GptOss" && !m.sdpa), "{:?}", r.attention);
    let h = common::hint(&r, HintId::EagerAttention);
    assert!(h.fix.contains("no SDPA path") && h.fix.contains("flex_attention"), "{}", h.fix);
    assert!(!h.fix.contains("attn_implementation=\"sdpa\")"), "{}", h.fix);
    // A module of no known family (and none at all): the generic fix, no Hugging Face line.
    for modules in [&["nn.Module: MyTransformer_0", "nn.Module: SelfAttention_0"][..], &[]] {
        let r = eager_attention_in(modules);
        assert!(r.attention.hf_model.is_none(), "{:?}", r.attention.hf_model);
        let h = common::hint(&r, HintId::EagerAttention);
        assert!(h.fix.starts_with("replace the hand-written") && !h.fix.contains("attn_implementation"), "{}", h.fix);
        assert!(!h.fix.contains("Hugging Face"), "{}", h.fix);
    }
}

#[test]
fn launch_bound_judged_per_step() {
    // Step 0: 100 ops of ~27 us CPU each launching 6 us kernels as they come (the GPU idles
    // between them); step 1: 100 ops launching 60 us kernels (the GPU sets the pace).
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.cpu = 0;
    for (n, kernel_us) in [(0i64, 6i64), (1, 60)] {
        let start = t.cpu;
        let ext = t.id();
        let first = t.events.len();
        for _ in 0..100 {
            let gpu_ts = t.cpu.max(
                t.events
                    .iter()
                    .rev()
                    .find(|e| e["cat"] == "kernel")
                    .map_or(0, |e| e["ts"].as_i64().unwrap() + e["dur"].as_i64().unwrap()),
            ) + 10;
            t.launch(&["aten::add"], ADD, gpu_ts, kernel_us);
        }
        let end =
            t.events[first..].iter().map(|e| e["ts"].as_i64().unwrap() + e["dur"].as_i64().unwrap()).max().unwrap();
        t.span("user_annotation", &format!("ProfilerStep#{n}"), start, end - start, CPU_TID, Some(ext));
        t.cpu = end + 10;
    }
    let r = t.report();
    common::assert_invariants(&r);
    assert_eq!(r.steps.len(), 2, "{:?}", r.steps);
    let (a, b) = (r.steps[0].launch.as_ref().unwrap(), r.steps[1].launch.as_ref().unwrap());
    assert_eq!((a.ops, b.ops), (100, 100));
    assert!(a.launch_bound && a.cpu_per_op_us > a.kernel_per_op_us, "{a:?}");
    assert!(a.idle_us > 0.5 * r.steps[0].span_us && a.idle_us <= r.steps[0].idle_us + 1e-6, "{a:?} {:?}", r.steps[0]);
    assert!(!b.launch_bound && b.kernel_per_op_us > b.cpu_per_op_us, "{b:?}");
    // The steps' stakes are parts of their idle, and of the trace's: no gap counted twice.
    assert!(b.idle_us <= r.steps[1].idle_us + 1e-6, "{b:?} {:?}", r.steps[1]);
    assert!(a.idle_us + b.idle_us <= r.gpu.idle_us + 1e-6);
    // Shown: the steps table, the hint's evidence, the JSON.
    let text = tracesight::text::render(&whole(&r));
    let table = &text[text.find(" Steps:").unwrap_or_else(|| panic!("{text}"))..];
    let row = |name: &str| table.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("{text}"));
    assert!(row("ProfilerStep#0").ends_with(&format!("yes ({})", tracesight::vocab::fmt_us(a.idle_us))), "{text}");
    assert!(row("ProfilerStep#1").contains("  no ("), "{text}");
    // The trace as a whole is not launch-bound (27 us of CPU per op against 33 us of kernel):
    // the step is, and its idle is what the hint puts at stake.
    let h = common::hint(&r, HintId::LaunchBound);
    assert!(h.message.starts_with("1 of 2 steps are launch-bound"), "{}", h.message);
    assert_eq!(h.stake_us, a.idle_us.round());
    assert!(
        h.evidence.iter().any(|e| e.starts_with("launch-bound steps: 1 of 2 (ProfilerStep#0: ")),
        "{:?}",
        h.evidence
    );
    let json = serde_json::to_value(&r.steps[0]).unwrap();
    assert_eq!(json["launch"]["launch_bound"], true, "{json}");
}
