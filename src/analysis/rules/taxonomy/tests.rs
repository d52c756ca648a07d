//! The kernel families of today's stacks, with names written as the libraries emit them
//! (demangled by CUPTI, Itanium-mangled from HIP, or a Triton function name), and the bucket and
//! backend each must get. Sources: each library's own kernel definitions.

use super::*;

fn facts(name: &str) -> KernelFacts {
    KernelFacts::of(name)
}

fn bucket(name: &str) -> Option<Bucket> {
    facts(name).kernel_rule().map(|r| r.then.bucket)
}

/// (kernel name as emitted, expected bucket) per family.
pub(super) const FAMILIES: &[(&str, &[(&str, Bucket)])] = &[
    ("NCCL / RCCL / MSCCL", &[
        ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", Bucket::Communication),
        ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", Bucket::Communication),
        ("ncclSymkDevKernel_AllReduce_AGxLLMC_R_sum_bf16(ncclSymkDevWorkArgs4K)", Bucket::Communication),
        ("_Z23ncclDevKernel_Generic_424ncclDevKernelArgsStorageILm4096EE", Bucket::Communication),
        ("mscclKernel_Sum_half_LL_false(ncclDevComm*, mscclAlgo*, mscclWork*)", Bucket::Communication),
    ]),
    ("expert-parallel communication", &[
        ("void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*, int4 const*, float const*, long const*, float const*, bool const*, int const*, int, int, int, int, int, int, int, int, int, int, void**, int, int, int)", Bucket::Communication),
        ("void deep_ep::internode_ll::combine<false, 7168>(void*, void*, int*, void*, void const*, long const*, float const*, int const*, long const*, int*, int*, int, int, int, int, int, int, int, int, int, bool, int*)", Bucket::Communication),
        ("void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int, int const*, int*, int, int, int, bool const*, int*, int*, int, void**, int**, int)", Bucket::Communication),
        ("void deep_ep::elastic::dispatch_impl<128, 4>(ncclDevComm_t, ncclWindow_t)", Bucket::Communication),
        ("void tensorrt_llm::kernels::moe_alltoall::moeA2ADispatchKernel<__nv_bfloat16>(int const*, void*, int)", Bucket::Communication),
        ("void flashinfer::trtllm_alltoall::moeAllToAllKernel(flashinfer::MoeEpWorldInfo, int)", Bucket::Communication),
        ("void mscclpp::executionKernel<__nv_bfloat16>(int, void*, void*)", Bucket::Communication),
    ]),
    ("custom all-reduce", &[
        ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)", Bucket::Communication),
        ("_ZN5aiter26cross_device_reduce_2stageI6__halfLi8EEEvPNS_8RankDataENS_11RankSignalsEPNS_6SignalEPT_ii", Bucket::Communication),
        ("void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16, 8, true>(flashinfer::trtllm_allreduce_fusion::AllReduceFusionParams<__nv_bfloat16>)", Bucket::Communication),
        ("void (anonymous namespace)::two_shot_all_reduce_kernel<c10::BFloat16, 16, 8>(c10::BFloat16**, unsigned long, c10::BFloat16*, unsigned long, unsigned long, unsigned int**, unsigned long, unsigned long)", Bucket::Communication),
        ("userbuffers_fp16_sum_inplace_gpu_rr_rs(int, int, int, int, int, int, void**, int, unsigned long)", Bucket::Communication),
        ("void quickreduce::allreduce_prototype_twoshot<__half, quickreduce::CodecQ4<__half>, false>(__half const*, __half*, unsigned int, int, int, unsigned int, unsigned char**, unsigned int)", Bucket::Communication),
    ]),
    ("GEMM", &[
        ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", Bucket::Gemm),
        ("nvjet_tst_192x192_64x3_2x1_v_bz_coopA_NNT", Bucket::Gemm),
        ("Cijk_Alik_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_APM1", Bucket::Gemm),
        ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)", Bucket::Gemm),
        ("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> > > > > >(cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int> >::Params)", Bucket::Gemm),
        ("void deep_gemm::sm90_fp8_gemm_1d2d_impl<0u, 4096u, 7168u, 1u, 128u, 128u, 128u, 1u, 1u, 32u, 6u, 128u, 128u, 1u, 1u, false, (deep_gemm::GemmType)0, deep_gemm::EpilogueIdentity>(float*, int*, unsigned int, unsigned int, unsigned int, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st, CUtensorMap_st)", Bucket::Gemm),
        ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor>, true, (ck::InMemoryDataOperationEnum)0, 1, (ck::TailNumber)1>(ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor>::Argument)", Bucket::Gemm),
        ("triton_tem_fused_addmm_gelu_0", Bucket::Gemm),
        ("fused_moe_kernel", Bucket::Gemm),
        ("void marlin::Marlin<__nv_bfloat16, 4, 256, 1, 8, 8, true, 4>(int4 const*, int4 const*, int4*, int4 const*, int, int, int, int*)", Bucket::Gemm),
        ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)", Bucket::Gemm),
        ("void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false, false>(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)", Bucket::Gemm),
    ]),
    ("convolution", &[
        ("void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*, float2 const*, int, int, int, int, int, int, int, int, int, float, float, cudnn::reduced_divisor, bool, float*, float*, int2, int, int)", Bucket::Gemm),
        ("void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)", Bucket::Gemm),
        ("volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", Bucket::Gemm),
        ("void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)", Bucket::Gemm),
        ("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel", Bucket::Gemm),
        ("igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x64x32_wt32x32x8_ws1x1_wr1x2_ta1x16x1x1_1x2x4x32_tb1x8x1x1_1x4x1x64_pta", Bucket::Gemm),
        ("naive_conv_fwd_nchw_float_double_float", Bucket::Gemm),
        ("Im2d2Col_v2", Bucket::Gemm),
    ]),
    ("attention", &[
        ("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)", Bucket::Attention),
        ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> > > > > >(flash::FlashAttnFwdSm90<int>::Params)", Bucket::Attention),
        ("void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, true, false, false, false, true, true, false, false>(flash::Flash_fwd_params)", Bucket::Attention),
        ("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", Bucket::Attention),
        ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0", Bucket::Attention),
        ("void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u, flashinfer::paged_kv_t<__nv_bfloat16, int>, flashinfer::DefaultAttention<false, false, false, false> >(__nv_bfloat16*, flashinfer::paged_kv_t<__nv_bfloat16, int>, __nv_bfloat16*, float*, bool*, int)", Bucket::Attention),
        ("void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float*, float*, __nv_bfloat16*, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16 const*, int, float, int const*, int const*, int, float const*, int, int, int, float const*, float const*, int, int, int)", Bucket::Attention),
        ("kernel_unified_attention_2d", Bucket::Attention),
        ("attn_fwd", Bucket::Attention),
        ("bwd_kernel_dk_dv", Bucket::Attention),
        ("_fwd_grouped_kernel_stage1", Bucket::Attention),
        ("void flash::flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>, true, SharedStorageMLA<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512> > >(Flash_fwd_mla_params)", Bucket::Attention),
        ("fmha_v2_flash_attention_bf16_64_128_S_q_paged_kv_128_sm90_kernel_nl_tiled", Bucket::Attention),
        ("kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensorptrf16gmemalign16o_1", Bucket::Attention),
        ("void ck_tile::kentry<256, 1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t> > > >(ck_tile::FmhaFwdKernel<int>::Kargs)", Bucket::Attention),
    ]),
    ("MoE routing", &[
        ("void vllm::moe::topkGatingSoftmax<8, 64, 4, 16, int>(float const*, bool const*, float*, int, int*, int*, int, int, int)", Bucket::MoeRouting),
        ("void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int, unsigned long, int*)", Bucket::MoeRouting),
        ("void vllm::moe::count_and_sort_expert_tokens_kernel<int>(int const*, int*, int*, unsigned long)", Bucket::MoeRouting),
        ("void vllm::moe::moe_sum_kernel<__nv_bfloat16, 8>(__nv_bfloat16*, __nv_bfloat16 const*, int)", Bucket::MoeRouting),
        ("void tensorrt_llm::kernels::expandInputRowsKernel<__nv_bfloat16, __nv_bfloat16, true>(__nv_bfloat16 const*, __nv_bfloat16*, float const*, int const*, long, long, int)", Bucket::MoeRouting),
        ("void tensorrt_llm::kernels::finalizeMoeRoutingKernel<__nv_bfloat16, __nv_bfloat16, float>(__nv_bfloat16 const*, __nv_bfloat16*, float const*, int const*, int)", Bucket::MoeRouting),
        ("void moe_permute_kernel<__nv_bfloat16, float, 128>(__nv_bfloat16 const*, __nv_bfloat16*, int const*, float const*, float*, int, int, int)", Bucket::MoeRouting),
        ("grouped_topk_kernel", Bucket::MoeRouting),
        ("_ZN5aiter22opus_moe_sorting_entryIiEEvPKiPiS3_S3_i", Bucket::MoeRouting),
        // Triton's triton_kernels package (python/triton_kernels/triton_kernels/routing.py and
        // routing_details/, topk_details/), which vLLM and SGLang use for gpt-oss MoE routing.
        ("_combined_routing_compute", Bucket::MoeRouting),
        ("_combined_routing_memset", Bucket::MoeRouting),
        ("_routing_clear_bitmatrix", Bucket::MoeRouting),
        ("_sum_bitmatrix_rows", Bucket::MoeRouting),
        ("_expt_data_compute", Bucket::MoeRouting),
        ("_expt_data_memset", Bucket::MoeRouting),
        ("_topk_forward", Bucket::MoeRouting),
    ]),
    ("ATen indexing moves memory", &[
        // aten/src/ATen/native/cuda/IndexKernelUtils.cu, IndexKernel.cu, ScatterGatherKernel.cu,
        // Indexing.cu, as CUPTI demangles them.
        ("void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)", Bucket::Memory),
        ("void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, bool)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, bool)::{lambda(int)#1})", Bucket::Memory),
        ("void at::native::_scatter_gather_elementwise_kernel<128, 8, at::native::_cuda_scatter_gather_internal_kernel<true, float>::operator()<at::native::ReduceAdd>(at::TensorIterator&, long, long, long, at::native::ReduceAdd const&)::{lambda(int)#1}>(int, at::native::_cuda_scatter_gather_internal_kernel<true, float>::operator()<at::native::ReduceAdd>(at::TensorIterator&, long, long, long, at::native::ReduceAdd const&)::{lambda(int)#1})", Bucket::Memory),
        ("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)", Bucket::Memory),
        ("void at::native::(anonymous namespace)::indexFuncSmallIndex<float, long, unsigned int, 2, 2, -2>(at::cuda::detail::TensorInfo<float, unsigned int>, at::cuda::detail::TensorInfo<float const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, long, float)", Bucket::Memory),
        // Sort and top-k are reductions, not data movement (Sort.cu, TensorTopK.cu).
        ("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, float*)", Bucket::Elementwise),
        ("void at::native::bitonicSortKVInPlace<2, -1, 16, 16, float, long, at::native::LTOp<float, true>, unsigned int>(at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, unsigned int, unsigned int, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, at::native::LTOp<float, true>)", Bucket::Elementwise),
    ]),
    ("quantization", &[
        ("void vllm::dynamic_per_token_scaled_fp8_quant_kernel<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*, float*, c10::BFloat16 const*, float const*, int)", Bucket::Quantization),
        ("_per_token_group_quant_fp8", Bucket::Quantization),
        ("void vllm::cvt_fp16_to_fp4<__nv_bfloat16, false>(int, int, __nv_bfloat16 const*, float const*, unsigned int*, unsigned int*)", Bucket::Quantization),
        ("void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)0, __nv_bfloat16, 16, true>(int, int, int, int, __nv_bfloat16 const*, float const*, unsigned int*, unsigned int*, tensorrt_llm::QuantizationSFLayout, flashinfer::Params)", Bucket::Quantization),
        ("void transformer_engine::detail::cast_transpose_general_kernel<8, 4, __nv_bfloat16, __nv_fp8_e4m3>(__nv_bfloat16 const*, float const*, __nv_fp8_e4m3*, __nv_fp8_e4m3*, float const*, float*, float*, unsigned long, unsigned long)", Bucket::Quantization),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::float8_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda(c10::Float8_e4m3fn, c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::float8_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda(c10::Float8_e4m3fn, c10::BFloat16)#1}, std::array<char*, 2ul>)", Bucket::Quantization),
    ]),
    ("KV-cache writes", &[
        ("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, long, long, long, long, int, int, int, float const*, float const*)", Bucket::Memory),
        ("void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, long const*, int, int, int, int, int, int, float const*)", Bucket::Memory),
        ("void flashinfer::AppendPagedKVCacheKernel<8u, 16u, __nv_bfloat16, int>(flashinfer::paged_kv_t<__nv_bfloat16, int>, __nv_bfloat16*, __nv_bfloat16*, int*, int*, unsigned int, unsigned long, unsigned long, unsigned long, unsigned long)", Bucket::Memory),
    ]),
    ("norms", &[
        ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)", Bucket::Elementwise),
        ("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)", Bucket::Elementwise),
        ("_ZN5aiter24add_rmsnorm_quant_kernelIN3c108BFloat16ELi256ELi8EEEvPT_PKS3_S6_PKfS8_fii", Bucket::Elementwise),
        ("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, unsigned int, unsigned int, unsigned int, float, float)", Bucket::Elementwise),
        ("void cuApplyRMSNorm<c10::BFloat16, float, c10::BFloat16>(c10::BFloat16*, float*, c10::BFloat16 const*, int, int, float, c10::BFloat16 const*)", Bucket::Elementwise),
        ("void transformer_engine::normalization::rmsnorm_fwd_tuned_kernel<transformer_engine::normalization::Kernel_traits<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, unsigned int, 4096u, 1u, 1u, 4u, 16u> >(transformer_engine::normalization::FwdParams)", Bucket::Elementwise),
        ("_rms_norm_forward_kernel", Bucket::Elementwise),
        ("triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_0", Bucket::Elementwise),
        ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)", Bucket::Elementwise),
        ("MIOpenBatchNormFwdTrainSpatial", Bucket::Elementwise),
    ]),
    ("rope", &[
        ("void vllm::rotary_embedding_kernel<c10::BFloat16, c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)", Bucket::Rope),
        ("void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<true, 128u, 8u, 16u, __nv_bfloat16, long>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, float*, long*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long)", Bucket::Rope),
        ("void transformer_engine::fused_rope_forward_kernel<__nv_bfloat16>(__nv_bfloat16 const*, float const*, __nv_bfloat16*, bool, int, int, int, int, int, int, int, int, int, int, int, int)", Bucket::Rope),
        ("_triton_rope", Bucket::Rope),
        ("rotary_kernel", Bucket::Rope),
        ("triton_poi_fused_add_cat_cos_mul_neg_sin_slice_0", Bucket::Rope),
    ]),
    ("embeddings", &[
        ("void at::native::(anonymous namespace)::embedding_backward_feature_kernel<float, float, long>(long const*, float const*, float*, int, long, int)", Bucket::Embedding),
        ("void at::native::(anonymous namespace)::krn_partials_per_segment<long>(long*, long const*, long const*, long)", Bucket::Embedding),
        ("split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 4, 32>", Bucket::Embedding),
        ("void fbgemm_gpu::bounds_check_indices_kernel_v2<long, false>(at::PackedTensorAccessor32<long, 1, at::RestrictPtrTraits>, int)", Bucket::Embedding),
        ("void linearize_index_kernel<long>(at::GenericPackedTensorAccessor<long, 1ul, at::RestrictPtrTraits, int>, int)", Bucket::Embedding),
        ("triton_poi_fused_embedding_0", Bucket::Embedding),
    ]),
    ("copies and layout", &[
        ("void fbgemm_gpu::permute_2D_data_kernel<true, int, long, float>(int, int, int const*, long const*, float const*, int const*, long const*, long*, float*)", Bucket::Memory),
        ("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)", Bucket::Memory),
        ("batched_transpose_32x32_half", Bucket::Memory),
        ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)", Bucket::Memory),
        ("triton_poi_fused__to_copy_clone_0", Bucket::Elementwise),
        ("SubTensorOpWithSubTensor2d", Bucket::Memory),
    ]),
    ("softmax, dropout, optimizer, elementwise", &[
        ("void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)", Bucket::Softmax),
        ("triton_red_fused__softmax_0", Bucket::Softmax),
        ("void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<float, unsigned int>, float, at::PhiloxCudaState)", Bucket::Dropout),
        ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, float*, float*>(T1, T2, T3...)", Bucket::Optimizer),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)", Bucket::Elementwise),
        ("void vllm::act_and_mul_kernel<c10::BFloat16, &(c10::BFloat16 vllm::silu_kernel<c10::BFloat16>(c10::BFloat16 const&)), true>(c10::BFloat16*, c10::BFloat16 const*, int)", Bucket::Elementwise),
        ("triton_poi_fused_mul_silu_0", Bucket::Elementwise),
    ]),
];

#[test]
fn every_family_lands_in_its_bucket() {
    let mut wrong = Vec::new();
    for (family, cases) in FAMILIES {
        for (name, want) in *cases {
            let got = bucket(name);
            if got != Some(*want) {
                wrong.push(format!("{family}: {name:.100} -> {got:?}, want {want:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn attention_kernels_name_their_backend() {
    let cases = [
        ("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t> >(pytorch_flash::Flash_fwd_params)", Backend::Flash),
        ("void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4> >(Flash_fwd_params)", Backend::FlashAttn),
        ("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<cutlass::bfloat16_t, 128> > >(flash::FlashAttnBwdSm90<cutlass::bfloat16_t, 128>::Params)", Backend::FlashAttn),
        ("fmha_cutlassB_bf16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm80, cutlass::bfloat16_t, true, false, true, 64, 64, 64, false>::Params)", Backend::MemEfficient),
        ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0", Backend::Cudnn),
        ("void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u> >(flashinfer::BatchPrefillPagedParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)", Backend::Vendor),
        ("attn_fwd", Backend::Vendor),
    ];
    for (name, want) in cases {
        assert_eq!(facts(name).backend().map(|b| b.0), Some(want), "{name}");
    }
    // A library named in a parameter list is not the kernel's identity.
    let q = facts("void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)0, __nv_bfloat16, 16, true>(int, int, __nv_bfloat16 const*, flashinfer::Params)");
    assert_eq!(q.backend(), None);
    // `flash` in a KV-cache write is not flash attention.
    assert_eq!(facts("reshape_and_cache_flash_kernel").backend(), None);
}

#[test]
fn false_friends_from_signatures() {
    // cudnn::reduced_divisor in the parameters does not make an FFT convolution elementwise.
    assert_eq!(bucket("void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int, int, int, int, int, int, int, int, int, cudnn::reduced_divisor, bool, int2, int, int)"), Some(Bucket::Gemm));
    // `lambda` in a functor signature is not the LAMB optimizer.
    assert_eq!(bucket("void at::native::vectorized_elementwise_kernel<4, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, at::detail::Array<char*, 3>)"), Some(Bucket::Elementwise));
    assert_eq!(bucket("mystery_kernel_xyz"), None);
    // PyTorch's own top-k is not MoE routing by its name (an MoE context would make it so).
    assert_ne!(bucket("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, float*)"), Some(Bucket::MoeRouting));
}

#[test]
fn tensor_core_use_by_family() {
    let tc = |n: &str| facts(n).tensor_cores;
    for n in [
        "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n",
        "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT",
        "Cijk_Alik_Bljk_SB_MT64x16x32_MI16x16x1_SN",
        "igemm_bwd_gtcx3_nhwc_bf16_bx0",
        "volta_h884gemm_64x64_ldg8_nn",
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw",
    ] {
        assert_eq!(tc(n), Some(TensorCore::Yes), "{n}");
    }
    for n in [
        "volta_sgemm_128x64_nn",
        "volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1",
        "void fft2d_c2r_32x32<float>(float*)",
        "void implicit_convolve_sgemm<float, float, 128>(int)",
        "void cudnn::cnn::wgrad_alg0_engine<float, 128>(int)",
        "ampere_gcgemm_64x64_nt",
    ] {
        assert_eq!(tc(n), Some(TensorCore::Simt), "{n}");
    }
    for n in [
        "void gemv2T_kernel_val<int, int, float>(float)",
        "void gemmk1_kernel<int, float, 256>(float)",
        "void gemmSN_TN_kernel<float, 128>(float)",
    ] {
        assert_eq!(tc(n), Some(TensorCore::VectorShaped), "{n}");
    }
}

#[test]
fn op_contexts() {
    let ctx = |op: &str| op_context(op).map(|i| OP_CONTEXT_RULES[i].then.context);
    assert_eq!(ctx("aten::scaled_dot_product_attention"), Some(OpContext::Sdpa));
    assert_eq!(ctx("aten::_scaled_dot_product_flash_attention"), Some(OpContext::Sdpa));
    assert_eq!(ctx("FlashAttnFunc"), Some(OpContext::Attention));
    assert_eq!(ctx("c10d::allreduce_"), Some(OpContext::Communication));
    assert_eq!(ctx("record_param_comms"), Some(OpContext::Communication));
    assert_eq!(ctx("Optimizer.step#AdamW.step"), Some(OpContext::Optimizer));
    assert_eq!(ctx("aten::embedding"), Some(OpContext::Embedding));
    assert_eq!(ctx("aten::native_dropout"), Some(OpContext::Dropout));
    assert_eq!(ctx("apply_rotary_pos_emb"), Some(OpContext::Rope));
    assert_eq!(ctx("aten::cross_entropy_loss"), Some(OpContext::Softmax));
    assert_eq!(ctx("aten::linear"), None);
    assert_eq!(ctx("aten::broadcast_tensors"), None);
    assert_eq!(ctx("ProfilerStep#3"), None);
    assert_eq!(ctx("aten::cosine_similarity"), None);
    assert_eq!(
        OP_CONTEXT_RULES[op_context("aten::_scaled_dot_product_cudnn_attention").unwrap()].then.backend,
        Some(Backend::Cudnn)
    );
}

#[test]
fn definitions_come_from_the_tables() {
    for b in Bucket::ALL {
        let d = b.definition();
        assert!(!d.is_empty(), "{b:?}");
        // Every kernel rule of the bucket is in its definition, in its own words.
        for r in KERNEL_RULES.iter().filter(|r| r.then.bucket == b) {
            assert!(d.contains(r.why), "{b:?} misses {}", r.why);
        }
    }
    let ids: Vec<&str> = Bucket::ALL.iter().map(|b| b.id()).collect();
    let json: Vec<String> =
        Bucket::ALL.iter().map(|b| serde_json::to_value(b).unwrap().as_str().unwrap().to_string()).collect();
    assert_eq!(ids, json, "id() and the serde names agree");
}

#[test]
fn a_bucket_index_is_its_place_in_all() {
    // Tables indexed by bucket (the timeline's bins) rely on it.
    for (i, b) in Bucket::ALL.into_iter().enumerate() {
        assert_eq!(b.index(), i, "{b:?}");
    }
}

#[test]
fn quantized_and_low_precision_attention() {
    let lib = |name: &str| facts(name).backend().map(|b| b.1);
    // SageAttention (thu-ml/SageAttention csrc/qattn) and its smoothing / quantize kernels
    // (csrc/fused/fused.cu, sageattention/triton/quant_per_block.py).
    let sage = "void qk_int_sv_f16_attn_kernel<128u, 64u, 32u, 64u, 128u, (DataType)0, (QuantGranularity)2, (QuantGranularity)2, float, false, __half, (ComputeUnit)0, (MaskMode)0, false, false>(signed char*, signed char*, __half*, __half*, float*, float*, float*, __half*, unsigned int, unsigned int, unsigned int)";
    let sage90 = "void qk_int8_sv_f8_attn_kernel<64u, 128u, 128u, (QuantGranularity)2, (QuantGranularity)2, float, true, __nv_bfloat16, (MaskMode)0, false, false>(CUtensorMap_st, CUtensorMap_st, CUtensorMap_st, float*, float*, float*, __nv_bfloat16*, float*, unsigned int)";
    assert_eq!(lib(sage), Some("SageAttention"));
    assert_eq!(lib(sage90), Some("SageAttention"));
    for q in [
        "void SubMeanKernel<64u, 128u, __nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __half*, unsigned int, unsigned int)",
        "void MeanScaleKernel<64u, false, __nv_bfloat16>(__nv_bfloat16*, signed char*, float*, float*, float, unsigned int)",
        "void QuantInt8Kernel<64u, 128u, 64u, __nv_bfloat16, false, false>(__nv_bfloat16*, __nv_bfloat16*, signed char*, float*, float, unsigned int)",
        "quant_per_block_int8_kernel",
    ] {
        assert_eq!(bucket(q), Some(Bucket::Quantization), "{q}");
    }
    // A mean that is no smoothing, a QK norm that is no INT8 QK.
    let mean = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)";
    assert_ne!(bucket(mean), Some(Bucket::Quantization));
    assert_eq!(bucket("void vllm::fused_qk_norm_rope_kernel<__nv_bfloat16, 128>(void*, int)"), Some(Bucket::Rope));
    // CK tile FMHA as aiter launches it (ck_tile/ops/fmha/kernel/fmha_batch_prefill_kernel.hpp):
    // CK / aiter, though its name says BatchPrefillWith*; FlashInfer's own stays FlashInfer.
    let ck = "void ck_tile::kentry<256, 1, ck_tile::FmhaBatchPrefillWithPagedKVCacheKernel<ck_tile::BlockFmhaBatchPrefillPipelineQRKSVSAsync<ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t> >, ck_tile::Default2DEpilogue<int> > >(ck_tile::FmhaBatchPrefillWithPagedKVCacheKernel<int>::FmhaFwdBatchModeKargs)";
    let ck_fp8 = "void ck_tile::kentry<256, 1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVS<ck_tile::BlockFmhaPipelineProblem<ck_tile::fp8_t> > > >(ck_tile::FmhaFwdKernel<int>::Kargs)";
    assert_eq!(lib(ck), Some("CK / aiter"));
    assert_eq!(lib(ck_fp8), Some("CK / aiter"));
    let fi_fp8 = "void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 2u, 8u, 16u, 1u, 8u, flashinfer::DefaultAttention<false, false, false, false>, flashinfer::BatchDecodeParams<__half, __nv_fp8_e4m3, __half, int> >(flashinfer::BatchDecodeParams<__half, __nv_fp8_e4m3, __half, int>)";
    let fi = "void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<int>, flashinfer::PagedParams<__half, __half, __half, int> >(flashinfer::PagedParams<__half, __half, __half, int>)";
    assert_eq!(lib(fi_fp8), Some("FlashInfer"));
    assert_eq!(lib(fi), Some("FlashInfer"));
    // FlashAttention-3 FP8 (hopper/flash_fwd_launch_template.h): the dtype is a template argument.
    let fa3_fp8 = "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, 128, cutlass::float_e4m3_t, float, cutlass::arch::Sm90, false, false, false, false, false, false, false, true, false, false, false, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> >, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cutlass::bfloat16_t, cutlass::arch::Sm90, 256, false, false, false, false>, flash::StaticPersistentTileScheduler<false> > > >(flash::FlashAttnFwdSm90<int>::Params)";
    assert_eq!(lib(fa3_fp8), Some("flash-attn"));
}
