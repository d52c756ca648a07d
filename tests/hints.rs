//! Hints earn their place with the GPU time they put at stake: ranked by it, info when it is
//! small, and a sync warning only for syncs that left the GPU idle.

mod common;
use common::{find_hint as hint, shared_traces, trace_files, Trace, CPU_TID};
use tracesight::analysis::passes::hints::{HintId, SMALL_STAKE_PCT};
use tracesight::report::{Severity, TraceReport};

const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

/// Ranked by stake, every stake a finite non-negative time, small stakes info.
fn assert_ranked(name: &str, r: &TraceReport) {
    for w in r.hints.windows(2) {
        assert!(
            w[0].stake_us >= w[1].stake_us,
            "{name}: {} ({}) ranked above {} ({})",
            w[0].id,
            w[0].stake_us,
            w[1].id,
            w[1].stake_us
        );
    }
    let small = r.gpu.span_us * SMALL_STAKE_PCT / 100.0;
    for h in &r.hints {
        assert!(h.stake_us.is_finite() && h.stake_us >= 0.0, "{name}: {} stake {}", h.id, h.stake_us);
        if h.stake_us < small {
            assert_eq!(
                h.severity,
                Severity::Info,
                "{name}: {} has a small stake ({} us) but is {}",
                h.id,
                h.stake_us,
                h.severity
            );
        }
    }
}

#[test]
fn a_sync_while_the_gpu_idles_is_a_warning_with_its_overlap_at_stake() {
    // The GPU runs 100 us, then idles while the CPU blocks in cudaDeviceSynchronize for 800 us,
    // then runs again: the sync overlaps the idle gap.
    let r = Trace::call_in_gpu_gap("cudaDeviceSynchronize", GEMM).report();
    let h = hint(&r, HintId::HostSync).expect("host_sync fires");
    assert_eq!(h.severity, Severity::Warning);
    // The idle gap is 100..1000 us; the sync covers 100..900 of it.
    assert_eq!(h.stake_us, 800.0);
    assert!(h.evidence.iter().any(|e| e.contains("cudaDeviceSynchronize")), "{:?}", h.evidence);
    assert_ranked("sync", &r);
}

#[test]
fn a_sync_while_the_gpu_is_busy_is_no_warning() {
    // The CPU is ahead: it blocks for 800 us while a 1 ms kernel runs. The GPU never waits on
    // the sync; the trace's idle comes from a later gap with no sync in it.
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.cpu = 0;
    t.launch(&["aten::mm"], GEMM, 0, 1_000);
    t.span("cuda_runtime", "cudaDeviceSynchronize", 100, 800, CPU_TID, None);
    t.cpu = 2_000;
    t.launch(&["aten::mm"], GEMM, 2_100, 100);
    let r = t.report();
    assert!(r.gpu.idle_us > 1_000.0, "the trace idles: {}", r.gpu.idle_us);
    assert!(hint(&r, HintId::HostSync).is_none(), "{:?}", r.hints.iter().map(|h| h.id).collect::<Vec<_>>());
}

#[test]
fn blocking_copies_and_frees_count_as_syncs() {
    for call in ["cudaMemcpy", "hipMemcpyWithStream", "cudaFree"] {
        let r = Trace::call_in_gpu_gap(call, GEMM).report();
        assert_eq!(r.launch.sync_call_us, 800.0, "{call}");
        assert_eq!(hint(&r, HintId::HostSync).map(|h| h.stake_us), Some(800.0), "{call}");
    }
    // The asynchronous copy does not block.
    let r = Trace::call_in_gpu_gap("cudaMemcpyAsync", GEMM).report();
    assert_eq!(r.launch.sync_call_us, 0.0);
    assert!(hint(&r, HintId::HostSync).is_none());
}

#[test]
fn the_sync_fix_fits_the_call_that_blocked() {
    // Each call holds the whole 800 us of the 900 us idle gap: the fix is the one for its
    // kind, and the idle hint points at the syncs before anything else.
    for (call, says, never) in [
        ("hipFree", "num_alloc_retries", ".item()"),
        ("cudaFree", "empty_cache()", "non_blocking"),
        ("hipMemcpyWithStream", "non_blocking=True", "empty_cache"),
        ("cudaStreamSynchronize", "torch.cuda.synchronize()", "empty_cache"),
    ] {
        let r = Trace::call_in_gpu_gap(call, GEMM).report();
        let h = hint(&r, HintId::HostSync).unwrap_or_else(|| panic!("{call}: {:?}", r.hints));
        assert!(h.fix.contains(says) && !h.fix.contains(never), "{call}: {}", h.fix);
        let idle = hint(&r, HintId::GpuIdle).expect("gpu_idle fires");
        assert!(
            idle.fix.starts_with("89% of the idle is the CPU blocked in synchronising calls"),
            "{call}: {}",
            idle.fix
        );
    }
    // A sync that holds a small part of the idle leaves the idle advice as it was.
    let r = Trace::call_in_gpu_gap_for("cudaFree", 100, GEMM).report();
    let idle = hint(&r, HintId::GpuIdle).expect("gpu_idle fires");
    assert!(!idle.fix.contains("synchronising calls (see host_sync)"), "{}", idle.fix);
}

#[test]
fn the_largest_stake_comes_first_whatever_the_rule_order() {
    // Mostly idle (gpu_idle, stake = the idle time) with an elementwise-heavy busy part
    // (elementwise_share, stake = its 300 us). The idle stake is larger, so gpu_idle leads.
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    t.cpu = 0;
    let add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
    t.launch(&["aten::add"], add, 0, 300);
    t.launch(&["aten::mm"], GEMM, 300, 100);
    t.cpu = 5_000;
    t.launch(&["aten::mm"], GEMM, 5_000, 100);
    let r = t.report();
    let ids: Vec<HintId> = r.hints.iter().map(|h| h.id).collect();
    assert_eq!(ids.first(), Some(&HintId::GpuIdle), "{ids:?}");
    let idle = hint(&r, HintId::GpuIdle).unwrap();
    assert_eq!(idle.stake_us, r.gpu.idle_us);
    let elementwise = hint(&r, HintId::ElementwiseShare).expect("elementwise share fires");
    assert!((elementwise.stake_us - 300.0).abs() < 1e-9, "{}", elementwise.stake_us);
    assert_ranked("mixed", &r);
}

#[test]
fn every_fixture_and_shared_trace_ranks_its_hints_by_stake() {
    for f in common::json_fixtures() {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if let Ok(r) = common::analyze_bytes(&name, &std::fs::read(&f).unwrap()) {
            assert_ranked(&name, &r);
        }
    }
    let Some(dir) = shared_traces() else { return };
    for f in trace_files(&dir) {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let r = common::analyze_bytes(&name, &std::fs::read(&f).unwrap()).unwrap();
        assert_ranked(&name, &r);
    }
}

/// 10 GEMMs of 20 us beside 10 BatchNorm kernels of `bn_us` (forward, and backward when
/// `training`), and 10 adds of 30 us, back to back.
fn cnn(bn_us: i64, training: bool) -> TraceReport {
    // ATen's kernels (aten/src/ATen/native/cuda/Normalization.cuh, CUDALoops.cuh).
    const BN: &str = "void at::native::batch_norm_transform_input_kernel<float, float, float, true, int>(at::GenericPackedTensorAccessor<float const, 3ul, at::RestrictPtrTraits, int>)";
    const BN_BACK: &str = "void at::native::batch_norm_backward_kernel<float, float, float, int>(at::GenericPackedTensorAccessor<float const, 3ul, at::DefaultPtrTraits, int>)";
    const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    let mut gpu = 0;
    let mut run = |t: &mut Trace, chain: &[&str], kernel: &str, dur: i64| {
        t.launch(chain, kernel, gpu, dur);
        gpu += dur;
    };
    for _ in 0..10 {
        run(&mut t, &["aten::conv2d", "aten::mm"], GEMM, 20);
        run(&mut t, &["aten::batch_norm", "aten::native_batch_norm"], BN, bn_us);
        run(&mut t, &["aten::add"], ADD, 30);
        if training {
            run(
                &mut t,
                &["autograd::engine::evaluate_function: NativeBatchNormBackward0", "aten::native_batch_norm_backward"],
                BN_BACK,
                bn_us,
            );
        }
    }
    t.report()
}

#[test]
fn batch_norm_gets_its_own_elementwise_fix() {
    let fix = |r: &TraceReport| hint(r, HintId::ElementwiseShare).map(|h| h.fix.clone()).unwrap_or_default();
    let train = cnn(50, true);
    assert!(train.training);
    assert!(fix(&train).starts_with("most of it is BatchNorm: torch.compile fuses"), "{}", fix(&train));
    let evidence = &hint(&train, HintId::ElementwiseShare).unwrap().evidence;
    // 10 x (50 + 50) us of BatchNorm against 10 x 30 us of adds.
    assert!(
        evidence.iter().any(|e| e == "BatchNorm ops (forward and backward) = 1.00 ms (77% of the elementwise time)"),
        "{evidence:?}"
    );
    let infer = cnn(50, false);
    assert!(!infer.training);
    assert!(fix(&infer).starts_with("most of it is BatchNorm: in inference, fold it"), "{}", fix(&infer));
    // BatchNorm a small part of the elementwise time: the general fusion advice.
    let small = cnn(10, false);
    assert!(fix(&small).starts_with("fuse norm + activation"), "{}", fix(&small));
    // No attention kernels: no transformer comparison in the core-compute hint.
    let core = hint(&train, HintId::CoreComputeLow).expect("core_compute_low fires");
    assert!(!core.message.contains("Llama"), "{}", core.message);
}
