//! Issue 24's remaining classes on synthetic traces with names exactly as the libraries emit
//! them: TransformerEngine attention and FP8 kernels, per-rank collective bandwidth, launch-bound
//! eager inference by CPU time per op, fixes that fit, occupancy left unknown, step windows.

mod common;
use common::{find_hint, Trace};
use tracesight::analysis::rules::taxonomy::{Backend, Bucket};
use tracesight::report::TraceReport;

fn share(r: &TraceReport, b: Bucket) -> f64 {
    r.buckets.iter().find(|x| x.id == b).map(|x| x.time_us).unwrap_or(0.0)
}

// cuDNN's fused SDPA kernel (cuDNN frontend "fort_native_sdpa" engine), as TE's fused_attn runs it.
const CUDNN_SDPA: &str = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0";
// TransformerEngine transformer_engine/common/fused_attn/utils.cu (namespace fused_attn).
const TE_OFFSETS: &str = "void transformer_engine::fused_attn::cu_seqlens_to_offsets<int>(long, long, long, long, long, int const*, int const*, int*, int*, int*, int*)";
const TE_RNG: &str = "void transformer_engine::fused_attn::populate_rng_state_kernel(long*, long const*, long)";
// fused_attn/context_parallel.cu (namespace context_parallel).
const TE_CP_OUT: &str = "void transformer_engine::context_parallel::thd_out_correction_kernel<__nv_bfloat16, 128, false>(__nv_bfloat16*, __nv_bfloat16*, float*, float*, int*, int, int, int, int, int, int)";
const TE_CP_READ: &str = "void transformer_engine::context_parallel::thd_read_half_tensor_kernel<2>(void*, void*, int*, int, int, int, int, int, int, int)";
// fused_attn/kv_cache.cu (namespace kv_cache).
const TE_KV: &str = "void transformer_engine::kv_cache::copy_to_kv_cache_kernel<__nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, int*, int*, int*, int*, int, int, int, int, int, int, int, bool)";
// FP8 casts and scaling: cast/fp8/quantize_fp8.cuh cast_fp8_1D_kernel, recipe/current_scaling.cu
// amax_kernel / compute_scale_from_amax_kernel, recipe/delayed_scaling.cu
// amax_and_scale_update_impl::kernel, recipe/fp8_block_scaling.cu partial cast,
// transpose/cast_transpose.cu cast_transpose_optimized_kernel.
const TE_FP8: &[&str] = &[
    "void transformer_engine::dispatch::fp8::quantize_1D_kernel::cast_fp8_1D_kernel<false, transformer_engine::Empty, &(float transformer_engine::identity<float>(float, transformer_engine::Empty const&)), __nv_bfloat16, __nv_fp8_e4m3>(__nv_bfloat16 const*, __nv_fp8_e4m3*, float*, float*, float const*, unsigned long)",
    "void transformer_engine::(anonymous namespace)::amax_kernel<8, __nv_bfloat16>(__nv_bfloat16 const*, float*, unsigned long, unsigned long, float const*)",
    "transformer_engine::(anonymous namespace)::compute_scale_from_amax_kernel(float const*, float*, float, float, bool, float, float*, float*, float const*)",
    "void transformer_engine::delayed_scaling_recipe::amax_and_scale_update_impl::kernel(float const*, float const*, float*, float*, unsigned long, unsigned long, transformer_engine::delayed_scaling_recipe::(anonymous namespace)::AmaxComputeAlgo, float)",
    "void transformer_engine::fp8_block_scaling_partial_cast_kernel<__nv_bfloat16, __nv_fp8_e4m3, 128, 8>(__nv_bfloat16 const*, __nv_fp8_e4m3*, float const*, unsigned long, unsigned long, unsigned long, unsigned long)",
    "void transformer_engine::cast_transpose_optimized_kernel<8, 4, __nv_bfloat16, __nv_fp8_e4m3>(__nv_bfloat16 const*, float const*, __nv_fp8_e4m3*, __nv_fp8_e4m3*, float const*, float*, float*, unsigned long, unsigned long)",
];

/// One TE attention layer: FusedAttnFunc (TE's autograd Function, recorded under its class
/// name) launching its setup, the cuDNN kernel, and a CP merge; or the same cuDNN kernel
/// launched by PyTorch's SDPA cuDNN backend.
fn attention(under_te: bool) -> TraceReport {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    let chain: &[&str] = if under_te {
        &["FusedAttnFunc"]
    } else {
        &["aten::scaled_dot_product_attention", "aten::_scaled_dot_product_cudnn_attention"]
    };
    t.launch(chain, TE_OFFSETS, 0, 3);
    t.launch(chain, TE_RNG, 5, 2);
    t.launch(chain, CUDNN_SDPA, 10, 300);
    t.launch(chain, TE_CP_OUT, 320, 20);
    t.launch(chain, TE_CP_READ, 350, 10);
    t.launch(chain, TE_KV, 370, 10);
    t.report()
}

#[test]
fn transformer_engine_fused_attention_is_named_and_not_told_to_use_sdpa_flash() {
    let r = attention(true);
    // Setup, the cuDNN kernel and the merge are attention; the layout moves and KV copy memory.
    assert_eq!(share(&r, Bucket::Attention), 325.0);
    assert_eq!(share(&r, Bucket::Memory), 20.0);
    assert_eq!(r.attention.backend, Backend::Cudnn);
    assert_eq!(r.attention.library.as_deref(), Some("TransformerEngine"));
    assert!(r.attention.fix.is_none(), "{:?}", r.attention.fix);
    assert!(r.attention.not_flash_reasons.is_empty());
}

#[test]
fn sdpa_cudnn_backend_is_not_transformer_engine() {
    let r = attention(false);
    assert_eq!(r.attention.backend, Backend::Cudnn);
    assert_eq!(r.attention.library.as_deref(), Some("cuDNN"));
    // On an H100 PyTorch tries cuDNN attention first (sdp_utils.cpp priority_order): named, not
    // told to use flash.
    assert!(r.attention.fix.is_none(), "{:?}", r.attention.fix);
    assert!(find_hint(&r, tracesight::vocab::HintId::AttentionNotFlash).is_none(), "{:?}", r.hints);
}

#[test]
fn transformer_engine_fp8_casts_and_scaling_are_quantization() {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    for (i, k) in TE_FP8.iter().enumerate() {
        t.launch(&["aten::linear"], k, i as i64 * 10, 5);
    }
    // Must not fire: TE's RMSNorm (normalization/rmsnorm) is a norm, not a cast.
    t.launch(&["aten::linear"], "void transformer_engine::normalization::rmsnorm_fwd_tuned_kernel<transformer_engine::normalization::Kernel_traits<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, unsigned int, 4096u, 1u, 1u, 4u, 16u> >(transformer_engine::normalization::FwdParams)", 100, 7);
    let r = t.report();
    let wrong: Vec<_> = r
        .top_kernels
        .iter()
        .filter(|k| k.time_us == 5.0 && k.bucket != Bucket::Quantization)
        .map(|k| &k.name)
        .collect();
    assert!(wrong.is_empty(), "not quantization: {wrong:?}");
    assert_eq!(share(&r, Bucket::Quantization), 5.0 * TE_FP8.len() as f64);
    assert_eq!(share(&r, Bucket::Elementwise), 7.0);
}

/// An NCCL kernel with the collective metadata current Kineto writes on it (the args of
/// `record_param_comms`: torch/csrc/distributed/c10d/ParamCommsUtils.hpp RECORD_PARAM_COMMS).
fn nccl(t: &mut Trace, kernel: &str, gpu_ts: i64, dur: i64, args: serde_json::Value) {
    t.launch(&["c10d::allreduce_"], kernel, gpu_ts, dur);
    let last = t.events.last_mut().unwrap();
    for (k, v) in args.as_object().unwrap() {
        last["args"][k] = v.clone();
    }
}

fn comm_trace(group_size: bool) -> TraceReport {
    use serde_json::json;
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.dist = Some((0, 4));
    let g = |a: serde_json::Value| {
        let mut a = a;
        if group_size {
            a["Group size"] = json!(4);
        }
        a
    };
    // 1M floats all-reduced in 100 us: S = 4 MB, algbw 40 GB/s, busbw 40 * 2 * 3/4 = 60.
    for i in 0..2 {
        nccl(
            &mut t,
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
            i * 200,
            100,
            g(
                json!({ "Collective name": "allreduce", "In msg nelems": 1_000_000, "Out msg nelems": 1_000_000, "dtype": "Float" }),
            ),
        );
    }
    // An all-gather of 250k bf16 per rank into 1M: S = the 2 MB output, in 50 us: 40 GB/s, busbw 30.
    nccl(
        &mut t,
        "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        500,
        50,
        g(
            json!({ "Collective name": "_allgather_base", "In msg nelems": 250_000, "Out msg nelems": 1_000_000, "dtype": "BFloat16" }),
        ),
    );
    // No size recorded: left out, and said so.
    nccl(
        &mut t,
        "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        600,
        10,
        json!({ "Collective name": "broadcast" }),
    );
    t.report()
}

#[test]
fn collective_bandwidth_per_kind_from_record_param_comms_sizes() {
    let r = comm_trace(true);
    let b = r.collective_bandwidth.as_ref().expect("bandwidth");
    let ar = b.kinds.iter().find(|k| k.name == "allreduce").expect("allreduce row");
    assert_eq!((ar.calls, ar.group_size, ar.bytes), (2, 4, 8e6));
    assert!((ar.algbw_gb_s - 40.0).abs() < 1e-9, "{}", ar.algbw_gb_s);
    assert!((ar.busbw_gb_s.unwrap() - 60.0).abs() < 1e-9);
    let ag = b.kinds.iter().find(|k| k.name == "allgatherbase").expect("allgather row");
    assert_eq!(ag.bytes, 2e6);
    assert!((ag.algbw_gb_s - 40.0).abs() < 1e-9 && (ag.busbw_gb_s.unwrap() - 30.0).abs() < 1e-9);
    assert_eq!((b.unsized_calls, b.unsized_us), (1, 10.0));
    let text = tracesight::text::render(&report_of(&r));
    assert!(text.contains("algbw GB/s") && text.contains("lower bounds"), "{text}");
    let md = tracesight::export::markdown::render(&report_of(&r));
    assert!(md.contains("### Collective bandwidth") && md.contains("lower bounds"), "{md}");
}

#[test]
fn no_bandwidth_without_a_group_size() {
    let r = comm_trace(false);
    let b = r.collective_bandwidth.as_ref().expect("collectives seen");
    assert!(b.kinds.is_empty());
    assert_eq!(b.unsized_calls, 4);
    // And none at all on a trace without collectives.
    assert!(attention(true).collective_bandwidth.is_none());
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
