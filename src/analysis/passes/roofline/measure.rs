//! A kernel's, bucket's and window's figures against the peaks, from the report's own numbers
//! (time, FLOPs, bytes, precision): so the page can measure against the user's figures without
//! reading the trace again.

use crate::report::{Bound, BucketWork, Efficiency, KernelWork, ModelSize, Peaks, TARGET_PCT};
use crate::vocab::units::us;
use crate::vocab::Precision;

/// A GPU kernel cannot take less than this for any work (us): the floor under the time a kernel
/// would take at the target efficiency, so tiny kernels are not promised savings launches
/// cannot give.
pub const MIN_KERNEL_US: f64 = 2.0;

pub fn peak_of(peaks: &Peaks, p: Precision) -> Option<f64> {
    peaks.tflops.iter().find(|x| x.0 == p).map(|x| x.1)
}

/// Fills the kernel's rates, % of its roofs, bound and recoverable time from its time, work,
/// count and precision.
pub fn measure(k: &mut KernelWork, peaks: Option<&Peaks>) {
    let secs = k.time_us * 1e-6;
    let rate = |x: f64| if secs > 0.0 { x / secs / 1e12 } else { 0.0 };
    (k.tflops_per_s, k.tbps) = (rate(k.flops), rate(k.bytes));
    k.intensity = (k.bytes > 0.0).then(|| k.flops / k.bytes);
    let peak = peaks.zip(k.precision).and_then(|(pk, p)| peak_of(pk, p));
    k.pct_of_peak = peak.filter(|_| k.flops > 0.0 && secs > 0.0).map(|pk| k.tflops_per_s / pk * 100.0);
    k.pct_of_bandwidth = peaks.filter(|_| k.bytes > 0.0 && secs > 0.0).map(|pk| k.tbps / pk.tbps * 100.0);
    // Compute-bound above the ridge (peak / bandwidth, FLOP per byte), memory-bound below; work
    // without FLOPs (copies, gathers) is memory-bound whatever the device.
    k.bound = match (peak, peaks, k.intensity) {
        _ if k.flops == 0.0 && k.bytes > 0.0 && peaks.is_some() => Some(Bound::Memory),
        (Some(pk), Some(p), Some(ai)) => Some(if ai * p.tbps < pk { Bound::Memory } else { Bound::Compute }),
        (Some(_), _, None) => Some(Bound::Compute),
        _ => None,
    };
    k.recoverable_us = 0.0;
    if let Some(r) = k.roof_pct().filter(|&r| r < TARGET_PCT) {
        let at_target = (k.time_us * r / TARGET_PCT).max(k.count as f64 * MIN_KERNEL_US);
        k.recoverable_us = (k.time_us - at_target).max(0.0);
    }
}

/// Per bucket: time, work, and the time-weighted % of roof of its kernels.
pub fn bucket_rows(kernels: &[KernelWork]) -> Vec<BucketWork> {
    let mut buckets: Vec<BucketWork> = Vec::new();
    // Each bucket's time in whole ns (a kernel's time is its rows' ns converted once, so the
    // rounding recovers them exactly), converted once: a sum of microseconds prints float noise.
    let mut ns: Vec<i64> = Vec::new();
    for k in kernels {
        let i = buckets.iter().position(|b| b.bucket == k.bucket).unwrap_or_else(|| {
            buckets.push(BucketWork { bucket: k.bucket, time_us: 0.0, flops: 0.0, bytes: 0.0, pct_of_roof: None });
            ns.push(0);
            buckets.len() - 1
        });
        let b = &mut buckets[i];
        ns[i] = ns[i].saturating_add((k.time_us * 1e3).round() as i64);
        b.flops += k.flops;
        b.bytes += k.bytes;
        if let Some(r) = k.roof_pct() {
            *b.pct_of_roof.get_or_insert(0.0) += r * k.time_us;
        }
    }
    for (b, ns) in buckets.iter_mut().zip(ns) {
        b.time_us = us(ns);
        b.pct_of_roof = b.pct_of_roof.map(|w| w / b.time_us).filter(|v| v.is_finite());
    }
    buckets.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then(a.bucket.cmp(&b.bucket)));
    buckets
}

/// FLOPs over a window against the peak of `precision`, in percent.
pub fn mfu_pct(flops: f64, span_us: f64, precision: Option<Precision>, peaks: Option<&Peaks>) -> Option<f64> {
    let pk = peak_of(peaks?, precision?)?;
    (span_us > 0.0).then(|| flops / (span_us * 1e-6) / (pk * 1e12) * 100.0)
}

/// `factor`·N·T FLOPs for `steps` steps over a window, against the peak of `precision`.
pub fn analytic_pct(
    model: Option<ModelSize>,
    factor: f64,
    steps: f64,
    span_us: f64,
    precision: Option<Precision>,
    peaks: Option<&Peaks>,
) -> Option<f64> {
    let m = model?;
    mfu_pct(factor * m.params * m.tokens_per_step * steps, span_us, precision, peaks)
}

/// The same figures against other peaks and model size: the kernels listed, their buckets
/// (from the listed kernels only) and every window's MFU.
pub fn rebase(e: &Efficiency, peaks: Option<Peaks>, model: Option<ModelSize>) -> Efficiency {
    let mut e = e.clone();
    e.peaks = peaks;
    e.model = model;
    for k in e.kernels.iter_mut().chain(&mut e.ops) {
        measure(k, e.peaks.as_ref());
    }
    e.buckets = bucket_rows(&e.kernels);
    let steps = e.mfu.len().saturating_sub(1).max(1) as f64;
    let trace_precision = e.mfu.first().and_then(|m| m.precision);
    for (i, m) in e.mfu.iter_mut().enumerate() {
        m.mfu_pct = mfu_pct(m.flops, m.span_us, m.precision, e.peaks.as_ref());
        let n = if i == 0 { steps } else { 1.0 };
        let precision = m.precision.or(trace_precision);
        m.analytic_mfu_pct = analytic_pct(model, e.analytic_factor, n, m.span_us, precision, e.peaks.as_ref());
    }
    e
}
