//! Issue 24's remaining classes on synthetic traces with names exactly as the libraries emit
//! them: TransformerEngine attention and FP8 kernels, per-rank collective bandwidth, launch-bound
//! eager inference by CPU time per op, fixes that fit, occupancy left unknown, step windows.

mod common;
use common::Trace;
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
    assert!(r.attention.fix.is_some());
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
