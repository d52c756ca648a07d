//! How far from fast. While the rows are at hand (`sums`), each op's work is spread over the
//! kernels it launched, by their time when it launched several, and summed per kernel name,
//! bucket and step; once the device and the steps are known (`finish`), the sums are measured
//! against the device's peaks: achieved rates, % of the roof, the bound, recoverable time,
//! MFU.

mod measure;
pub mod peaks;

use measure::{analytic_pct, bucket_rows, measure, mfu_pct};
pub use measure::{rebase, MIN_KERNEL_US};

use super::attribution::{Attribution, NO};
use super::collect::{Collector, GpuKind, OpWork};
use super::options::UserPeaks;
use super::taxonomy::KernelFacts;
use crate::report::{Efficiency, KernelWork, Mfu, ModelSize, Peaks, WorkCoverage, WorkSource};
use crate::vocab::{Bucket, Precision};
use rustc_hash::FxHashMap;

/// The slot of FLOPs whose precision is not known (Inductor's counts).
const UNKNOWN_PRECISION: usize = 7;

/// Unmodelled ops listed by name in the coverage.
const UNMODELLED_LISTED: usize = 8;

#[derive(Default)]
struct KernelSum {
    time_ns: i64,
    count: u64,
    flops: f64,
    bytes: f64,
    /// FLOPs per precision (indexed by `Precision::index`; the last: precision not known).
    by_precision: [f64; 8],
    /// Time per precision, as `by_precision`: the precision of work without FLOPs.
    time_by_precision: [i64; 8],
    /// Time per source, indexed as `SOURCES`.
    by_source: [i64; 3],
    split: bool,
    causal: bool,
    bucket: Option<Bucket>,
}

/// The buckets whose kernels do an op's FLOPs when it launched several kinds.
const MATH: [Bucket; 2] = [Bucket::Gemm, Bucket::Attention];

#[derive(Default)]
struct OpKernels {
    ns: i64,
    count: u32,
    math_ns: i64,
    math_count: u32,
}

/// Library names that say an FP32 GEMM ran on tensor cores in TF32 (cuBLAS' `tf32`, hipBLASLt's
/// `xf32`, CUTLASS' `tensorop_s1688` / `s16816` single-precision tensor-op tiles).
fn runs_tf32(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["tf32", "xf32", "tensorop_s1688", "tensorop_s16816"].iter().any(|t| n.contains(t))
}

const SOURCES: [WorkSource; 3] = [WorkSource::Shapes, WorkSource::Profiler, WorkSource::Inductor];

/// The work summed over the rows.
#[derive(Default)]
pub struct WorkSums {
    /// (full name, short name, sums).
    kernels: Vec<(String, String, KernelSum)>,
    /// Per step: FLOPs by precision, as in `KernelSum`.
    steps: Vec<[f64; 8]>,
    known_ns: [i64; 3],
    unmodelled_ns: i64,
    unmodelled: Vec<(String, i64)>,
    unknown_ns: i64,
    kernel_ns: i64,
    communication_ns: i64,
    ops_with_shapes: u64,
}

impl WorkSums {
    /// Keeps the steps the report keeps (`keep` per step).
    pub fn retain_steps(&mut self, keep: &[bool]) {
        let mut k = keep.iter();
        self.steps.retain(|_| k.next().copied().unwrap_or(false));
    }
}

fn source_index(s: WorkSource) -> usize {
    SOURCES.iter().position(|&x| x == s).unwrap_or(0)
}

/// Sums each kernel row's share of its op's work. `row_step` is each row's step (or NO), empty
/// without steps.
pub fn sums(
    c: &Collector,
    at: &Attribution,
    buckets: &[Bucket],
    facts: &FxHashMap<u32, KernelFacts>,
    row_step: &[u32],
    steps: usize,
) -> WorkSums {
    let tree = &at.ops;
    let op_work = |leaf: u32| -> Option<&OpWork> {
        let e = tree.spans.get(leaf as usize)?.external;
        c.op_work.get(&e)
    };
    // Each working op's kernels: their time and count, and the time of those that do its math
    // (GEMM, attention), to split its work by.
    let mut per_op: FxHashMap<u32, OpKernels> = FxHashMap::default();
    for (i, row) in c.gpu.iter().enumerate() {
        let leaf = at.leaf[i];
        if row.kind == GpuKind::Kernel && leaf != NO && op_work(leaf).is_some() {
            let e = per_op.entry(leaf).or_default();
            e.ns += row.dur;
            e.count += 1;
            if MATH.contains(&buckets[i]) {
                e.math_ns += row.dur;
                e.math_count += 1;
            }
        }
    }
    let mut s = WorkSums { steps: vec![[0.0; 8]; steps], ops_with_shapes: c.ops_with_shapes, ..WorkSums::default() };
    let mut by_name: FxHashMap<u32, usize> = FxHashMap::default();
    let mut unmodelled: FxHashMap<u32, i64> = FxHashMap::default();
    let mut counted = c.gpu_work.iter().peekable();
    for (i, row) in c.gpu.iter().enumerate() {
        let own = match counted.peek() {
            Some(k) if k.row as usize == i => counted.next(),
            _ => None,
        };
        if row.kind != GpuKind::Kernel {
            continue;
        }
        // Collectives move data between GPUs at the link's rate, not the memory's: they have
        // their own figures (the collectives table), not a place on the roofline.
        if buckets[i] == Bucket::Communication {
            s.communication_ns += row.dur;
            continue;
        }
        s.kernel_ns += row.dur;
        let leaf = at.leaf[i];
        // (flops, bytes, precision, source, split, causal)
        let work = match (own, op_work(leaf)) {
            (Some(k), w) => Some((k.flops, k.bytes, w.and_then(|w| w.precision), WorkSource::Inductor, false, false)),
            (None, Some(w)) => {
                let k = &per_op[&leaf];
                let share = |ns: i64, n: u32| if ns > 0 { row.dur as f64 / ns as f64 } else { 1.0 / n as f64 };
                // An op that launched GEMM or attention kernels did its FLOPs in them (a
                // convolution's transposes and reductions move its data); else in all of them.
                let flop_share = match (k.math_count, MATH.contains(&buckets[i])) {
                    (0, _) => share(k.ns, k.count),
                    (_, true) => share(k.math_ns, k.math_count),
                    (_, false) => 0.0,
                };
                Some((
                    w.flops * flop_share,
                    w.bytes * share(k.ns, k.count),
                    w.precision,
                    w.source,
                    k.count > 1,
                    w.causal,
                ))
            }
            (None, None) => None,
        };
        let Some((flops, bytes, precision, source, split, causal)) = work else {
            let name = (leaf != NO).then(|| tree.spans[leaf as usize].name);
            match name {
                Some(n) if c.ops_with_shapes > 0 && !c.names.is(n, super::collect::NAME_WORK) => {
                    s.unmodelled_ns += row.dur;
                    *unmodelled.entry(n).or_default() += row.dur;
                }
                _ => s.unknown_ns += row.dur,
            }
            continue;
        };
        // FP32 work ran at the TF32 rate where the library chose it: the kernel's name says.
        let precision = match precision {
            Some(Precision::Fp32) if facts.get(&row.name).is_some_and(|f| runs_tf32(&f.name.full)) => {
                Some(Precision::Tf32)
            }
            p => p,
        };
        s.known_ns[source_index(source)] += row.dur;
        let k = *by_name.entry(row.name).or_insert_with(|| {
            let full = c.names.get(row.name).to_string();
            let short = facts.get(&row.name).map_or_else(|| full.clone(), |f| f.name.short.clone());
            s.kernels.push((full, short, KernelSum::default()));
            s.kernels.len() - 1
        });
        let sum = &mut s.kernels[k].2;
        sum.time_ns += row.dur;
        sum.count += 1;
        sum.flops += flops;
        sum.bytes += bytes;
        sum.by_source[source_index(source)] += row.dur;
        sum.split |= split;
        sum.causal |= causal;
        sum.bucket.get_or_insert(buckets[i]);
        let p = precision.map_or(UNKNOWN_PRECISION, Precision::index);
        sum.by_precision[p] += flops;
        sum.time_by_precision[p] += row.dur;
        if let Some(step) = row_step.get(i).filter(|&&t| t != NO) {
            s.steps[*step as usize][p] += flops;
        }
    }
    let mut listed: Vec<(String, i64)> = unmodelled.into_iter().map(|(n, t)| (c.names.get(n).to_string(), t)).collect();
    listed.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    listed.truncate(UNMODELLED_LISTED);
    s.unmodelled = listed;
    s
}

/// The device's peaks: the user's figures over the table's.
pub fn peaks_for(device: Option<&'static peaks::DevicePeaks>, user: &UserPeaks) -> Option<Peaks> {
    let mut tflops: Vec<(Precision, f64)> = match device {
        Some(d) => Precision::ALL.iter().filter_map(|&p| d.peak(p).map(|v| (p, v))).collect(),
        None => Vec::new(),
    };
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
    let tbps = user.tbps.or(device.map(|d| d.tbps))?;
    if tflops.is_empty() {
        return None;
    }
    let user_given = !user.tflops.is_empty() || user.tbps.is_some();
    Some(Peaks {
        device: match (device, user_given) {
            (Some(d), false) => d.name.to_string(),
            (Some(d), true) => format!("{} (with the figures given)", d.name),
            (None, _) => "the figures given".to_string(),
        },
        tflops,
        tbps,
        source: match (device, user_given) {
            (Some(d), false) => d.source.to_string(),
            (Some(d), true) => format!("given by the user where set; else {}", d.source),
            (None, _) => "given by the user".to_string(),
        },
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
            kernel_us: us(s.kernel_ns),
            communication_us: us(s.communication_ns),
            ops_with_shapes: s.ops_with_shapes,
        },
        kernels,
        buckets,
        mfu: windows,
        model: f.model,
        analytic_factor: factor,
    })
}

#[cfg(test)]
mod tests;
