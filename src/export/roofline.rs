//! The roofline chart's geometry, from a trace's efficiency figures: log-log axes (arithmetic
//! intensity in FLOP per byte across, achieved TFLOP/s up), the device's roofs (the memory
//! slope up to each precision's peak), one point per kernel with FLOPs, its area by time. Pure
//! numbers, so the page draws it and the tests check it without a browser.

use crate::report::{Efficiency, Peaks};
use crate::vocab::{fmt_us, Bucket, Precision};

pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 360.0;
/// Room for the axes' labels.
pub const LEFT: f64 = 56.0;
pub const BOTTOM: f64 = 36.0;
const TOP: f64 = 12.0;
const RIGHT: f64 = 12.0;
/// The largest point's radius (px); the others by the square root of their time.
const MAX_RADIUS: f64 = 16.0;
const MIN_RADIUS: f64 = 2.5;

/// One roof: a polyline in chart pixels and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    pub precision: Precision,
    pub points: String,
    pub label: String,
    pub label_at: (f64, f64),
}

/// One kernel's point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Index into `Efficiency::kernels`.
    pub kernel: usize,
    pub x: f64,
    pub y: f64,
    pub r: f64,
    pub bucket: Bucket,
    /// The hover text: name and figures.
    pub title: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub x_ticks: Vec<(f64, String)>,
    pub y_ticks: Vec<(f64, String)>,
    pub roofs: Vec<Roof>,
    pub points: Vec<Point>,
}

/// A log10 axis over whole decades, mapped to `[from, to]` pixels.
struct Axis {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Axis {
    fn new(min: f64, max: f64, from: f64, to: f64) -> Axis {
        let lo = min.max(1e-12).log10().floor();
        let hi = max.max(min * 10.0).log10().ceil().max(lo + 1.0);
        Axis { lo, hi, from, to }
    }
    fn at(&self, v: f64) -> f64 {
        let t = (v.max(1e-12).log10() - self.lo) / (self.hi - self.lo);
        self.from + t.clamp(0.0, 1.0) * (self.to - self.from)
    }
    fn ticks(&self) -> Vec<(f64, String)> {
        (self.lo as i32..=self.hi as i32).map(|e| (self.at(10f64.powi(e)), decade(e))).collect()
    }
}

fn decade(e: i32) -> String {
    match e {
        -3..=-1 => format!("{}", 10f64.powi(e)),
        0..=3 => format!("{}", 10i64.pow(e as u32)),
        _ => format!("1e{e}"),
    }
}

/// The chart, or None when no kernel has both FLOPs and bytes.
pub fn chart(e: &Efficiency) -> Option<Chart> {
    let shown: Vec<(usize, f64, f64)> = e
        .kernels
        .iter()
        .enumerate()
        .filter_map(|(i, k)| Some((i, k.intensity.filter(|a| *a > 0.0)?, k.tflops_per_s)).filter(|p| p.2 > 0.0))
        .collect();
    if shown.is_empty() {
        return None;
    }
    let peaks = e.peaks.as_ref();
    let used: Vec<Precision> = {
        let mut v: Vec<Precision> = shown.iter().filter_map(|p| e.kernels[p.0].precision).collect();
        v.sort();
        v.dedup();
        v
    };
    let roof_peaks: Vec<(Precision, f64)> =
        peaks.map(|p| p.tflops.iter().copied().filter(|(pr, _)| used.contains(pr)).collect()).unwrap_or_default();
    let (mut x_min, mut x_max) = (f64::MAX, f64::MIN);
    let (mut y_min, mut y_max) = (f64::MAX, f64::MIN);
    for &(_, ai, tf) in &shown {
        (x_min, x_max) = (x_min.min(ai), x_max.max(ai));
        (y_min, y_max) = (y_min.min(tf), y_max.max(tf));
    }
    for (_, pk) in &roof_peaks {
        y_max = y_max.max(*pk);
        // The ridge points, so each roof's bend is on the chart.
        if let Some(p) = peaks {
            x_max = x_max.max(pk / p.tbps * 4.0);
        }
    }
    let x = Axis::new(x_min, x_max, LEFT, WIDTH - RIGHT);
    let y = Axis::new(y_min, y_max, HEIGHT - BOTTOM, TOP);
    let roofs = peaks.map(|p| roofs(p, &roof_peaks, &x, &y)).unwrap_or_default();
    let longest = shown.iter().map(|p| e.kernels[p.0].time_us).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let mut points: Vec<Point> = shown
        .iter()
        .map(|&(i, ai, tf)| {
            let k = &e.kernels[i];
            let of_peak = k.pct_of_peak.map(|p| format!(", {p:.0}% of peak")).unwrap_or_default();
            Point {
                kernel: i,
                x: x.at(ai),
                y: y.at(tf),
                r: (MAX_RADIUS * (k.time_us / longest).sqrt()).max(MIN_RADIUS),
                bucket: k.bucket,
                title: format!(
                    "{}\n{} in {} calls · {:.1} TFLOP/s{of_peak} · {:.2} TB/s · {ai:.1} FLOP/B · {}",
                    k.short,
                    fmt_us(k.time_us),
                    k.count,
                    tf,
                    k.tbps,
                    k.precision.map_or("?", |p| p.id())
                ),
            }
        })
        .collect();
    // The largest drawn first, so no small point hides under a large one.
    points.sort_by(|a, b| b.r.total_cmp(&a.r).then(a.kernel.cmp(&b.kernel)));
    Some(Chart { x_ticks: x.ticks(), y_ticks: y.ticks(), roofs, points })
}

fn roofs(p: &Peaks, peaks: &[(Precision, f64)], x: &Axis, y: &Axis) -> Vec<Roof> {
    let (x_lo, x_hi) = (10f64.powf(x.lo), 10f64.powf(x.hi));
    peaks
        .iter()
        .map(|&(precision, pk)| {
            let ridge = pk / p.tbps;
            // From the left edge up the memory slope to the ridge, then flat at the peak.
            let start = (x_lo, x_lo * p.tbps);
            let mut pts = vec![start];
            if ridge > x_lo && ridge < x_hi {
                pts.push((ridge, pk));
            }
            pts.push((x_hi, pk.min(x_hi * p.tbps)));
            let points =
                pts.iter().map(|&(a, f)| format!("{:.1},{:.1}", x.at(a), y.at(f))).collect::<Vec<_>>().join(" ");
            Roof {
                precision,
                points,
                label: format!("{} {pk} TFLOP/s", precision.id()),
                label_at: (x.at(x_hi) - 4.0, y.at(pk) - 4.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Bound, KernelWork, WorkCoverage, WorkSource};

    fn kernel(short: &str, time_us: f64, tflops: f64, intensity: f64) -> KernelWork {
        KernelWork {
            name: short.into(),
            short: short.into(),
            bucket: Bucket::Gemm,
            time_us,
            count: 1,
            flops: tflops * time_us * 1e6,
            bytes: tflops * time_us * 1e6 / intensity,
            precision: Some(Precision::Bf16),
            source: WorkSource::Shapes,
            split: false,
            causal: false,
            tflops_per_s: tflops,
            tbps: tflops / intensity,
            intensity: Some(intensity),
            pct_of_peak: Some(tflops / 10.0),
            pct_of_bandwidth: None,
            bound: Some(Bound::Compute),
            recoverable_us: 0.0,
        }
    }

    #[test]
    fn points_roofs_and_axes() {
        let e = Efficiency {
            peaks: Some(Peaks {
                device: "d".into(),
                tflops: vec![(Precision::Fp32, 60.0), (Precision::Bf16, 1000.0)],
                tbps: 4.0,
                source: "s".into(),
            }),
            unknown_device: None,
            flops: 0.0,
            bytes: 0.0,
            coverage: WorkCoverage::default(),
            ops: vec![],
            kernels: vec![kernel("big", 100.0, 500.0, 400.0), kernel("small", 1.0, 5.0, 10.0), {
                let mut copy = kernel("copy", 50.0, 0.0, 1.0);
                copy.intensity = None;
                copy
            }],
            buckets: vec![],
            mfu: vec![],
            model: None,
            analytic_factor: 2.0,
        };
        let c = chart(&e).unwrap();
        assert_eq!(c.points.len(), 2, "work without FLOPs is not on a FLOP/s chart");
        let (big, small) = (&c.points[0], &c.points[1]);
        assert!(big.x > small.x && big.y < small.y, "more intense and faster: right and up (y grows down)");
        assert!(big.r == MAX_RADIUS && small.r < big.r);
        // Only the precision the kernels ran in gets a roof; its bend is at 1000 / 4 = 250 FLOP/B.
        assert_eq!(c.roofs.len(), 1);
        assert_eq!(c.roofs[0].precision, Precision::Bf16);
        assert_eq!(c.roofs[0].points.split(' ').count(), 3);
        // Whole decades: 10 to 1000 FLOP/B (the ridge x 4 reaches 1000), 1 to 1000 TFLOP/s.
        assert_eq!(c.x_ticks.iter().map(|t| t.1.as_str()).collect::<Vec<_>>(), ["10", "100", "1000"]);
        assert_eq!(c.y_ticks.last().map(|t| t.1.as_str()), Some("1000"));
        assert!(c.points.iter().all(|p| (LEFT..=WIDTH).contains(&p.x) && (0.0..=HEIGHT - BOTTOM).contains(&p.y)));
    }
}
