//! `finish` on sums built by hand: rates, the bound, recoverable time, MFU.

use super::*;
use crate::report::Bound;

fn h100ish() -> Peaks {
    Peaks {
        device: "test device".into(),
        tflops: vec![(Precision::Fp32, 60.0), (Precision::Bf16, 1000.0)],
        tbps: 4.0,
        source: "test".into(),
    }
}

fn kernel(time_ns: i64, flops: f64, bytes: f64, p: Option<Precision>, bucket: Bucket) -> KernelSum {
    let mut by_precision = [0.0; 8];
    by_precision[p.map_or(UNKNOWN_PRECISION, Precision::index)] = flops;
    KernelSum { time_ns, count: 1, flops, bytes, by_precision, bucket: Some(bucket), ..KernelSum::default() }
}

fn finished(kernels: Vec<(String, String, KernelSum)>, steps: Vec<[f64; 8]>, model: Option<ModelSize>) -> Efficiency {
    let kernel_ns = kernels.iter().map(|k| k.2.time_ns).sum();
    let s = WorkSums { kernels, steps, kernel_ns, known_ns: [kernel_ns, 0, 0], ..WorkSums::default() };
    let names = ["ProfilerStep#1"];
    finish(
        s,
        Finish {
            peaks: Some(h100ish()),
            unknown_device: None,
            span_us: 2000.0,
            steps: names.iter().map(|n| (*n, 1000.0)).collect(),
            training: true,
            model,
            top_n: 25,
        },
    )
    .expect("kernels")
}

#[test]
fn rates_bounds_and_recoverable_time() {
    // A GEMM: 1e12 FLOP in 2 ms = 500 TFLOP/s, 50% of the bf16 peak; intensity 1000 FLOP/B,
    // above the ridge (250): compute-bound. At 70% it would take 2 * 50/70 ms.
    let gemm = kernel(2_000_000, 1e12, 1e9, Some(Precision::Bf16), Bucket::Gemm);
    // A copy: 4e9 bytes in 2 ms = 2 TB/s, 50% of the bandwidth, memory-bound.
    let copy = kernel(2_000_000, 0.0, 4e9, Some(Precision::Bf16), Bucket::Memory);
    // A kernel already past the target recovers nothing.
    let fast = kernel(1_000_000, 0.8e12, 1e8, Some(Precision::Bf16), Bucket::Gemm);
    let e = finished(
        vec![
            ("gemm".into(), "gemm".into(), gemm),
            ("copy".into(), "copy".into(), copy),
            ("fast".into(), "fast".into(), fast),
        ],
        vec![],
        None,
    );
    let by = |n: &str| e.kernels.iter().find(|k| k.name == n).unwrap();
    let g = by("gemm");
    assert!((g.tflops_per_s - 500.0).abs() < 1e-9 && (g.pct_of_peak.unwrap() - 50.0).abs() < 1e-9);
    assert_eq!((g.bound, g.intensity), (Some(Bound::Compute), Some(1000.0)));
    assert!((g.recoverable_us - 2000.0 * (1.0 - 50.0 / 70.0)).abs() < 1e-6);
    let c = by("copy");
    assert_eq!(c.bound, Some(Bound::Memory));
    assert!((c.tbps - 2.0).abs() < 1e-9 && (c.pct_of_bandwidth.unwrap() - 50.0).abs() < 1e-9);
    assert!((by("fast").pct_of_peak.unwrap() - 80.0).abs() < 1e-9 && by("fast").recoverable_us == 0.0);
    // The GEMM and copy recover the same time; the longer kernel comes first, then the name.
    assert_eq!(e.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["copy", "gemm", "fast"]);
    // The GEMM bucket: time-weighted, (50% x 2 ms + 80% x 1 ms) / 3 ms.
    let gemm_bucket = e.buckets.iter().find(|b| b.bucket == Bucket::Gemm).unwrap();
    assert!((gemm_bucket.pct_of_roof.unwrap() - 60.0).abs() < 1e-9);
}

#[test]
fn mfu_against_the_dominant_precision_and_the_analytic_figure() {
    let gemm = kernel(2_000_000, 1e12, 1e9, Some(Precision::Bf16), Bucket::Gemm);
    let small = kernel(1_000_000, 1e9, 1e9, Some(Precision::Fp32), Bucket::Elementwise);
    let mut step = [0.0; 8];
    step[Precision::Bf16.index()] = 0.5e12;
    step[UNKNOWN_PRECISION] = 0.5e12;
    let model = ModelSize { params: 1e8, tokens_per_step: 1024.0 };
    let e = finished(
        vec![("gemm".into(), "gemm".into(), gemm), ("small".into(), "small".into(), small)],
        vec![step],
        Some(model),
    );
    let trace = &e.mfu[0];
    // (1e12 + 1e9) FLOP over 2 ms against 1000 TFLOP/s.
    assert_eq!(trace.precision, Some(Precision::Bf16));
    assert!((trace.mfu_pct.unwrap() - 50.05).abs() < 1e-9);
    // The step: 1e12 FLOP (half of no known precision, counted with the bf16) in 1 ms.
    assert!((e.mfu[1].mfu_pct.unwrap() - 100.0).abs() < 1e-9);
    // 6 * 1e8 * 1024 FLOP per step in 1 ms against 1000 TFLOP/s = 61.44%.
    assert!((e.mfu[1].analytic_mfu_pct.unwrap() - 61.44).abs() < 1e-9);
    assert_eq!(e.analytic_factor, 6.0);
}

#[test]
fn user_peaks_replace_the_table() {
    let user = UserPeaks { tflops: vec![(None, 100.0)], tbps: Some(1.0) };
    let p = with_user(None, &user).unwrap();
    assert_eq!(p.tflops.len(), Precision::ALL.len());
    assert_eq!((p.tbps, p.source.as_str()), (1.0, "given by the user"));
    assert!(with_user(None, &UserPeaks::default()).is_none(), "an unknown device and no figures: no peaks");
    let only_flops = UserPeaks { tflops: vec![(Some(Precision::Bf16), 100.0)], tbps: None };
    assert!(with_user(None, &only_flops).is_none(), "a roofline needs the bandwidth too");
    assert_eq!(
        UserPeaks::parse_tflops("bf16=989, fp8=1979").unwrap(),
        vec![(Some(Precision::Bf16), 989.0), (Some(Precision::Fp8), 1979.0)]
    );
    assert!(UserPeaks::parse_tflops("fp7=1").is_err() && UserPeaks::parse_tflops("-3").is_err());
}

#[test]
fn rebased_on_other_peaks_the_figures_follow() {
    let gemm = kernel(2_000_000, 1e12, 1e9, Some(Precision::Bf16), Bucket::Gemm);
    let e = finished(vec![("gemm".into(), "gemm".into(), gemm)], vec![[0.0; 8]], None);
    // Half the peak: the same kernel is at twice the share of it.
    let mut half = h100ish();
    half.tflops = vec![(Precision::Bf16, 500.0)];
    let model = ModelSize { params: 1e8, tokens_per_step: 1024.0 };
    let r = rebase(&e, Some(half), Some(model));
    assert!((r.kernels[0].pct_of_peak.unwrap() - 100.0).abs() < 1e-9);
    assert_eq!(r.kernels[0].recoverable_us, 0.0);
    assert!((r.mfu[0].mfu_pct.unwrap() - 2.0 * e.mfu[0].mfu_pct.unwrap()).abs() < 1e-9);
    assert!(r.mfu[0].analytic_mfu_pct.is_some() && e.mfu[0].analytic_mfu_pct.is_none());
    // Without peaks, rates stay and shares go.
    let none = rebase(&e, None, None);
    assert!(none.kernels[0].pct_of_peak.is_none() && none.kernels[0].tflops_per_s == e.kernels[0].tflops_per_s);
    assert!(none.mfu[0].mfu_pct.is_none());
}
