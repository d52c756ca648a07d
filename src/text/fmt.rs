//! Small text helpers shared by the renderers.

pub(super) const RULE: &str = "================================================================================";

pub(super) fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}

/// Bytes with binary units.
pub fn fmt_bytes(b: i64) -> String {
    let a = b.unsigned_abs() as f64;
    let (v, unit) = if a >= (1u64 << 30) as f64 {
        (b as f64 / (1u64 << 30) as f64, "GiB")
    } else if a >= (1u64 << 20) as f64 {
        (b as f64 / (1u64 << 20) as f64, "MiB")
    } else if a >= 1024.0 {
        (b as f64 / 1024.0, "KiB")
    } else {
        return format!("{b} B");
    };
    format!("{v:.1} {unit}")
}

/// A bandwidth in GB/s with one decimal, or "-" when unknown.
pub(super) fn gbps(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |b| format!("{b:.1}"))
}

/// Why a trace has no GPU rows, in a few words (the line in place of the GPU figures, text and
/// Markdown): lost by the profiler when kernels were launched, else CPU-only or unknown.
pub fn no_gpu_rows_reason(t: &crate::report::TraceReport) -> &'static str {
    if t.diagnostics.iter().any(|d| d.id == crate::vocab::DiagnosticId::GpuActivityLost) {
        "though kernels were launched: the profiler lost the GPU activity, re-profile"
    } else {
        "CPU-only, or an accelerator tracesight does not know"
    }
}

/// A rank table row by its rank, else its file.
pub(super) fn rank_label(report: &crate::report::Report, row: usize) -> String {
    match report.ranks.get(row) {
        Some(r) => r.rank.map(|x| format!("rank {x}")).unwrap_or_else(|| r.file.clone()),
        None => format!("row {row}"),
    }
}

/// The SM counters the profiler wrote, as parts of one line (text and Markdown): est. SM
/// efficiency and achieved occupancy, both weighted by kernel time. Occupancy written as 0 is
/// unknown: left out of the average with its time said, and "unknown" when every kernel's is 0.
pub fn sm_counters(g: &crate::report::GpuTime) -> Vec<String> {
    let mut parts: Vec<String> =
        g.est_sm_efficiency_pct.map(|e| format!("est. SM efficiency {e:.1}%")).into_iter().collect();
    let unknown = crate::vocab::fmt_us(g.occupancy_unknown_us);
    match g.achieved_occupancy_pct {
        Some(x) if g.occupancy_unknown_us > 0.0 => {
            parts.push(format!("achieved occupancy {x:.1}% (leaving out {unknown} of kernels written as 0: unknown)"))
        }
        Some(x) => parts.push(format!("achieved occupancy {x:.1}%")),
        None if g.occupancy_unknown_us > 0.0 => {
            parts.push(format!("achieved occupancy unknown (written as 0 for every kernel, {unknown})"))
        }
        None => {}
    }
    parts
}
