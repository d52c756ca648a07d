//! Labels on synthetic traces with known answers: precedence under fused ops, checked
//! attribution, graph launches, hand-written attention, communication of expert parallelism,
//! and every hint on a trace where it must fire and one where it must not.

mod common;
use common::{Trace, CPU_TID};
use serde_json::json;
use tracesight::analysis::passes::diagnostics::DiagnosticId;
use tracesight::analysis::passes::hints::HintId;
use tracesight::analysis::rules::taxonomy::{Backend, Bucket};
use tracesight::report::TraceReport;
use tracesight::{Options, Range};

fn share(r: &TraceReport, b: Bucket) -> f64 {
    r.buckets.iter().find(|x| x.id == b).map(|x| x.time_us).unwrap_or(0.0)
}

fn kernel_bucket(r: &TraceReport, needle: &str) -> Vec<Bucket> {
    r.top_kernels.iter().filter(|k| k.name.contains(needle)).map(|k| k.bucket).collect()
}

fn fired(r: &TraceReport, id: HintId) -> bool {
    r.hints.iter().any(|h| h.id == id)
}

const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)";
const SOFTMAX: &str = "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)";

#[test]
fn kernels_with_an_identity_keep_it_under_a_fused_attention_function() {
    let mut t = Trace::new("NVIDIA H800", (9, 0));
    let f = "FlashAttnFuncFp8";
    t.launch(&[f], "sm90_xmma_gemm_e4m3e4m3_bf16f32_f32_tn_n_tilesize128x128x128", 0, 100);
    t.launch(&[f], "void vllm::dynamic_per_token_scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*, float*, c10::BFloat16 const*, float const*, int)", 100, 20);
    t.launch(&[f], "void vllm::rotary_embedding_kernel<c10::BFloat16, c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)", 120, 10);
    t.launch(&[f], "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*)", 130, 15);
    t.launch(&[f], "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t> >(flash::Flash_fwd_params)", 150, 200);
    t.launch(&[f], ADD, 350, 5);
    let r = t.report();
    assert_eq!(share(&r, Bucket::Gemm), 100.0);
    assert_eq!(share(&r, Bucket::Quantization), 20.0);
    assert_eq!(share(&r, Bucket::Rope), 10.0);
    assert_eq!(share(&r, Bucket::Elementwise), 15.0);
    // The flash kernel, and the neutral add the Function launched.
    assert_eq!(share(&r, Bucket::Attention), 205.0);
    assert_eq!(r.attention.backend, Backend::FlashAttn);
}

#[test]
fn sdpa_math_backend_keeps_its_gemms_and_softmax_as_attention() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    let sdpa = ["aten::scaled_dot_product_attention", "aten::_scaled_dot_product_attention_math"];
    t.launch(&[sdpa[0], sdpa[1], "aten::bmm"], GEMM, 0, 50);
    t.launch(&[sdpa[0], sdpa[1], "aten::_softmax"], SOFTMAX, 50, 20);
    t.launch(&[sdpa[0], sdpa[1], "aten::bmm"], GEMM, 70, 50);
    let r = t.report();
    assert_eq!(share(&r, Bucket::Attention), 120.0);
    assert_eq!(r.attention.backend, Backend::Math);
    assert!(fired(&r, HintId::AttentionNotFlash));
    assert!(!fired(&r, HintId::EagerAttention));
}

/// A ViT-style attention block written by hand: q/k/v projections, q @ k^T, scale, softmax,
/// @ v, output projection.
fn hand_written_attention(with_softmax: bool) -> TraceReport {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    let start = t.cpu;
    let mut g = 0;
    let mut k = |t: &mut Trace, chain: &[&str], kernel: &str, dur: i64| {
        t.launch(chain, kernel, g, dur);
        g += dur;
    };
    for _ in 0..3 {
        k(&mut t, &["aten::linear", "aten::addmm"], GEMM, 30);
    }
    k(&mut t, &["aten::matmul", "aten::bmm"], GEMM, 40);
    k(&mut t, &["aten::div"], ADD, 10);
    if with_softmax {
        k(&mut t, &["aten::softmax", "aten::_softmax"], SOFTMAX, 20);
    }
    k(&mut t, &["aten::matmul", "aten::bmm"], GEMM, 40);
    k(&mut t, &["aten::linear", "aten::addmm"], GEMM, 30);
    let end = t.cpu;
    t.module("nn.Module: ViTSelfAttention_0", start - 1, end);
    t.report()
}

#[test]
fn hand_written_attention_is_attention_with_backend_eager() {
    let r = hand_written_attention(true);
    // bmm + div + softmax + bmm; the four projections stay GEMM.
    assert_eq!(share(&r, Bucket::Attention), 110.0);
    assert_eq!(share(&r, Bucket::Gemm), 120.0);
    assert_eq!(r.attention.backend, Backend::Eager);
    assert_eq!(r.attention.evidence[0].name, "nn.Module: ViTSelfAttention_0");
    assert!(r.attention.fix.as_deref().unwrap().contains("scaled_dot_product_attention"));
    let h = r.hints.iter().find(|h| h.id == HintId::EagerAttention).expect("eager hint");
    assert!(h.evidence.iter().any(|e| e.contains("ViTSelfAttention")), "{:?}", h.evidence);
    // Without a softmax between them, two batched matmuls are not attention.
    let r = hand_written_attention(false);
    assert_eq!(share(&r, Bucket::Attention), 0.0);
    assert_eq!(r.attention.backend, Backend::None);
}

#[test]
fn external_id_that_names_an_unrelated_op_is_not_trusted() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    // An op on another thread, much later, carries the External id the launch names.
    t.events.push(json!({ "ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 100, "tid": 99, "ts": 7_000_000, "dur": 3, "args": { "External id": 4242 } }));
    t.span("cpu_op", "aten::mm", 100, 50, CPU_TID, Some(7));
    t.events.push(json!({ "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": CPU_TID, "ts": 110, "dur": 5, "args": { "correlation": 4242, "External id": 4242 } }));
    t.events.push(json!({ "ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 200, "dur": 40, "args": { "correlation": 4242, "device": 0, "stream": 7 } }));
    let r = t.report();
    assert_eq!(r.top_ops[0].name, "aten::mm");
    assert!(!r.top_ops.iter().any(|o| o.name == "aten::empty"));
    let d = r.diagnostics.iter().find(|d| d.id == DiagnosticId::ExternalIdMismatch).expect("mismatch diagnostic");
    assert_eq!(d.count, 1);
}

#[test]
fn an_op_ending_where_the_launch_starts_is_not_its_parent() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.span("cpu_op", "Optimizer.step#AdamW.step", 100, 10, CPU_TID, None);
    t.span("cpu_op", "aten::add", 110, 10, CPU_TID, None);
    t.events.push(json!({ "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": CPU_TID, "ts": 110, "dur": 5, "args": { "correlation": 5 } }));
    t.events.push(json!({ "ph": "X", "cat": "kernel", "name": ADD, "pid": 0, "tid": 7, "ts": 200, "dur": 40, "args": { "correlation": 5, "device": 0, "stream": 7 } }));
    let r = t.report();
    assert_eq!(share(&r, Bucket::Optimizer), 0.0);
    assert_eq!(share(&r, Bucket::Elementwise), 40.0);
    assert_eq!(r.top_kernels[0].op.as_deref(), Some("aten::add"));
}

#[test]
fn graph_launches_are_not_launch_bound() {
    // 200 kernels of 2 us replayed by one 50 us graph launch.
    let mut t = Trace::new("AMD Instinct MI300X", (9, 4));
    let kernels: Vec<(String, i64, i64)> =
        (0..200).map(|i| (format!("kernel_unified_attention_2d_{}", i % 3), i * 3, 2)).collect();
    let refs: Vec<(&str, i64, i64)> = kernels.iter().map(|(n, a, b)| (n.as_str(), *a, *b)).collect();
    t.launch_on(&["vllm::unified_attention_with_output"], "hipGraphLaunch", 50, &refs, 7);
    let r = t.report();
    assert_eq!(r.launch.graph_kernels, 200);
    assert!(!fired(&r, HintId::LaunchBound), "{:?}", r.hints);
    // The same kernels launched one by one, each call longer than its kernel: launch-bound.
    let mut t = Trace::new("AMD Instinct MI300X", (9, 4));
    for i in 0..200 {
        t.launch_on(&["aten::add"], "hipLaunchKernel", 10, &[(ADD, i * 30, 2)], 7);
    }
    let r = t.report();
    assert!(fired(&r, HintId::LaunchBound));
}

#[test]
fn expert_parallel_dispatch_and_combine_are_communication() {
    let mut t = Trace::new("NVIDIA H800", (9, 0));
    t.launch_on(
        &["DeepEPDispatch"],
        "cudaLaunchKernel",
        5,
        &[(
            "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, ncclDevComm_t)",
            0,
            100,
        )],
        20,
    );
    t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, 10, 200)], 7);
    t.launch_on(
        &["DeepEPCombine"],
        "cudaLaunchKernel",
        5,
        &[("void deep_ep::intranode::combine<__nv_bfloat16, 8, 768>(int4*, float*, int4 const*)", 150, 50)],
        20,
    );
    let r = t.report();
    assert_eq!(share(&r, Bucket::Communication), 150.0);
    assert_eq!(r.gpu.comm_us, 150.0);
    // 100 + 50 us of communication, 140 us of it under the GEMM.
    assert!((r.gpu.overlap_pct - 140.0 / 150.0 * 100.0).abs() < 1e-9, "{}", r.gpu.overlap_pct);
}

#[test]
fn a_kernel_in_several_buckets_has_a_row_per_bucket() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.launch(&["aten::add"], ADD, 0, 10);
    t.launch(&["Optimizer.step#Adam.step", "aten::add"], ADD, 10, 30);
    let r = t.report();
    let mut b = kernel_bucket(&r, "CUDAFunctor_add");
    b.sort();
    assert_eq!(b, [Bucket::Elementwise, Bucket::Optimizer]);
}

#[test]
fn mangled_names_are_shown_demangled() {
    let mut t = Trace::new("AMD Instinct MI300X", (9, 4));
    t.launch(
        &["aiter::rmsnorm2d_fwd_with_add"],
        "_ZN5aiter24add_rmsnorm_quant_kernelIN3c108BFloat16ELi256ELi8EEEvPT_PKS3_S6_PKfS8_fii",
        0,
        10,
    );
    let r = t.report();
    let k = &r.top_kernels[0];
    assert!(k.name.starts_with("void aiter::add_rmsnorm_quant_kernel<"), "{}", k.name);
    assert_eq!(k.short, "aiter::add_rmsnorm_quant_kernel<…>");
    assert_eq!(k.bucket, Bucket::Elementwise);
}

// ---- hints: each fires on one trace and stays quiet on another ----

fn busy_trace(device: &str, cc: (i64, i64), kernels: &[(&[&str], &str, i64)]) -> TraceReport {
    busy_trace_in_steps(device, cc, kernels, 0)
}

/// The same, inside `steps` ProfilerStep spans that cover the whole CPU side (0: none).
fn busy_trace_in_steps(device: &str, cc: (i64, i64), kernels: &[(&[&str], &str, i64)], steps: i64) -> TraceReport {
    let mut t = Trace::new(device, cc);
    let mut g = 0;
    for (chain, k, dur) in kernels {
        t.launch(chain, k, g, *dur);
        g += dur;
    }
    let end = t.cpu + 10;
    for s in 0..steps {
        t.span("user_annotation", &format!("ProfilerStep#{s}"), s * end / steps, end / steps, CPU_TID, None);
    }
    t.report()
}

#[test]
fn hint_gpu_idle() {
    let quiet = busy_trace("NVIDIA A100", (8, 0), &[(&["aten::mm"], GEMM, 100), (&["aten::mm"], GEMM, 100)]);
    assert!(!fired(&quiet, HintId::GpuIdle));
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.launch(&["aten::mm"], GEMM, 0, 100);
    t.launch(&["aten::mm"], GEMM, 1_000, 100);
    let r = t.report();
    let h = r.hints.iter().find(|h| h.id == HintId::GpuIdle).unwrap();
    assert!(h.evidence.iter().any(|e| e == "idle = 900 us"), "{:?}", h.evidence);
}

#[test]
fn hint_collective_share_fits_training_or_inference() {
    let nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    let inference = busy_trace("NVIDIA H100", (9, 0), &[(&["aten::mm"], GEMM, 100), (&["vllm::all_reduce"], nccl, 50)]);
    let h = inference.hints.iter().find(|h| h.id == HintId::CollectiveShare).unwrap();
    assert!(!inference.training);
    assert!(h.fix.starts_with("inference") && !h.fix.contains("no_sync"), "{}", h.fix);
    let training = busy_trace(
        "NVIDIA H100",
        (9, 0),
        &[
            (&["aten::mm"], GEMM, 100),
            (&["autograd::engine::evaluate_function: MmBackward0", "aten::mm"], GEMM, 100),
            (&["record_param_comms"], nccl, 80),
        ],
    );
    assert!(training.training);
    let h = training.hints.iter().find(|h| h.id == HintId::CollectiveShare).unwrap();
    // No gradient accumulation seen, no all-to-all: neither no_sync() nor expert advice, and
    // no claim that sharding cuts the bytes.
    assert!(h.fix.contains("bucket_cap_mb") && !h.fix.contains("no_sync"), "{}", h.fix);
    assert!(!h.fix.contains("expert") && !h.fix.contains("ZeRO"), "{}", h.fix);
    // Four loss backward passes in one step: accumulation, so no_sync() is advised.
    let add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
    let mut work: Vec<(&[&str], &str, i64)> = vec![
        (&["aten::mm"], GEMM, 100),
        (&["autograd::engine::evaluate_function: MmBackward0", "aten::mm"], GEMM, 100),
        (&["record_param_comms"], nccl, 80),
        (&["Optimizer.step#AdamW.step", "aten::add_"], add, 5),
    ];
    work.extend((0..4).map(|_| (&["aten::nll_loss_backward"][..], add, 2)));
    let accumulating = busy_trace_in_steps("NVIDIA H100", (9, 0), &work, 1);
    let h = accumulating.hints.iter().find(|h| h.id == HintId::CollectiveShare).unwrap();
    assert!(h.fix.starts_with("gradients are accumulated") && h.fix.contains("no_sync()"), "{}", h.fix);
    let quiet = busy_trace("NVIDIA H100", (9, 0), &[(&["aten::mm"], GEMM, 1000), (&["record_param_comms"], nccl, 50)]);
    assert!(!fired(&quiet, HintId::CollectiveShare));
}

#[test]
fn hint_host_copies_and_layout_copies_are_told_apart() {
    let pageable = "Memcpy HtoD (Pageable -> Device)";
    let r =
        busy_trace("NVIDIA A100", (8, 0), &[(&["aten::mm"], GEMM, 100), (&["aten::to", "aten::copy_"], pageable, 60)]);
    let h = r.hints.iter().find(|h| h.id == HintId::MemcpyShare).expect("host copies");
    assert!(h.fix.contains("pin_memory"), "{}", h.fix);
    assert!(!fired(&r, HintId::MemoryShare), "host copies are not a layout problem: {:?}", r.hints);
    let transpose = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 128, 1>(int)";
    let r = busy_trace("NVIDIA A100", (8, 0), &[(&["aten::mm"], GEMM, 100), (&["aten::cat"], transpose, 30)]);
    assert!(fired(&r, HintId::MemoryShare));
    assert!(!fired(&r, HintId::MemcpyShare));
}

#[test]
fn hint_no_tensor_cores_fits_the_gpu() {
    let sgemm = "volta_sgemm_128x64_nn";
    let a100 = busy_trace("NVIDIA A100-SXM4-80GB", (8, 0), &[(&["aten::mm"], sgemm, 100)]);
    let h = a100.hints.iter().find(|h| h.id == HintId::NoTensorCores).unwrap();
    assert!(h.fix.contains("allow_tf32"), "{}", h.fix);
    let v100 = busy_trace("Tesla V100-SXM2-16GB", (7, 0), &[(&["aten::mm"], sgemm, 100)]);
    let h = v100.hints.iter().find(|h| h.id == HintId::NoTensorCores).unwrap();
    assert!(h.fix.contains("float16") && !h.fix.contains("allow_tf32"), "{}", h.fix);
    // No tensor cores on Pascal: nothing to advise.
    let p100 = busy_trace("Quadro GP100", (6, 0), &[(&["aten::mm"], sgemm, 100)]);
    assert!(!fired(&p100, HintId::NoTensorCores));
    // Matrix-vector kernels are SIMT by shape, not by precision.
    let gemv = busy_trace(
        "NVIDIA A100",
        (8, 0),
        &[(
            &["aten::mm"],
            "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false>(float)",
            100,
        )],
    );
    assert!(!fired(&gemv, HintId::NoTensorCores));
    let tc = busy_trace("NVIDIA A100", (8, 0), &[(&["aten::mm"], GEMM, 100)]);
    assert!(!fired(&tc, HintId::NoTensorCores));
}

#[test]
fn hint_dataloader_without_profiler_steps() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.span("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 10, 500, CPU_TID, None);
    t.cpu = 600;
    t.launch(&["aten::mm"], GEMM, 0, 100);
    let r = t.report();
    assert!(r.steps.is_empty());
    let h = r.hints.iter().find(|h| h.id == HintId::Dataloader).expect("data loader hint");
    assert!(h.message.contains("traced CPU time"), "{}", h.message);
    let quiet = busy_trace("NVIDIA A100", (8, 0), &[(&["aten::mm"], GEMM, 100)]);
    assert!(!fired(&quiet, HintId::Dataloader));
}

#[test]
fn hint_elementwise_share_and_core_compute() {
    let r = busy_trace("NVIDIA A100", (8, 0), &[(&["aten::mm"], GEMM, 30), (&["aten::add"], ADD, 70)]);
    assert!(fired(&r, HintId::ElementwiseShare));
    assert!(fired(&r, HintId::CoreComputeLow));
    let r = busy_trace("NVIDIA A100", (8, 0), &[(&["aten::mm"], GEMM, 95), (&["aten::add"], ADD, 5)]);
    assert!(!fired(&r, HintId::ElementwiseShare));
    assert!(!fired(&r, HintId::CoreComputeLow));
}

#[test]
fn hint_exposed_communication() {
    let nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    let exposed = busy_trace("NVIDIA H100", (9, 0), &[(&["aten::mm"], GEMM, 100), (&["record_param_comms"], nccl, 40)]);
    assert!(fired(&exposed, HintId::ExposedComm));
    let mut t = Trace::new("NVIDIA H100", (9, 0));
    t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, 0, 100)], 7);
    t.launch_on(&["record_param_comms"], "cudaLaunchKernel", 5, &[(nccl, 10, 40)], 20);
    let hidden = t.report();
    assert!(!fired(&hidden, HintId::ExposedComm));
}

#[test]
fn hint_host_sync() {
    // The sync (CPU 100-900 us) falls in the GPU's gap (100-1000 us): it kept the GPU idle.
    let r = Trace::call_in_gpu_gap("cudaDeviceSynchronize", GEMM).report();
    assert!(fired(&r, HintId::HostSync), "{:?}", r.hints.iter().map(|h| h.id).collect::<Vec<_>>());
    let quiet = busy_trace("NVIDIA A100", (8, 0), &[(&["aten::mm"], GEMM, 100)]);
    assert!(!fired(&quiet, HintId::HostSync));
}

// ---- why the GPU waits, by layer, memory ----

#[test]
fn idle_gaps_are_classified_by_cause() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    // Kernel 1 ends at 100; kernel 2 launched (on the CPU) long before, runs at 120: a 20 us
    // kernel wait. Kernel 3's launch call starts at CPU time 2_000, after kernel 2 ended
    // (at 220): a host wait of 2_000 - 220 = 1_780 us until it runs at 2_010... the gap is
    // 2_010 - 220 = 1_790 us.
    t.cpu = 0;
    t.launch(&["aten::mm"], GEMM, 0, 100);
    t.launch(&["aten::mm"], GEMM, 120, 100);
    t.span("cpu_op", "aten::item", 300, 1_600, CPU_TID, None);
    t.span("cuda_runtime", "cudaStreamSynchronize", 400, 1_000, CPU_TID, None);
    t.cpu = 1_990;
    t.launch(&["aten::mm"], GEMM, 2_010, 100);
    // A gap of 500 us whose launch came early: other (waiting on something else).
    t.cpu = 2_100;
    t.launch(&["aten::mm"], GEMM, 2_610, 100);
    let r = t.report();
    let i = &r.idle;
    assert_eq!(i.gaps, 3);
    assert_eq!(i.kernel_wait_us, 20.0);
    assert_eq!(i.host_wait_us, 1_790.0);
    assert_eq!(i.other_us, 500.0);
    assert_eq!(i.host_wait_us + i.kernel_wait_us + i.other_us, r.gpu.idle_us);
    // The sync call overlapped 1_000 us of the GPU's idle time.
    assert_eq!((i.syncs[0].name.as_str(), i.syncs[0].time_us), ("cudaStreamSynchronize", 1_000.0));
}

/// The idle test's trace: kernels at 0-100, 120-220, 2_010-2_110 and 2_610-2_710 us.
fn four_kernels() -> Trace {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.cpu = 0;
    t.launch(&["aten::mm"], GEMM, 0, 100);
    t.launch(&["aten::mm"], GEMM, 120, 100);
    t.cpu = 1_990;
    t.launch(&["aten::mm"], GEMM, 2_010, 100);
    t.cpu = 2_100;
    t.launch(&["aten::mm"], GEMM, 2_610, 100);
    t
}

#[test]
fn timeline_bins_hold_the_known_busy_and_idle_time() {
    let r = four_kernels().report();
    let tl = r.timeline.as_ref().expect("a timeline");
    assert_eq!((tl.start_ns, tl.end_ns), (0, 2_710_000));
    // 2_710 us in at most 240 bins: 11_292 ns each (rounded up), 240 bins.
    assert_eq!((tl.bin_ns, tl.lanes[0].bins.len()), (11_292, 240));
    let lane = &tl.lanes[0];
    assert_eq!((lane.device, lane.stream, lane.busy_us), (0, 7, 400.0));
    let sum = |f: fn(&tracesight::report::LaneBin) -> i64| lane.bins.iter().map(f).sum::<i64>();
    assert_eq!((sum(|b| b.host_wait), sum(|b| b.kernel_wait), sum(|b| b.other_wait)), (1_790_000, 20_000, 500_000));
    // The first bin is all GEMM; the bin holding 1_000 us is all host wait.
    assert_eq!(lane.bins[0].busy.iter().collect::<Vec<_>>(), vec![(&Bucket::Gemm, &11_292)]);
    assert_eq!(tl.names[lane.bins[0].top.unwrap() as usize], GEMM);
    let at_1ms = &lane.bins[(1_000_000 / tl.bin_ns) as usize];
    assert_eq!((at_1ms.busy_ns(), at_1ms.host_wait, at_1ms.idle_ns()), (0, 11_292, 11_292));
    common::assert_timeline(&r);
}

#[test]
fn a_range_clips_rows_and_every_table_follows() {
    let t = four_kernels();
    // 50 us .. 2_050 us after the first row: half of kernel 1, kernel 2, 40 us of kernel 3.
    let opts = Options { window: Some(Range::parse_ms("0.05..2.05").unwrap()), ..Options::default() };
    let r = tracesight::analyze_slice("range.json", &t.bytes(), &opts).unwrap();
    assert_eq!(r.gpu.kernel_count, 3);
    assert_eq!(r.gpu.kernel_time_us, 190.0);
    assert_eq!(r.buckets[0].time_us, 190.0);
    assert_eq!(r.top_kernels[0].time_us, 190.0);
    assert_eq!(r.window.map(|w| (w.start_ns, w.end_ns, w.origin_ns)), Some((50_000, 2_050_000, 0)));
    let tl = r.timeline.as_ref().unwrap();
    assert_eq!((tl.start_ns, tl.end_ns), (50_000, 2_050_000));
    assert_eq!(tl.lanes[0].busy_us, 190.0);
    // Idle inside the range: the 20 us kernel wait and the 1_790 us host wait.
    assert_eq!(r.idle.kernel_wait_us + r.idle.host_wait_us, 1_810.0);
    // The report says which range it covers, in the text too.
    let both = tracesight::combine(vec![Ok(r.clone())]);
    assert!(tracesight::text::render(&both).contains("range: 50 us .. 2.05 ms"));
    assert!(tracesight::export::markdown::render(&both).contains("**Range:** 50 us – 2.05 ms after the first GPU row"));
    // A range with nothing in it is a report with no GPU rows, not an error.
    let empty = Options { window: Some(Range::parse_ms("5..6").unwrap()), ..Options::default() };
    let r = tracesight::analyze_slice("range.json", &t.bytes(), &empty).unwrap();
    assert_eq!((r.gpu.kernel_count, r.timeline.is_none()), (0, true));
}

#[test]
fn range_syntax() {
    let ns = |t: &str| match Range::parse_ms(t) {
        Ok(Range::FromFirstRow { start_ns, end_ns }) => Ok((start_ns, end_ns)),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e),
    };
    assert_eq!(ns("120..135.5"), Ok((120_000_000, 135_500_000)));
    assert_eq!(ns("1ms..2ms"), Ok((1_000_000, 2_000_000)));
    assert_eq!(ns("..50"), Ok((0, 50_000_000)));
    assert_eq!(ns("100.."), Ok((100_000_000, i64::MAX)));
    for bad in ["", "12", "a..b", "5..3", "-1..2", "NaN..2", "1..inf"] {
        assert!(ns(bad).is_err(), "{bad} accepted");
    }
}

#[test]
fn timeline_size_is_bounded_on_a_long_many_stream_trace() {
    use tracesight::analysis::passes::timeline::{BINS, MAX_LANES};
    // 40 streams, 200_000 kernels over 2 s: only the 16 busiest streams are drawn.
    let mut events = String::from("{\"traceEvents\":[");
    for i in 0..200_000i64 {
        let stream = i % 40;
        // Stream s runs kernels of (s + 1) us: higher streams are busier.
        let _ = std::fmt::Write::write_fmt(&mut events, format_args!(
            "{}{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k{}\",\"pid\":0,\"tid\":{stream},\"ts\":{},\"dur\":{},\"args\":{{\"device\":0,\"stream\":{stream}}}}}",
            if i == 0 { "" } else { "," }, i % 97, i * 10, stream + 1));
    }
    // 1_000 steps of 2 ms on the CPU: more than the timeline marks.
    for s in 0..1_000i64 {
        let _ = std::fmt::Write::write_fmt(&mut events, format_args!(
            ",{{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#{s}\",\"pid\":1,\"tid\":1,\"ts\":{},\"dur\":2000}}",
            s * 2000));
    }
    events.push_str("]}");
    let r = tracesight::analyze_slice("long.json", events.as_bytes(), &Options::default()).unwrap();
    let tl = r.timeline.as_ref().unwrap();
    assert_eq!((tl.lanes.len(), tl.hidden_lanes), (MAX_LANES, 24));
    assert_eq!(tl.lanes.iter().map(|l| l.stream).collect::<Vec<_>>(), (24..40).collect::<Vec<_>>());
    assert!(tl.lanes.iter().all(|l| l.bins.len() == BINS));
    let json = serde_json::to_string(tl).unwrap();
    assert!(json.len() < 400_000, "timeline JSON is {} bytes", json.len());
    assert_eq!(r.steps.len(), 1_000);
    assert!(tl.steps.len() <= tracesight::analysis::passes::timeline::MAX_STEP_MARKS);
    assert_eq!(tl.steps.len() as u32 + tl.hidden_steps, 1_000);
    assert_eq!(
        (tl.steps[0].name.as_str(), tl.steps.last().unwrap().name.as_str()),
        ("ProfilerStep#0", "ProfilerStep#999")
    );
    common::assert_timeline(&r);
}

#[test]
fn layers_place_backward_time_in_the_forward_layer() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    let start = t.cpu;
    t.launch(&["aten::linear", "aten::addmm"], GEMM, 0, 100);
    let mid = t.cpu;
    t.launch(&["aten::gelu"], ADD, 100, 10);
    let end = t.cpu;
    t.module("nn.Module: Block_0", start - 1, end);
    t.module("nn.Module: Linear_0", start, mid);
    // The forward addmm carries sequence number 7; its backward (on another thread) too.
    for e in t.events.iter_mut() {
        if e["name"] == "aten::addmm" {
            e["args"]["Sequence number"] = json!(7);
        }
    }
    let bw = t.cpu + 100;
    t.events.push(json!({ "ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", "pid": 100, "tid": 2, "ts": bw, "dur": 50, "args": { "Sequence number": 7 } }));
    t.events
        .push(json!({ "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 2, "ts": bw + 5, "dur": 30 }));
    t.events.push(json!({ "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 2, "ts": bw + 10, "dur": 5, "args": { "correlation": 900 } }));
    t.events.push(json!({ "ph": "X", "cat": "kernel", "name": GEMM, "pid": 0, "tid": 7, "ts": 500, "dur": 200, "args": { "correlation": 900, "device": 0, "stream": 7 } }));
    let r = t.report();
    let node =
        |n: &str| r.layers.iter().find(|l| l.name == n).unwrap_or_else(|| panic!("no layer {n}: {:?}", r.layers));
    assert_eq!((node("Block_0").forward_us, node("Block_0").backward_us, node("Block_0").depth), (110.0, 200.0, 0));
    assert_eq!((node("Linear_0").forward_us, node("Linear_0").backward_us, node("Linear_0").depth), (100.0, 200.0, 1));
    assert_eq!(r.layers[0].name, "Block_0");
}

#[test]
fn memory_peak_and_the_ops_holding_it() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.launch(&["aten::mm"], GEMM, 0, 100);
    let mem = |ts: i64, addr: i64, bytes: i64, total: i64| {
        json!({ "ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": CPU_TID, "ts": ts,
                "args": { "Device Type": 1, "Device Id": 0, "Addr": addr, "Bytes": bytes, "Total Allocated": total, "Total Reserved": 4096 } })
    };
    t.span("cpu_op", "aten::linear", 5_000, 100, CPU_TID, None);
    t.span("cpu_op", "aten::empty", 5_010, 5, CPU_TID, None);
    t.events.push(mem(5_012, 1, 1000, 1000));
    t.span("cpu_op", "aten::softmax", 5_200, 100, CPU_TID, None);
    t.events.push(mem(5_210, 2, 500, 1500));
    t.events.push(mem(5_220, 1, -1000, 500));
    t.events.push(mem(5_230, 3, 200, 700));
    let r = t.report();
    let m = r.memory.as_ref().expect("memory events");
    assert_eq!(m.events, 4);
    let d = &m.devices[0];
    assert_eq!((d.device, d.peak_allocated_bytes, d.peak_at_us, d.peak_reserved_bytes), (0, 1500, 198.0, Some(4096)));
    assert!(d.live_at_peak && !d.relative);
    // At the peak both blocks are live: linear's (via aten::empty) and softmax's.
    assert_eq!(d.top_ops, [("aten::linear".to_string(), 1000), ("aten::softmax".to_string(), 500)]);
}

#[test]
fn no_memory_events_no_memory_view() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.launch(&["aten::mm"], GEMM, 0, 100);
    assert!(t.report().memory.is_none());
}

#[test]
fn your_own_rules_come_first_and_say_so() {
    use tracesight::analysis::rules::taxonomy::parse_rules;
    let rules = parse_rules("# our kernels\nmy fused mlp* => gemm\nmystery* | odd kernel => moe_routing\n").unwrap();
    assert_eq!(rules.len(), 2);
    assert!(parse_rules("x => nonsense").unwrap_err().contains("line 1: unknown bucket `nonsense`"));
    assert!(parse_rules("no arrow").unwrap_err().contains("line 1"));
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.launch(&["aten::add"], "my_fused_mlp_kernel", 0, 40);
    t.launch(&["aten::add"], "mystery_kernel", 40, 10);
    let bytes = t.bytes();
    let opts = tracesight::Options { rules, ..Default::default() };
    let r = tracesight::analyze_slice("r.json", &bytes, &opts).unwrap();
    assert_eq!(share(&r, Bucket::Gemm), 40.0);
    assert_eq!(share(&r, Bucket::MoeRouting), 10.0);
    let gemm = r.buckets.iter().find(|b| b.id == Bucket::Gemm).unwrap();
    assert_eq!(gemm.matched[0].rule, "your rule: my fused mlp*");
    // Without them the same kernels are elementwise (launched by aten::add) and other.
    let r = t.report();
    assert_eq!(share(&r, Bucket::Gemm), 0.0);
    // The page's live check says the same before analysing again: what each rule takes, and
    // from where.
    let rules = parse_rules("my fused mlp* => gemm\nmy* | mystery* => moe_routing\nnothing here => rope").unwrap();
    let effects = tracesight::analysis::rules::taxonomy::rule_effects(
        &rules,
        r.kernels.iter().map(|k| (k.name.as_str(), k.bucket, k.time_us, k.count)),
    );
    let from = |i: usize| effects[i].moves.iter().map(|m| m.0).collect::<Vec<_>>();
    assert_eq!((effects[0].kernels, effects[0].time_us, from(0)), (1, 40.0, vec![Bucket::Elementwise]));
    // `my*` would match the mlp kernel too, but the first rule took it.
    assert_eq!((effects[1].kernels, effects[1].time_us), (1, 10.0));
    assert_eq!((effects[2].kernels, effects[2].moves.len()), (0, 0));
}
