//! Labels that need the launching context: MoE routing in eager code, expert-parallel
//! all-to-all under its own op names, and a trace whose GPU activity the profiler lost. Kernel
//! names are written as PyTorch emits them (aten/src/ATen/native/cuda: TensorTopK.cu
//! gatherTopK, Indexing.cu indexFuncLargeIndex, Sort.cu sort_postprocess_kernel,
//! SummaryOps.cu kernelHistogram1D).

mod common;
use common::{fixture, Trace};
use tracesight::analysis::passes::diagnostics::DiagnosticId;
use tracesight::analysis::rules::taxonomy::Bucket;
use tracesight::report::TraceReport;

const TOPK: &str = "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int)";
const INDEX_ADD: &str = "void at::native::indexFuncLargeIndex<float, long, unsigned int, 2, 2, -2, true, at::native::ReduceAdd>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long, long, at::native::ReduceAdd const&, float)";
const SORT: &str = "void at::native::(anonymous namespace)::sort_postprocess_kernel<long>(long const*, long*, long*, long const*, long, long)";
const BINCOUNT: &str = "void at::cuda::detail::kernelHistogram1D<long, long, long, 1, 2, -1, (at::cuda::detail::CUDAHistogramMemoryType)1>(at::cuda::detail::TensorInfo<long, long>, at::cuda::detail::TensorInfo<long, long>, at::cuda::detail::TensorInfo<long, long>, int, long, long, long, long)";
const GROUPED_GEMM: &str = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)";

fn bucket_of(r: &TraceReport, needle: &str) -> Vec<Bucket> {
    r.top_kernels.iter().filter(|k| k.name.contains(needle)).map(|k| k.bucket).collect()
}

/// A MoE block's routing (topk, index_add_, an expert GEMM) inside `module`, and a sort and a
/// bincount under the op chains given.
fn moe_block(module: &str, sort_chain: &[&str], bincount_chain: &[&str]) -> TraceReport {
    let mut t = Trace::new("NVIDIA H100", (9, 0));
    let start = t.cpu;
    t.launch(&["aten::topk"], TOPK, 0, 10);
    t.launch(&["aten::mm"], GROUPED_GEMM, 20, 100);
    t.launch(&["aten::index_add_"], INDEX_ADD, 130, 10);
    let end = t.cpu;
    t.module(module, start - 1, end);
    t.launch(sort_chain, SORT, 200, 10);
    t.launch(bincount_chain, BINCOUNT, 220, 10);
    t.report()
}

#[test]
fn routing_ops_in_a_moe_block_are_moe_routing() {
    let r = moe_block(
        "nn.Module: MixtralSparseMoeBlock_0",
        &["MoEGate", "aten::argsort", "aten::sort"],
        &["nn.Module: GptOssTopKRouter_0", "aten::bincount"],
    );
    assert_eq!(bucket_of(&r, "gatherTopK"), [Bucket::MoeRouting], "topk in the MoE module");
    assert_eq!(bucket_of(&r, "indexFuncLargeIndex"), [Bucket::MoeRouting], "index_add_ in the MoE module");
    assert_eq!(bucket_of(&r, "sort_postprocess"), [Bucket::MoeRouting], "argsort's sort under a MoEGate op");
    assert_eq!(bucket_of(&r, "kernelHistogram1D"), [Bucket::MoeRouting], "bincount under a router annotation");
    // The expert GEMM in the same block stays a GEMM.
    assert_eq!(bucket_of(&r, "s16816gemm"), [Bucket::Gemm]);
}

#[test]
fn routing_ops_elsewhere_are_not_moe_routing() {
    // A sampler's topk, an MLP's gate projection, a plain sort: no MoE scope.
    let r = moe_block("nn.Module: Sampler_0", &["gate_proj", "aten::sort"], &["aten::bincount"]);
    for k in ["gatherTopK", "indexFuncLargeIndex", "sort_postprocess", "kernelHistogram1D"] {
        let b = bucket_of(&r, k);
        assert!(!b.is_empty() && !b.contains(&Bucket::MoeRouting), "{k}: {b:?}");
    }
}

/// A kernel of a renamed expert-parallel library, whose name no rule knows.
const RENAMED_EP: &str = "void myep::kernels::token_shuffle<8, 7168>(int4*, float*, int const*, int)";

#[test]
fn renamed_all_to_all_is_communication_by_its_op() {
    let mut t = Trace::new("NVIDIA H800", (9, 0));
    t.launch(&["ep_dispatch"], RENAMED_EP, 0, 50);
    t.launch(&["MoE.a2a_combine"], "void myep::kernels::token_reduce<8>(int4*)", 60, 30);
    // A GEMM under a combine op keeps its identity.
    t.launch(&["combine", "aten::mm"], GROUPED_GEMM, 100, 40);
    let r = t.report();
    assert_eq!(bucket_of(&r, "token_shuffle"), [Bucket::Communication]);
    assert_eq!(bucket_of(&r, "token_reduce"), [Bucket::Communication]);
    assert_eq!(bucket_of(&r, "s16816gemm"), [Bucket::Gemm]);
}

#[test]
fn renamed_all_to_all_elsewhere_is_not_communication() {
    let mut t = Trace::new("NVIDIA H800", (9, 0));
    t.launch(&["dispatcher_setup", "aten::add"], RENAMED_EP, 0, 50);
    let r = t.report();
    // `dispatcher` is not `dispatch`: the launching op's own name decides.
    assert_eq!(bucket_of(&r, "token_shuffle"), [Bucket::Elementwise]);
}

#[test]
fn expert_parallel_kernels_are_communication_by_structure() {
    // DeepEP's layout under other top namespaces (forks), and mori's names.
    let mut t = Trace::new("NVIDIA H800", (9, 0));
    let names = [
        "void primus_turbo::internode::dispatch<false, 8, 128>(int4*, float*, int*, long*)",
        "void uccl::ep::intranode::notify_dispatch<8>(int const*, int*, int, int const*, int*, int)",
        "void mylib::internode_ll::combine<true, 7168>(void*, void*, int*)",
        "void mori::moe::EpDispatchInterNodeKernel<__hip_bfloat16>(mori::moe::EpDispatchCombineArgs<__hip_bfloat16>)",
    ];
    for (i, n) in names.iter().enumerate() {
        t.launch(&["aten::add"], n, i as i64 * 100, 50);
    }
    // A barrier in such a namespace is not a dispatch.
    t.launch(&["aten::add"], "void dispatch::intranode::barrier<8>(int**, int, int)", 500, 50);
    let r = t.report();
    for n in ["primus_turbo", "uccl", "internode_ll", "EpDispatchInterNodeKernel"] {
        assert_eq!(bucket_of(&r, n), [Bucket::Communication], "{n}");
    }
    assert_ne!(bucket_of(&r, "barrier"), [Bucket::Communication]);
}

#[test]
fn launches_without_device_rows_say_the_gpu_activity_was_lost() {
    let mut t = Trace::new("NVIDIA H100", (9, 0));
    t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[], 7);
    t.launch_on(&["aten::add"], "cudaLaunchKernel", 5, &[], 7);
    let r = t.report();
    assert!(!r.has_gpu);
    let lost = r.diagnostics.iter().find(|d| d.id == DiagnosticId::GpuActivityLost).expect("GpuActivityLost");
    // The count is the launch calls seen (the page shows it): two here.
    assert_eq!(lost.count, 2);
    assert!(lost.message.starts_with("2 kernel launch calls"), "{}", lost.message);
    assert!(!r.diagnostics.iter().any(|d| d.id == DiagnosticId::NoGpuRows), "not CPU-only");
    let report =
        tracesight::Report { tool_version: String::new(), traces: vec![r], errors: vec![], ranks: vec![], job: None };
    let text = tracesight::text::render(&report);
    assert!(text.contains("lost the GPU activity"), "{text}");
}

#[test]
fn a_cpu_only_trace_stays_cpu_only() {
    let r = common::analyze_bytes("cpu_only.json", &std::fs::read(fixture("cpu_only.json")).unwrap()).unwrap();
    assert!(r.diagnostics.iter().any(|d| d.id == DiagnosticId::NoGpuRows));
    assert!(!r.diagnostics.iter().any(|d| d.id == DiagnosticId::GpuActivityLost));
}
