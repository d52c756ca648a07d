//! How far from fast. While the rows are at hand (`sums`), each op's work is spread over the
//! kernels it launched, by their time when it launched several, and summed per kernel name,
//! bucket and step; once the device and the steps are known (`finish`), the sums are measured
//! against the device's peaks: achieved rates, % of the roof, the bound, recoverable time,
//! MFU.

mod measure;
pub mod peaks;
mod sums;

use measure::{analytic_pct, bucket_rows, measure, mfu_pct};
pub use measure::{rebase, MIN_KERNEL_US};
pub use sums::{sums, OpKernelTable, RowWorks, WorkSums};
use sums::{KernelSum, SOURCES, UNKNOWN_PRECISION};

use crate::analysis::options::UserPeaks;
use crate::report::{Efficiency, KernelWork, Mfu, ModelSize, Peaks, WorkCoverage};
use crate::vocab::{Bucket, Precision};

/// A device's entry in the table, as the report states it.
pub fn table_peaks(d: &peaks::DevicePeaks) -> Peaks {
    Peaks {
        device: d.name.to_string(),
        tflops: Precision::ALL.iter().filter_map(|&p| d.peak(p).map(|v| (p, v))).collect(),
        tbps: d.tbps,
        source: d.source.to_string(),
    }
}

/// The peaks to measure against: the user's figures over `base` (the table's entry, or what a
/// report was measured against). None without a bandwidth or any TFLOP/s figure.
pub fn with_user(base: Option<Peaks>, user: &UserPeaks) -> Option<Peaks> {
    let user_given = !user.tflops.is_empty() || user.tbps.is_some();
    if !user_given {
        return base;
    }
    let mut tflops = base.as_ref().map(|b| b.tflops.clone()).unwrap_or_default();
    for &(p, v) in &user.tflops {
        match p {
            Some(p) => {
                tflops.retain(|x| x.0 != p);
                tflops.push((p, v));
            }
            None => tflops = Precision::ALL.iter().map(|&p| (p, v)).collect(),
        }
    }
    tflops.sort_by_key(|x| x.0);
    let tbps = user.tbps.or(base.as_ref().map(|b| b.tbps))?;
    if tflops.is_empty() {
        return None;
    }
    Some(match base {
        Some(b) => Peaks {
            device: format!("{} (with the figures given)", b.device),
            tflops,
            tbps,
            source: format!("given by the user where set; else {}", b.source),
        },
        None => Peaks { device: "the figures given".into(), tflops, tbps, source: "given by the user".into() },
    })
}

fn dominant(by_precision: &[f64; 8]) -> Option<Precision> {
    let (i, &f) =
        by_precision[..UNKNOWN_PRECISION].iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)))?;
    (f > 0.0).then(|| Precision::ALL[i])
}

/// A window's MFU: its FLOPs against the peak of the precision that holds most of them (FLOPs
/// of no known precision are counted in it).
fn mfu(name: &str, span_us: f64, by_precision: &[f64; 8], peaks: Option<&Peaks>) -> Mfu {
    let flops: f64 = by_precision.iter().sum();
    let precision = dominant(by_precision);
    let mfu_pct = mfu_pct(flops, span_us, precision, peaks);
    Mfu { name: name.to_string(), span_us, flops, precision, mfu_pct, analytic_mfu_pct: None }
}

/// A kernel's sums as the report's row, measured against the peaks.
fn kernel_work(name: String, short: String, k: KernelSum, peaks: Option<&Peaks>) -> KernelWork {
    let precision = dominant(&k.by_precision).or_else(|| {
        let times = k.time_by_precision[..UNKNOWN_PRECISION].iter().enumerate();
        let (i, &t) = times.max_by_key(|x| (*x.1, std::cmp::Reverse(x.0)))?;
        (t > 0).then(|| Precision::ALL[i])
    });
    let mut w = KernelWork {
        name,
        short,
        bucket: k.bucket.unwrap_or(Bucket::Other),
        time_us: k.time_ns as f64 / 1000.0,
        count: k.count,
        flops: k.flops,
        bytes: k.bytes,
        precision,
        source: SOURCES[(0..3).max_by_key(|&i| (k.by_source[i], std::cmp::Reverse(i))).unwrap_or(0)],
        split: k.split,
        causal: k.causal,
        tflops_per_s: 0.0,
        tbps: 0.0,
        intensity: None,
        pct_of_peak: None,
        pct_of_bandwidth: None,
        bound: None,
        recoverable_us: 0.0,
    };
    measure(&mut w, peaks);
    w
}

/// What `finish` needs of the report besides the sums.
pub struct Finish<'a> {
    pub peaks: Option<Peaks>,
    pub unknown_device: Option<String>,
    /// The trace's GPU span (us) and its steps' (name, GPU span).
    pub span_us: f64,
    pub steps: Vec<(&'a str, f64)>,
    pub training: bool,
    pub model: Option<ModelSize>,
    pub top_n: usize,
}

pub fn finish(s: WorkSums, f: Finish) -> Option<Efficiency> {
    if s.kernel_ns == 0 {
        return None;
    }
    let peaks = f.peaks.as_ref();
    let mut total = [0.0; 8];
    let (mut flops, mut bytes) = (0.0, 0.0);
    let mut kernels: Vec<KernelWork> = s
        .kernels
        .into_iter()
        .map(|(name, short, k)| {
            for (t, v) in total.iter_mut().zip(k.by_precision) {
                *t += v;
            }
            flops += k.flops;
            bytes += k.bytes;
            kernel_work(name, short, k, peaks)
        })
        .collect();
    let buckets = bucket_rows(&kernels);
    // The top by time are kept beside the top by recoverable time, so every kernel table can
    // show its figures.
    kernels.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then(a.name.cmp(&b.name)));
    let by_time: Vec<String> = kernels.iter().take(f.top_n).map(|k| k.name.clone()).collect();
    kernels.sort_by(|a, b| {
        b.recoverable_us.total_cmp(&a.recoverable_us).then(b.time_us.total_cmp(&a.time_us)).then(a.name.cmp(&b.name))
    });
    let mut rank = 0;
    kernels.retain(|k| {
        rank += 1;
        rank <= f.top_n || by_time.contains(&k.name)
    });

    // The ops' figures, for the top ops table: the top by time.
    let mut ops: Vec<KernelWork> =
        s.ops.into_iter().map(|(name, k)| kernel_work(name.clone(), name, k, peaks)).collect();
    ops.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then(a.name.cmp(&b.name)));
    ops.truncate(f.top_n);

    let factor = if f.training { 6.0 } else { 2.0 };
    let analytic =
        |span_us: f64, steps: f64, precision| analytic_pct(f.model, factor, steps, span_us, precision, peaks);
    let mut windows = vec![mfu("trace", f.span_us, &total, peaks)];
    windows[0].analytic_mfu_pct = analytic(f.span_us, f.steps.len().max(1) as f64, windows[0].precision);
    for ((name, span), by_p) in f.steps.iter().zip(&s.steps) {
        let mut m = mfu(name, *span, by_p, peaks);
        m.analytic_mfu_pct = analytic(*span, 1.0, m.precision.or(windows[0].precision));
        windows.push(m);
    }
    let us = |ns: i64| ns as f64 / 1000.0;
    Some(Efficiency {
        peaks: f.peaks.clone(),
        unknown_device: f.unknown_device,
        flops,
        bytes,
        coverage: WorkCoverage {
            known_us: SOURCES.iter().zip(s.known_ns).filter(|x| x.1 > 0).map(|(&w, t)| (w, us(t))).collect(),
            unmodelled_us: us(s.unmodelled_ns),
            unmodelled_ops: s.unmodelled.into_iter().map(|(n, t)| (n, us(t))).collect(),
            unknown_us: us(s.unknown_ns),
            graph_us: us(s.graph_ns),
            kernel_us: us(s.kernel_ns),
            communication_us: us(s.communication_ns),
            ops_with_shapes: s.ops_with_shapes,
        },
        kernels,
        ops,
        buckets,
        mfu: windows,
        model: f.model,
        analytic_factor: factor,
    })
}

#[cfg(test)]
mod tests;
