//! What a kernel's name says about it, separated from what its signature merely mentions.
//!
//! Profilers write kernels as full C++ signatures (`void ns::kernel<T, 4>(Params, int)`),
//! sometimes still Itanium-mangled (`_ZN5aiter24add_rmsnorm_quant_kernel...` from HIP). Rules
//! must match the kernel's own namespace and function name: an argument type such as
//! `cudnn::reduced_divisor` or a template parameter naming `flashinfer::` says nothing about
//! what the kernel does. Wrapper kernels (`cutlass::device_kernel<Op>`, PyTorch's
//! `vectorized_elementwise_kernel<4, Functor>`) are the exception: their identity is the
//! operator in their template arguments, so for those the qualified names inside the template
//! arguments are kept too (never their parameter lists).

/// A kernel name taken apart once per distinct name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelName {
    /// The demangled signature (the raw name when it was not mangled): shown on hover.
    pub full: String,
    /// Qualified function name without return type, template arguments or parameters.
    pub base: String,
    /// For wrapper kernels: the qualified names inside the template arguments, space-separated.
    pub inner: String,
    /// The display form: `base`, with the identifying inner name of a wrapper kept
    /// (`cutlass::device_kernel<flash::FlashAttnBwdSm90>`) and other template arguments folded
    /// to `<…>`.
    pub short: String,
}

/// Wrapper kernels: their last name segment, when the kernel has template arguments.
const WRAPPERS: &[&str] = &[
    "device_kernel",
    "Kernel",
    "Kernel2",
    "kentry",
    "vectorized_elementwise_kernel",
    "unrolled_elementwise_kernel",
    "elementwise_kernel",
    "elementwise_kernel_with_index",
    "index_elementwise_kernel",
    "reduce_kernel",
    "multi_tensor_apply_kernel",
    "distribution_elementwise_grid_stride_kernel",
    "distribution_nullary_kernel",
    "gpu_kernel_impl",
    "gpu_kernel_impl_nocast",
    "launch_kernel",
    "vectorized_templated_elementwise_kernel",
];

/// Template arguments that are plain types or values, never a kernel's identity.
const NOT_IDENTITY: &[&str] = &[
    "int",
    "unsigned",
    "long",
    "short",
    "char",
    "bool",
    "float",
    "double",
    "void",
    "const",
    "true",
    "false",
    "signed",
    "half",
    "__half",
    "__nv_bfloat16",
    "c10::BFloat16",
    "c10::Half",
    "at::Half",
    "at::BFloat16",
    "std::array",
    "at::detail::Array",
    "cutlass::bfloat16_t",
    "cutlass::half_t",
    "OffsetCalculator",
    "TrivialOffsetCalculator",
    "at::native::memory::LoadWithCast",
    "at::native::memory::StoreWithCast",
    "at::native::memory::LoadWithoutCast",
    "at::native::memory::StoreWithoutCast",
    "at::native::ReduceOp",
    "at::native::func_wrapper_t",
    "at::native::(anonymous namespace)::TensorListMetadata",
    "at::native::TensorListMetadata",
    "at::native::gpu_kernel_impl",
    "at::native::gpu_kernel_impl_nocast",
    // Generic functor adapters: the functor they wrap is the identity.
    "at::native::BinaryFunctor",
    "at::native::AUnaryFunctor",
    "at::native::BUnaryFunctor",
    "at::native::(anonymous namespace)::TensorListScalarListMetadata",
];

const ANON: &str = "(anonymous namespace)";
const ANON_WORD: &str = "(anonymous\u{1}namespace)";

impl KernelName {
    pub fn parse(raw: &str) -> KernelName {
        KernelName::parse_demangled(demangle(raw).unwrap_or_else(|| raw.trim().to_string()))
    }

    /// For a name that is already demangled (a report's `name`): no demangler is linked in,
    /// which keeps the page's wasm small.
    pub fn parse_demangled(full: String) -> KernelName {
        let Parsed { base, template } = split_signature(&full);
        let last = base.rsplit("::").next().unwrap_or(&base);
        let is_wrapper = template.is_some() && WRAPPERS.contains(&last);
        let mut inner_names = Vec::new();
        if let (true, Some(t)) = (is_wrapper, template.as_deref()) {
            qualified_names(t, &mut inner_names);
        }
        let inner = inner_names.join(" ");
        let short = match (&template, inner_names.first()) {
            (Some(_), Some(first)) if is_wrapper => format!("{base}<{first}>"),
            (Some(_), _) => format!("{base}<…>"),
            (None, _) => base.clone(),
        };
        KernelName { full, base, inner, short }
    }

    /// The text rules match on: the base name, plus a wrapper's inner names.
    pub fn match_text(&self) -> String {
        if self.inner.is_empty() {
            self.base.clone()
        } else {
            format!("{} {}", self.base, self.inner)
        }
    }

    /// The namespaces of the base name (`flash`, `cutlass` for `cutlass::device_kernel`).
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        let mut parts: Vec<&str> = self.base.split("::").collect();
        parts.pop();
        parts.into_iter()
    }
}

/// The full name as shown: demangled when it was mangled, else as written.
pub fn full_name(name: &str) -> String {
    demangle(name).unwrap_or_else(|| name.to_string())
}

/// The short display form of any GPU row name (memcpy rows are kept as they are).
pub fn short_name(name: &str) -> String {
    KernelName::parse(name).short
}

/// The short display form of a name that is already demangled (see `parse_demangled`).
pub fn short_display(full: &str) -> String {
    KernelName::parse_demangled(full.trim().to_string()).short
}

/// Itanium C++ names (`_Z...`) demangled; None when the name is not mangled or not valid.
fn demangle(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if !raw.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(raw).ok()?;
    sym.demangle().ok()
}

struct Parsed {
    base: String,
    /// The outermost template argument list of the function name, without its brackets.
    template: Option<String>,
}

/// Splits `ret ns::name<targs>(params) const` into `ns::name` and `targs`. Names that are not
/// C++ signatures (Triton's `triton_poi_fused_add_0`, cuBLAS's `sm90_xmma_gemm_...`, memcpy
/// rows such as `Memcpy HtoD (Pageable -> Device)`) come back whole.
fn split_signature(full: &str) -> Parsed {
    let s = full.trim();
    if !s.contains('<') && !s.contains('(') {
        return Parsed { base: s.to_string(), template: None };
    }
    if s.starts_with("Memcpy") || s.starts_with("Memset") {
        return Parsed { base: s.to_string(), template: None };
    }
    let b = s.as_bytes();
    let mut base = String::new();
    let mut template: Option<String> = None;
    // Open brackets; a `>` inside parentheses is a comparison (`enable_if<(8 > 0)>`), not a close.
    let mut stack: Vec<u8> = Vec::new();
    let mut tpl_start = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(ANON.as_bytes()) {
            if stack.is_empty() {
                // Without its space until the return type is split off.
                base.push_str(ANON_WORD);
            }
            i += ANON.len();
            continue;
        }
        if stack.is_empty() && b[i..].starts_with(b"operator") {
            // `operator()`, `operator<`: part of the name, not a bracket.
            let end = s[i..].find(['(', '<']).map(|k| i + k).unwrap_or(b.len());
            let op_end = (end + if s[end..].starts_with("()") { 2 } else { 1 }).min(b.len());
            base.push_str(&s[i..op_end]);
            i = op_end;
            continue;
        }
        let c = b[i];
        match c {
            b'(' if stack.is_empty() => break, // the parameter list
            b'<' | b'(' | b'{' | b'[' => {
                if stack.is_empty() {
                    tpl_start = i + 1;
                }
                stack.push(c);
            }
            b'>' if stack.last() == Some(&b'(') => {}
            b'>' | b')' | b'}' | b']' if !stack.is_empty() => {
                stack.pop();
                if stack.is_empty() && c == b'>' && template.is_none() {
                    template = Some(s[tpl_start..i].trim().to_string());
                }
            }
            // A space at depth 0 ends a return type (`std::enable_if<...>::type ns::kernel<...>`):
            // template arguments seen so far were the return type's.
            b' ' if stack.is_empty() => {
                template = None;
                base.push(' ');
            }
            _ if stack.is_empty() => base.push(c as char),
            _ => {}
        }
        i += 1;
    }
    // Drop a return type: the last space-separated word at depth 0 is the name.
    let base = base.trim();
    let base = base.rsplit(' ').find(|w| !w.is_empty()).unwrap_or(base).replace(ANON_WORD, ANON);
    if base.is_empty() {
        return Parsed { base: s.to_string(), template: None };
    }
    Parsed { base, template }
}

/// The qualified names in template arguments, each with its own template arguments and
/// parameter lists removed (recursively, so `gpu_kernel_impl<CUDAFunctor_add<float>>` gives
/// both), skipping plain types and values.
fn qualified_names(t: &str, out: &mut Vec<String>) {
    let b = t.as_bytes();
    let mut depth_paren = 0usize;
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        let name = cur.trim().trim_end_matches(':').trim();
        let name = name.rsplit(' ').next().unwrap_or(name).replace(ANON_WORD, ANON);
        let name = name.as_str();
        if !name.is_empty()
            && name.as_bytes()[0].is_ascii_alphabetic()
            && !NOT_IDENTITY.contains(&name)
            // `flash::enable_sm90_or_later<Op>` only gates the architecture.
            && !name.rsplit("::").next().is_some_and(|l| l.starts_with("enable_sm"))
            && !out.iter().any(|n| n == name)
            && out.len() < 8
        {
            out.push(name.to_string());
        }
        cur.clear();
    };
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(ANON.as_bytes()) {
            if depth_paren == 0 {
                cur.push_str(ANON_WORD);
            }
            i += ANON.len();
            continue;
        }
        let c = b[i];
        match c {
            b'(' | b'{' | b'[' => {
                if depth_paren == 0 {
                    flush(&mut cur, out);
                }
                depth_paren += 1;
            }
            b')' | b'}' | b']' => depth_paren = depth_paren.saturating_sub(1),
            _ if depth_paren > 0 => {}
            b'<' | b'>' | b',' | b'*' | b'&' => flush(&mut cur, out),
            _ => cur.push(c as char),
        }
        i += 1;
    }
    flush(&mut cur, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_stay_whole() {
        let k = KernelName::parse("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT");
        assert_eq!(k.base, "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT");
        assert_eq!(k.short, k.base);
        assert_eq!(
            KernelName::parse("triton_per_fused_add_mean_mul_pow_rsqrt_0").base,
            "triton_per_fused_add_mean_mul_pow_rsqrt_0"
        );
        assert_eq!(KernelName::parse("Memcpy HtoD (Pageable -> Device)").base, "Memcpy HtoD (Pageable -> Device)");
    }

    #[test]
    fn signatures_lose_return_type_templates_and_parameters() {
        let k = KernelName::parse("void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*, float2 const*, int, cudnn::reduced_divisor, bool)");
        assert_eq!(k.base, "fft2d_c2r_32x32");
        assert_eq!(k.inner, "", "not a wrapper: template arguments are not its identity");
        assert_eq!(k.short, "fft2d_c2r_32x32<…>");
        let k = KernelName::parse("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)");
        assert_eq!(k.base, "at::native::(anonymous namespace)::cunn_SoftMaxForward");
        assert_eq!(
            KernelName::parse("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)").base,
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
        );
    }

    #[test]
    fn wrappers_keep_their_inner_identity() {
        let k = KernelName::parse("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<cutlass::bfloat16_t, 128> > >(flash::FlashAttnBwdSm90<cutlass::bfloat16_t, 128>::Params)");
        assert_eq!(k.base, "cutlass::device_kernel");
        assert!(k.inner.contains("flash::FlashAttnBwdSm90"), "{}", k.inner);
        assert_eq!(k.short, "cutlass::device_kernel<flash::FlashAttnBwdSm90>");
        let k = KernelName::parse("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)");
        assert_eq!(k.inner, "at::native::CUDAFunctor_add");
        let clamp = KernelName::parse("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, float, std::array<char*, 2ul>)");
        assert_eq!(
            clamp.short,
            "at::native::vectorized_elementwise_kernel<at::native::(anonymous namespace)::launch_clamp_scalar>"
        );
        let foreach = KernelName::parse("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>(T1, T2, T3, T4)");
        assert_eq!(foreach.short, "at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::BinaryOpListAlphaFunctor>");
        assert_eq!(k.short, "at::native::vectorized_elementwise_kernel<at::native::CUDAFunctor_add>");
        let k = KernelName::parse("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4>(int)");
        assert!(k.inner.starts_with("at::native::direct_copy_kernel_cuda"), "{}", k.inner);
        let k = KernelName::parse("void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)");
        assert_eq!(k.inner, "cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_64x4_tn_align8");
    }

    #[test]
    fn mangled_names_are_demangled() {
        let k =
            KernelName::parse("_ZN5aiter24add_rmsnorm_quant_kernelIN3c108BFloat16ELi256ELi8EEEvPT_PKS3_S6_PKfS8_fii");
        assert!(k.full.starts_with("void aiter::add_rmsnorm_quant_kernel<c10::BFloat16, 256, 8>("), "{}", k.full);
        assert_eq!(k.base, "aiter::add_rmsnorm_quant_kernel");
        assert_eq!(k.namespaces().collect::<Vec<_>>(), ["aiter"]);
        // Not valid Itanium: kept as it is.
        assert_eq!(KernelName::parse("_Zgarbage").base, "_Zgarbage");
    }

    #[test]
    fn return_types_with_templates_are_dropped() {
        let k = KernelName::parse("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)");
        assert_eq!(k.base, "vllm::fused_add_rms_norm_kernel");
        assert_eq!(k.short, "vllm::fused_add_rms_norm_kernel<…>");
    }

    #[test]
    fn operator_names_are_not_brackets() {
        let k = KernelName::parse("void at::native::foo<4>::operator()(int)");
        assert_eq!(k.base, "at::native::foo::operator()");
    }
}
