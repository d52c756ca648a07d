//! Every real trace in ../shared/traces (skipped with a message when the folder is absent):
//! loads, satisfies the invariants, and gets the facts right that the seed got wrong.

mod common;
use common::*;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::io::Read;
use tracesight::analysis::passes::diagnostics::DiagnosticId;
use tracesight::analysis::rules::taxonomy::{Backend, Bucket};
use tracesight::report::Severity;
use tracesight::report::TraceReport;

fn load(path: &std::path::Path) -> TraceReport {
    let bytes = std::fs::read(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy();
    analyze_bytes(&name, &bytes).unwrap_or_else(|e| panic!("{e}"))
}

fn decompressed(path: &std::path::Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut out).unwrap();
        out
    } else {
        raw
    }
}

#[test]
fn every_real_trace_loads_with_invariants() {
    let Some(dir) = shared_traces() else { return };
    let files = trace_files(&dir);
    assert!(files.len() >= 20, "expected the shared traces, found {}", files.len());
    for f in files {
        let r = load(&f);
        assert_invariants(&r);
        assert!(r.events > 0, "{}", r.file);
        assert!(!r.diagnostics.iter().any(|d| d.severity == Severity::Error), "{}: {:?}", r.file, r.diagnostics);
    }
}

#[test]
fn attention_backends_on_real_gpus() {
    let Some(dir) = shared_traces() else { return };
    let h100 = load(&dir.join("h100-bert-small-flash.json.gz"));
    assert_eq!(h100.attention.backend, Backend::Flash);
    assert!(h100.attention.evidence.iter().any(|e| e.name.contains("pytorch_flash::flash_fwd_kernel")));
    assert!(h100.attention.fix.is_none());
    let mi300 = load(&dir.join("mi300x-bert-small-attn-fwd.json.gz"));
    assert_eq!(mi300.attention.backend, Backend::Vendor);
    assert!(mi300.attention.evidence.iter().any(|e| e.name == "attn_fwd"), "{:?}", mi300.attention.evidence);
    // GEMMs are GEMMs (the seed put cuBLAS/hipBLASLt kernels in "other").
    for r in [&h100, &mi300] {
        let gemm = r.buckets.iter().find(|b| b.id == Bucket::Gemm).unwrap();
        assert!(gemm.pct > 30.0, "{}: GEMM {}%", r.file, gemm.pct);
        let other = r.buckets.iter().find(|b| b.id == Bucket::Other).map(|b| b.pct).unwrap_or(0.0);
        assert!(other < 5.0, "{}: other {other}%", r.file);
    }
}

#[test]
fn old_formats_show_their_gpu_time() {
    let Some(dir) = shared_traces() else { return };
    for name in [
        "old-2020-resnet50-bare-array.pt.trace.json.gz",
        "old-2021-resnet50-v100-memory.pt.trace.json.gz",
        "old-2021-v100-small-computeProperties.json",
        "inference-rank1-no-schemaVersion.json.gz",
    ] {
        let r = load(&dir.join(name));
        assert!(r.gpu.kernel_time_us > 0.0 && r.has_gpu, "{name}: no GPU time");
        // The inference trace was trimmed to GPU and runtime rows: it has no ops to link to.
        if !name.starts_with("inference") {
            assert!(r.top_kernels.iter().any(|k| k.op.is_some()), "{name}: no kernel attributed to an op");
        }
    }
    let v100 = load(&dir.join("old-2021-v100-small-computeProperties.json"));
    assert_eq!(v100.device.name.as_deref(), Some("Tesla V100-DGXS-32GB"));
    let resnet = load(&dir.join("old-2020-resnet50-bare-array.pt.trace.json.gz"));
    assert!(resnet.steps.len() >= 5, "ProfilerStep spans in cat Operator");
}

#[test]
fn cpu_only_and_distributed_metadata() {
    let Some(dir) = shared_traces() else { return };
    let cpu = load(&dir.join("cpu-only-rank34.pt.trace.json.gz"));
    assert!(!cpu.has_gpu);
    assert_eq!((cpu.rank, cpu.world_size), (Some(34), Some(300)));
    assert!(cpu.diagnostics.iter().any(|d| d.id == DiagnosticId::NoGpuRows));
    // No launch calls either: CPU-only, not a profiler that lost the GPU's rows.
    assert!(!cpu.diagnostics.iter().any(|d| d.id == DiagnosticId::GpuActivityLost));
    let nccl = load(&dir.join("a100-nccl-2rank-rank0.json.gz"));
    assert_eq!((nccl.rank, nccl.world_size), (Some(0), Some(2)));
    assert!(nccl.gpu.comm_us > 0.0);
    assert!(nccl.buckets.iter().any(|b| b.id == Bucket::Communication && b.pct > 0.0));
    let sync = load(&dir.join("a100-alexnet-cuda-sync.json.gz"));
    assert!(sync.diagnostics.iter().any(|d| d.id == DiagnosticId::CudaSyncRows));
}

#[test]
fn dlrm_ranks_in_rank_order() {
    let Some(dir) = shared_traces() else { return };
    let mut files = trace_files(&dir.join("dlrm-8rank-v100"));
    files.reverse();
    let report = tracesight::combine(files.iter().map(|f| Ok(load(f))).collect());
    let ranks: Vec<Option<i64>> = report.traces.iter().map(|t| t.rank).collect();
    assert_eq!(ranks, (0..8).map(Some).collect::<Vec<_>>());
    assert_eq!(report.ranks.len(), 8);
    assert!(report.traces.iter().all(|t| t.world_size == Some(8) && t.gpu.comm_us > 0.0));
}

/// Nanoseconds from a JSON number's text, computed independently of the library.
fn ns(raw: &RawValue) -> i128 {
    let t = raw.get().trim_matches('"');
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let frac: String = frac.chars().chain("000".chars()).take(3).collect();
    let sign = if int.starts_with('-') { -1 } else { 1 };
    int.parse::<i128>().unwrap() * 1000 + sign * frac.parse::<i128>().unwrap()
}

#[test]
fn busy_and_span_equal_the_exact_union_per_device() {
    let Some(dir) = shared_traces() else { return };
    for f in trace_files(&dir) {
        let bytes = decompressed(&f);
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let events = v.get("traceEvents").unwrap_or(&v).as_array().unwrap().clone();
        let mut per_device: HashMap<i64, Vec<(i128, i128)>> = HashMap::new();
        for e in events {
            let cat = e.get("cat").and_then(|c| c.as_str()).unwrap_or("").to_ascii_lowercase();
            if e.get("ph").and_then(|p| p.as_str()) != Some("X")
                || !["kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"].contains(&cat.as_str())
            {
                continue;
            }
            let raw: HashMap<String, Box<RawValue>> = serde_json::from_str(&e.to_string()).unwrap();
            let start = ns(&raw["ts"]);
            let dur = raw.get("dur").map(|d| ns(d)).unwrap_or(0).max(0);
            let device = e["args"].get("device").and_then(|d| d.as_i64()).or_else(|| e["pid"].as_i64()).unwrap_or(0);
            per_device.entry(device).or_default().push((start, start + dur));
        }
        let r = load(&f);
        let mut all = Vec::new();
        for (device, mut v) in per_device.clone() {
            all.extend(v.iter().copied());
            v.sort();
            let (first, last) = (v[0].0, v.iter().map(|x| x.1).max().unwrap());
            let mut busy = 0i128;
            let mut cur: Option<(i128, i128)> = None;
            for (s, e) in v {
                match cur {
                    Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
                    Some((cs, ce)) => {
                        busy += ce - cs;
                        cur = Some((s, e));
                    }
                    None => cur = Some((s, e)),
                }
            }
            if let Some((cs, ce)) = cur {
                busy += ce - cs;
            }
            let got = if per_device.len() == 1 {
                r.gpu.clone()
            } else {
                r.devices.iter().find(|d| d.device == device).unwrap().time.clone()
            };
            let (busy_us, span_us) = (busy as f64 / 1000.0, (last - first) as f64 / 1000.0);
            assert!(
                (got.busy_us - busy_us).abs() <= 1e-4 * busy_us.max(1.0),
                "{}: device {device} busy {} vs {busy_us}",
                r.file,
                got.busy_us
            );
            assert!(
                (got.span_us - span_us).abs() <= 1e-4 * span_us.max(1.0),
                "{}: device {device} span {} vs {span_us}",
                r.file,
                got.span_us
            );
        }
        assert_eq!(r.gpu.kernel_count as usize, all.len(), "{}", r.file);
    }
}

#[test]
fn streamed_gzip_in_tiny_pieces_matches_slice() {
    let Some(dir) = shared_traces() else { return };
    for name in ["a100-nccl-2rank-rank0.json.gz", "old-2020-resnet50-bare-array.pt.trace.json.gz"] {
        let gz = std::fs::read(dir.join(name)).unwrap();
        let plain = decompressed(&dir.join(name));
        let a = analyze_bytes(name, &plain).unwrap();
        let b = analyze_with(name, Trickle { data: &gz, n: 7 }, 4096).unwrap();
        assert_eq!(a, b, "{name}");
    }
}

#[test]
fn cut_short_real_traces_still_report() {
    let Some(dir) = shared_traces() else { return };
    let gz = std::fs::read(dir.join("a100-nccl-2rank-rank0.json.gz")).unwrap();
    let full = analyze_bytes("x", &gz).unwrap();
    // Cut the gzip file in half: a truncated gzip stream.
    let half = analyze_bytes("x", &gz[..gz.len() / 2]).unwrap();
    assert!(half.events > 0 && half.events < full.events);
    let d = half.diagnostics.iter().find(|d| d.severity == Severity::Error).unwrap();
    assert!(d.message.contains("cut short"), "{}", d.message);
    // Cut the JSON itself.
    let plain = decompressed(&dir.join("a100-nccl-2rank-rank0.json.gz"));
    let cut = analyze_bytes("x", &plain[..plain.len() * 2 / 3]).unwrap();
    assert!(cut.diagnostics.iter().any(|d| d.id == DiagnosticId::Truncated));
    assert_invariants(&cut);
}

/// The labelled corpus: for each shared trace, the bucket of its top kernels (checked by hand
/// against what each kernel does) and the attention backend.
/// A trace file, its attention backend, and (kernel name part, bucket) labels.
type Labelled = (&'static str, Backend, &'static [(&'static str, Bucket)]);

const LABELS: &[Labelled] = &[
    (
        "a100-alexnet-cuda-sync.json.gz",
        Backend::None,
        &[
            ("Memcpy HtoD (Pageable -> Device)", Bucket::Memory),
            ("ampere_sgemm_32x32_sliced1x4_tn", Bucket::Gemm),
            ("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", Bucket::Gemm),
            ("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32", Bucket::Gemm),
            ("CUDAFunctor_add<float>", Bucket::Elementwise),
            ("max_pool_forward_nchw", Bucket::Elementwise),
            ("fft2d_c2r_32x32", Bucket::Gemm),
            ("fft2d_r2c_32x32", Bucket::Gemm),
            ("ampere_gcgemm_64x64_nt", Bucket::Gemm),
        ],
    ),
    (
        "a100-nccl-2rank-rank0.json.gz",
        Backend::None,
        &[
            ("ncclKernel_AllReduce_RING_LL_Sum_float", Bucket::Communication),
            ("cudnn::ops::nchwToNhwcKernel", Bucket::Memory),
            ("cudnn::ops::nhwcToNchwKernel", Bucket::Memory),
            ("cudnn::bn_bw_1C11_kernel_new", Bucket::Elementwise),
            ("cudnn::bn_fw_tr_1C11_kernel_NCHW", Bucket::Elementwise),
            ("cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4", Bucket::Gemm),
            ("cutlass_cudnn_train::Kernel<cutlass_cudnn_train::conv::kernel::ImplicitGemmConvolution", Bucket::Gemm),
            ("Memcpy DtoD (Device -> Device)", Bucket::Memory),
        ],
    ),
    (
        "gp100-gpu-user-annotation.json.gz",
        Backend::None,
        &[
            ("gemmk1_kernel", Bucket::Gemm),
            ("gemv2N_kernel", Bucket::Gemm),
            ("MeanOps", Bucket::Elementwise),
            ("sigmoid_kernel_cuda", Bucket::Elementwise),
        ],
    ),
    (
        "h100-bert-small-flash.json.gz",
        Backend::Flash,
        &[
            ("cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8", Bucket::Gemm),
            ("pytorch_flash::flash_fwd_kernel", Bucket::Attention),
            ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64", Bucket::Gemm),
            ("vectorized_layer_norm_kernel", Bucket::Elementwise),
            ("indexSelectLargeIndex", Bucket::Embedding),
            ("GeluCUDAKernelImpl", Bucket::Elementwise),
        ],
    ),
    (
        "inference-rank1-no-schemaVersion.json.gz",
        Backend::None,
        &[
            ("cutlass_70_wmma_tensorop_f16_s161616gemm_f16_32x32_64x2_tn_align8", Bucket::Gemm),
            ("gemmk1_kernel", Bucket::Gemm),
            ("direct_copy_kernel_cuda", Bucket::Memory),
        ],
    ),
    (
        "mi300x-bert-small-attn-fwd.json.gz",
        Backend::Vendor,
        &[
            ("attn_fwd", Bucket::Attention),
            ("Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1", Bucket::Gemm),
            ("vectorized_layer_norm_kernel", Bucket::Elementwise),
            ("indexSelectLargeIndex", Bucket::Embedding),
        ],
    ),
    (
        "mi300x-ddp-resnet18.json.gz",
        Backend::None,
        &[
            ("batch_norm_backward_kernel", Bucket::Elementwise),
            ("batched_transpose_32x32_half", Bucket::Memory),
            ("batch_norm_collect_statistics_kernel", Bucket::Elementwise),
            ("igemm_bwd_gtcx3_nhwc_bf16", Bucket::Gemm),
            ("igemm_wrw_gtcx3_nhwc_bf16", Bucket::Gemm),
            ("kernel_grouped_conv_fwd_xdl_cshuffle_v3", Bucket::Gemm),
            ("SubTensorOpWithScalar1d", Bucket::Memory),
        ],
    ),
    (
        "old-2020-resnet50-bare-array.pt.trace.json.gz",
        Backend::None,
        &[
            ("cudnn::cnn::wgrad_alg0_engine", Bucket::Gemm),
            ("cudnn::detail::dgrad_engine", Bucket::Gemm),
            ("cudnn::bn_bw_1C11_kernel_new", Bucket::Elementwise),
            ("implicit_convolve_sgemm", Bucket::Gemm),
            ("volta_scudnn_winograd_128x128", Bucket::Gemm),
            ("volta_sgemm_128x64_nt", Bucket::Gemm),
            ("cask_cudnn::computeOffsetsKernel", Bucket::Gemm),
        ],
    ),
    (
        "old-2021-resnet50-v100-memory.pt.trace.json.gz",
        Backend::None,
        &[
            ("cudnn::detail::dgrad_engine", Bucket::Gemm),
            ("implicit_convolve_sgemm", Bucket::Gemm),
            ("Memcpy HtoD (Pageable -> Device)", Bucket::Memory),
        ],
    ),
    (
        "rocm-mi250-minitoy-train.json.gz",
        Backend::None,
        &[
            ("Memcpy HtoD (Host -> Device)", Bucket::Memory),
            ("Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1", Bucket::Gemm),
            ("multi_tensor_apply_kernel", Bucket::Optimizer),
            ("mse_kernel_cuda", Bucket::Elementwise),
        ],
    ),
    (
        "dlrm-8rank-v100/worker0_step_12.1694128201545.pt.trace.json",
        Backend::None,
        &[
            ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", Bucket::Communication),
            ("ncclKernel_AllReduce_RING_LL_Sum_float", Bucket::Communication),
            ("volta_sgemm_128x32_nt", Bucket::Gemm),
            ("linearize_index_kernel", Bucket::Embedding),
        ],
    ),
];

/// Kernels allowed in `other`, each with the reason it has no bucket. Empty: on every shared
/// trace every kernel has a bucket.
const OTHER_ALLOWED: &[(&str, &str)] = &[];

#[test]
fn labelled_corpus_of_the_shared_traces() {
    let Some(dir) = shared_traces() else { return };
    for (file, backend, labels) in LABELS {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let r = tracesight::analyze_reader(
            file,
            &bytes[..],
            &tracesight::Options { top_n: 10_000, ..Default::default() },
            &mut |_| true,
        )
        .unwrap();
        assert_eq!(r.attention.backend, *backend, "{file}");
        for (needle, want) in *labels {
            let rows: Vec<_> = r.top_kernels.iter().filter(|k| k.name.contains(needle)).collect();
            assert!(!rows.is_empty(), "{file}: no kernel like {needle}");
            // The name's largest share is in the labelled bucket.
            let top = rows.iter().max_by(|a, b| a.time_us.total_cmp(&b.time_us)).unwrap();
            assert_eq!(top.bucket, *want, "{file}: {needle}");
        }
    }
}

#[test]
fn other_is_small_and_explained_on_every_shared_trace() {
    let Some(dir) = shared_traces() else { return };
    for f in trace_files(&dir) {
        let bytes = std::fs::read(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let r = tracesight::analyze_reader(
            &name,
            &bytes[..],
            &tracesight::Options { top_n: 10_000, ..Default::default() },
            &mut |_| true,
        )
        .unwrap();
        let other = r.buckets.iter().find(|b| b.id == Bucket::Other).map(|b| b.pct).unwrap_or(0.0);
        assert!(other < 10.0, "{name}: other is {other:.1}%");
        for k in r.top_kernels.iter().filter(|k| k.bucket == Bucket::Other) {
            assert!(
                OTHER_ALLOWED.iter().any(|(n, _)| k.name.contains(n)),
                "{name}: {} is in other with no reason listed",
                k.name
            );
        }
    }
}
