//! Memory-bound kernels that "fuse it" does not fit: kernels Inductor already fused, and ATen's
//! index copies (their time is data movement, not elementwise math to fuse away).

use super::families::{INDEXING, INDUCTOR_FUSED};
use super::rule::{Match, Subject};
use super::Bucket;
use crate::analysis::rules::kernel_name::KernelName;

/// Why a fusion fix does not fit a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfusable {
    /// A Triton kernel torch.compile generated from fused nodes. Inductor names them
    /// `"_".join(["triton", category[:3], fused_name, suffix])` (torch/_inductor/codegen/simd.py,
    /// define_kernel; categories from runtime/benchmark_report.py: pointwise, reduction,
    /// persistent_reduction, split_scan, ...), e.g. `triton_poi_fused_add_mul_0`,
    /// `triton_red_fused__to_copy_mean_1`, `triton_per_fused_add_mean_mul_pow_rsqrt_2`.
    Inductor,
    /// ATen's indexing kernels (aten/src/ATen/native/cuda: IndexKernel.cu
    /// `index_elementwise_kernel`, IndexKernelUtils.cu `vectorized_gather_kernel`,
    /// ScatterGatherKernel.cu `_scatter_gather_elementwise_kernel`, Indexing.cu
    /// `indexSelectLargeIndex` / `indexFuncLargeIndex`): they move data.
    IndexCopy,
}

/// Whether a kernel is one a fusion fix does not fit; `bucket` is what its name's rule says
/// (top-k's `gatherTopK` is a selection, not a copy, and its rule says elementwise).
pub fn unfusable(name: &KernelName, bucket: Option<Bucket>) -> Option<Unfusable> {
    let subject = Subject::kernel(name);
    if Match::Any(INDUCTOR_FUSED).matches(&subject) {
        Some(Unfusable::Inductor)
    } else if bucket == Some(Bucket::Memory) && Match::Any(INDEXING).matches(&subject) {
        Some(Unfusable::IndexCopy)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::rules::taxonomy::KernelFacts;

    fn of(raw: &str) -> Option<Unfusable> {
        KernelFacts::of(raw).unfusable
    }

    #[test]
    fn inductor_and_index_kernels_by_their_names() {
        for k in [
            "triton_poi_fused_add_mul_0",
            "triton_red_fused__to_copy_mean_1",
            "triton_per_fused_add_mean_mul_pow_rsqrt_2",
        ] {
            assert_eq!(of(k), Some(Unfusable::Inductor), "{k}");
        }
        for k in [
            "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
            "void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<4> > > >(long)",
            "void at::native::_scatter_gather_elementwise_kernel<128, 4, at::native::_cuda_scatter_gather_internal_kernel<true, float>::operator()<at::native::ReduceAdd>(at::TensorIterator&, long, long, long, at::native::ReduceAdd const&)::{lambda(int)#1}>(int, at::native::_cuda_scatter_gather_internal_kernel<true, float>::operator()<at::native::ReduceAdd>(at::TensorIterator&, long, long, long, at::native::ReduceAdd const&)::{lambda(int)#1})",
        ] {
            assert_eq!(of(k), Some(Unfusable::IndexCopy), "{k}");
        }
        // Fusable: an eager add, an unfused RMSNorm, a matmul template, top-k's gather.
        for k in [
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
            "triton_tem_fused_addmm_gelu_0",
            "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, unsigned int)",
        ] {
            assert_eq!(of(k), None, "{k}");
        }
    }
}
