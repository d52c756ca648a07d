//! The kernels of the model: names, launch configurations and Kineto's launch-configuration args.

use crate::*;

#[derive(Clone)]
pub struct K {
    pub name: String,
    pub regs: u32,
    pub smem: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// launched through cudaLaunchKernelExC (cuBLAS sm90 kernels) instead of cudaLaunchKernel
    pub exc: bool,
}

pub fn k(name: &str, regs: u32, smem: u32, grid: [u32; 3], block: [u32; 3]) -> K {
    K { name: name.to_string(), regs, smem, grid, block, exc: false }
}

pub fn gemm(name: &str, grid: [u32; 3]) -> K {
    K { name: name.to_string(), regs: 168, smem: 213_248, grid, block: [384, 1, 1], exc: true }
}

pub fn elementwise(functor: &str, arity: u32, grid: u32) -> K {
    k(
        &format!(
            "void at::native::vectorized_elementwise_kernel<4, {functor}, std::array<char*, {arity}ul> >(int, {functor}, std::array<char*, {arity}ul>)"
        ),
        26,
        0,
        [grid, 1, 1],
        [128, 1, 1],
    )
}

pub fn mta(meta: u32, functor: &str, op: &str) -> K {
    let m = format!("at::native::(anonymous namespace)::TensorListMetadata<{meta}>");
    let f = format!("at::native::(anonymous namespace)::{functor}");
    k(
        &format!("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<{m}, {f}, {op}>({m}, {f}, {op})"),
        40,
        0,
        [320, 1, 1],
        [512, 1, 1],
    )
}

pub fn fmt6(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Kineto's launch-configuration args for a kernel on an H100 (132 SMs, 64 warps/SM).
pub fn kernel_tail(k: &K) -> String {
    let blocks = k.grid.iter().map(|&x| x as u64).product::<u64>();
    let threads = k.block.iter().map(|&x| x as u64).product::<u64>();
    let wpb = threads.div_ceil(32).max(1);
    let bps = blocks as f64 / NUM_SMS;
    let wps = bps * wpb as f64;
    let by_warps = 64 / wpb;
    let by_regs = if k.regs > 0 { 65536 / (k.regs as u64 * wpb * 32) } else { 32 };
    let by_smem = if k.smem > 0 { 233_472 / k.smem as u64 } else { 32 };
    let active = by_warps.min(by_regs).min(by_smem).min(32);
    let theo = (active * wpb) as f64 / 64.0;
    let occ = ((wps / 64.0).min(theo) * 100.0) as u64;
    format!(
        ",      \"registers per thread\": {},      \"shared memory\": {},      \"blocks per SM\": {},      \"warps per SM\": {},      \"grid\": [{}, {}, {}],      \"block\": [{}, {}, {}],      \"est. achieved occupancy %\": {}",
        k.regs,
        k.smem,
        fmt6(bps),
        fmt6(wps),
        k.grid[0],
        k.grid[1],
        k.grid[2],
        k.block[0],
        k.block[1],
        k.block[2],
        occ
    )
}

// ------------------------------------------------------------------------------ the model

pub struct Kernels {
    pub gemm_fwd: K,
    pub gemm_fwd_wide: K,
    pub gemm_bwd_nn: K,
    pub gemm_bwd_nt: K,
    pub gemm_f32: K,
    pub ln_fwd: K,
    pub ln_bwd_in: K,
    pub ln_bwd_gamma: K,
    pub gelu: K,
    pub gelu_bwd: K,
    pub silu: K,
    pub silu_bwd: K,
    pub mul: K,
    pub mul_f32: K,
    pub add: K,
    pub add_f32: K,
    pub dropout: K,
    pub dropout_bwd: K,
    pub index_select: K,
    pub emb_bwd: K,
    pub copy: K,
    pub copy_f32: K,
    pub cat: K,
    pub fill: K,
    pub reduce_sum: K,
    pub log_softmax: K,
    pub log_softmax_bwd: K,
    pub softmax: K,
    pub softmax_bwd: K,
    pub nll: K,
    pub nll_bwd: K,
    pub flash_fwd: K,
    pub flash_bwd_dot: K,
    pub flash_bwd: K,
    pub flash_bwd_convert: K,
    pub eff_fwd: K,
    pub eff_bwd: K,
    pub cudnn_fwd: K,
    pub cudnn_bwd: K,
    pub nccl: K,
    pub mta: Vec<(&'static str, K)>,
}

pub fn kernels() -> Kernels {
    let lnk = "at::native::(anonymous namespace)";
    Kernels {
        gemm_fwd: gemm(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            [48, 128, 1],
        ),
        gemm_fwd_wide: gemm(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
            [64, 128, 1],
        ),
        gemm_bwd_nn: gemm(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
            [16, 128, 1],
        ),
        gemm_bwd_nt: gemm(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            [16, 48, 1],
        ),
        gemm_f32: gemm(
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            [16, 16, 256],
        ),
        ln_fwd: k(
            &format!("void {lnk}::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"),
            34, 24, [16384, 1, 1], [32, 4, 1],
        ),
        ln_bwd_in: k(
            &format!("void {lnk}::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)"),
            40, 64, [16384, 1, 1], [1024, 1, 1],
        ),
        ln_bwd_gamma: k(
            &format!("void {lnk}::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)"),
            64, 8448, [64, 1, 1], [32, 32, 1],
        ),
        gelu: elementwise(
            "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}",
            2, 65536,
        ),
        gelu_bwd: elementwise(
            "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}",
            3, 65536,
        ),
        silu: elementwise(
            "at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}",
            2, 65536,
        ),
        silu_bwd: elementwise(
            "at::native::(anonymous namespace)::silu_backward_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}",
            3, 65536,
        ),
        mul: elementwise("at::native::binary_internal::MulFunctor<c10::BFloat16>", 3, 65536),
        mul_f32: elementwise("at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >", 2, 65536),
        add: elementwise("at::native::CUDAFunctor_add<c10::BFloat16>", 3, 16384),
        add_f32: elementwise("at::native::CUDAFunctor_add<float>", 3, 65536),
        dropout: k(
            &format!("void {lnk}::fused_dropout_kernel_vec<c10::BFloat16, float, unsigned int, 1, 8, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)"),
            32, 0, [1056, 1, 1], [256, 1, 1],
        ),
        dropout_bwd: elementwise(
            "at::native::(anonymous namespace)::masked_scale_kernel<bool, c10::BFloat16, float>(at::Tensor&, at::Tensor const&, at::Tensor const&, float)::{lambda(c10::BFloat16, bool)#1}",
            3, 16384,
        ),
        index_select: k(
            &format!("void {lnk}::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)"),
            32, 0, [264, 1, 1], [128, 1, 1],
        ),
        emb_bwd: k(
            &format!("void {lnk}::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int, int)"),
            38, 4352, [64, 1, 1], [32, 32, 1],
        ),
        copy: k(
            "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
            30, 0, [65536, 1, 1], [128, 1, 1],
        ),
        copy_f32: elementwise(
            "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}",
            2, 65536,
        ),
        cat: k(
            "void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
            32, 0, [1056, 3, 1], [512, 1, 1],
        ),
        fill: elementwise("at::native::FillFunctor<float>", 1, 65536),
        reduce_sum: k(
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4, 4>)",
            40, 16, [32, 64, 1], [32, 16, 1],
        ),
        log_softmax: k(
            &format!("void {lnk}::cunn_SoftMaxForward<4, float, float, float, {lnk}::LogSoftMaxForwardEpilogue>(float*, float const*, int)"),
            38, 0, [16384, 1, 1], [1024, 1, 1],
        ),
        log_softmax_bwd: k(
            &format!("void {lnk}::cunn_SoftMaxBackward<4, float, float, float, {lnk}::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)"),
            40, 0, [16384, 1, 1], [1024, 1, 1],
        ),
        softmax: k(
            &format!("void {lnk}::cunn_SoftMaxForwardSmem<4, float, float, float, {lnk}::SoftMaxForwardEpilogue>(float*, float const*, int)"),
            32, 8192, [524288, 1, 1], [512, 1, 1],
        ),
        softmax_bwd: k(
            &format!("void {lnk}::cunn_SoftMaxBackward<4, float, float, float, {lnk}::SoftMaxBackwardEpilogue>(float*, float const*, float const*, long)"),
            40, 0, [524288, 1, 1], [512, 1, 1],
        ),
        nll: k(
            &format!("void {lnk}::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)"),
            30, 0, [1, 1, 1], [1024, 1, 1],
        ),
        nll_bwd: k(
            &format!("void {lnk}::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)"),
            24, 0, [1, 1, 1], [1024, 1, 1],
        ),
        flash_fwd: k(
            "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
            255, 49152, [16, 8, 32], [128, 1, 1],
        ),
        flash_bwd_dot: k(
            "void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)",
            32, 0, [16, 8, 32], [256, 1, 1],
        ),
        flash_bwd: k(
            "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_bwd_params)",
            255, 98304, [16, 8, 32], [256, 1, 1],
        ),
        flash_bwd_convert: k(
            "void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, int)",
            40, 16384, [16, 8, 32], [256, 1, 1],
        ),
        eff_fwd: k(
            "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
            168, 49664, [32, 32, 8], [32, 4, 1],
        ),
        eff_bwd: k(
            "fmha_cutlassB_bf16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm80, cutlass::bfloat16_t, true, false, true, 64, 64, 64, false>::Params)",
            255, 81920, [32, 32, 8], [128, 1, 1],
        ),
        cudnn_fwd: k(
            "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x64_4x1x1_kernel0_0",
            168, 164_096, [32, 32, 8], [384, 1, 1],
        ),
        cudnn_bwd: k(
            "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_7_64x64x64_4x1x1_kernel0_0",
            168, 197_632, [32, 32, 8], [384, 1, 1],
        ),
        nccl: k(
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            96, 87568, [16, 1, 1], [640, 1, 1],
        ),
        mta: vec![
            ("aten::_foreach_mul_", mta(1, "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::multiplies<float>, float")),
            ("aten::_foreach_lerp_", mta(2, "TernaryOpScalarFunctor<float, 2, 2, 0>", "at::native::LerpFunctor<float>, float")),
            ("aten::_foreach_mul_", mta(1, "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::multiplies<float>, float")),
            ("aten::_foreach_addcmul_", mta(2, "PointwiseOpScalarFunctor<float, 2, 2, 0>", "std::multiplies<float>, float")),
            ("aten::_foreach_sqrt", mta(2, "UnaryOpFunctor<float, 2, 1, 1>", "at::native::Sqrt<float>")),
            ("aten::_foreach_div_", mta(1, "BinaryOpScalarListFunctor<float, 1, 1, 0>", "std::divides<float>")),
            ("aten::_foreach_add_", mta(1, "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::plus<float>, float")),
            ("aten::_foreach_addcdiv_", mta(3, "PointwiseOpScalarListFunctor<float, 3, 3, 0>", "std::divides<float>")),
        ],
    }
}
