//! The report's tables as CSV (RFC 4180: comma separated, CRLF lines, fields quoted when
//! needed), one file per table. Times are microseconds, shares percent, as in the JSON.
//! Text cells that a spreadsheet would read as a formula get a leading `'`.

use crate::report::{Efficiency, Report, TopRow, TraceReport};
use std::fmt::Write;

/// The tables a trace has, by file-name suffix.
pub const TABLES: [&str; 6] = ["buckets", "kernels", "ops", "steps", "hints", "efficiency"];

/// The efficiency table's figures, per kernel.
const WORK_COLUMNS: [&str; 12] = [
    "flops",
    "bytes",
    "precision",
    "work_source",
    "tflops_per_s",
    "tbps",
    "flop_per_byte",
    "pct_of_peak",
    "pct_of_bandwidth",
    "bound",
    "recoverable_us",
    "work_split",
];

fn work_cells(k: &crate::report::KernelWork) -> Vec<String> {
    let opt = |v: Option<f64>| v.map(num).unwrap_or_default();
    vec![
        num(k.flops),
        num(k.bytes),
        k.precision.map(|p| p.id().to_string()).unwrap_or_default(),
        k.source.id().to_string(),
        num(k.tflops_per_s),
        num(k.tbps),
        opt(k.intensity),
        opt(k.pct_of_peak),
        opt(k.pct_of_bandwidth),
        match k.bound {
            Some(crate::report::Bound::Compute) => "compute".into(),
            Some(crate::report::Bound::Memory) => "memory".into(),
            None => String::new(),
        },
        num(k.recoverable_us),
        k.split.to_string(),
    ]
}

/// One table of one trace as CSV, by name (one of [`TABLES`]); None for an unknown name.
pub fn table(t: &TraceReport, which: &str) -> Option<String> {
    let mut w = Csv::default();
    match which {
        "buckets" => buckets(&mut w, t),
        "kernels" => top_rows(&mut w, &t.top_kernels, "launching_op"),
        "ops" => top_rows(&mut w, &t.top_ops, "parent_op"),
        "steps" => steps(&mut w, t),
        "hints" => hints(&mut w, t),
        // Only where some work is known (a share link carries no efficiency figures).
        "efficiency" => efficiency(&mut w, t.efficiency.as_ref().filter(|e| !e.kernels.is_empty())?),
        _ => return None,
    }
    Some(w.out)
}

fn buckets(w: &mut Csv, t: &TraceReport) {
    w.row(["bucket", "name", "time_us", "pct", "count", "top_kernel"]);
    for b in &t.buckets {
        let top = b.top_names.first().map(|n| n.name.as_str()).unwrap_or("");
        w.row([b.id.id(), &b.name, &num(b.time_us), &num(b.pct), &b.count.to_string(), top]);
    }
}

/// The top kernels or top ops, ranked; `op` names the column of the op around each row.
fn top_rows(w: &mut Csv, rows: &[TopRow], op: &str) {
    w.row(["rank", "name", "short", "time_us", "pct", "count", "mean_us", "max_us", "bucket", op]);
    for (i, r) in rows.iter().enumerate() {
        w.row([
            &(i + 1).to_string(),
            &r.name,
            &r.short,
            &num(r.time_us),
            &num(r.pct),
            &r.count.to_string(),
            &num(r.mean_us),
            &num(r.max_us),
            r.bucket.id(),
            r.op.as_deref().unwrap_or(""),
        ]);
    }
}

fn steps(w: &mut Csv, t: &TraceReport) {
    w.row([
        "step",
        "cpu_us",
        "span_us",
        "busy_us",
        "idle_us",
        "kernel_time_us",
        "comm_us",
        "exposed_comm_us",
        "kernel_count",
    ]);
    for s in &t.steps {
        w.row([
            s.name.as_str(),
            &num(s.cpu_us),
            &num(s.span_us),
            &num(s.busy_us),
            &num(s.idle_us),
            &num(s.kernel_time_us),
            &num(s.comm_us),
            &num(s.exposed_comm_us),
            &s.kernel_count.to_string(),
        ]);
    }
}

fn hints(w: &mut Csv, t: &TraceReport) {
    w.row(["id", "severity", "stake_us", "message", "evidence", "fix"]);
    for h in &t.hints {
        w.row([&h.id.id(), h.severity.as_str(), &num(h.stake_us), &h.message, &h.evidence.join("; "), &h.fix]);
    }
}

/// Kernels, then the ops that launched them (the top ops table's rows), with their work.
fn efficiency(w: &mut Csv, e: &Efficiency) {
    let mut head = vec!["kind", "name", "short", "bucket", "time_us", "count"];
    head.extend(WORK_COLUMNS);
    w.row(head);
    let rows = e.kernels.iter().map(|k| ("kernel", k)).chain(e.ops.iter().map(|k| ("op", k)));
    for (kind, k) in rows {
        let mut cells = vec![
            kind.to_string(),
            k.name.clone(),
            k.short.clone(),
            k.bucket.id().to_string(),
            num(k.time_us),
            k.count.to_string(),
        ];
        cells.extend(work_cells(k));
        w.row(cells.iter().map(String::as_str));
    }
}

/// The cross-rank table as CSV (empty when there is a single trace).
pub fn ranks(report: &Report) -> String {
    let mut w = Csv::default();
    w.row([
        "rank",
        "file",
        "kernel_time_us",
        "busy_us",
        "span_us",
        "idle_us",
        "comm_us",
        "exposed_comm_us",
        "busy_vs_max_pct",
    ]);
    for r in &report.ranks {
        w.row([
            r.rank.map(|x| x.to_string()).unwrap_or_default().as_str(),
            &r.file,
            &num(r.kernel_time_us),
            &num(r.busy_us),
            &num(r.span_us),
            &num(r.idle_us),
            &num(r.comm_us),
            &num(r.exposed_comm_us),
            &num(r.busy_vs_max_pct),
        ]);
    }
    w.out
}

/// Every table of the report as (file name, CSV text): `<trace>.<table>.csv` per trace (the
/// trace's file name without `.json[.gz]`, numbered when two traces share one), and
/// `ranks.csv` for several traces.
pub fn files(report: &Report) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for t in &report.traces {
        let mut stem = safe_stem(&crate::share_link::stem(&t.file));
        if seen.contains(&stem) {
            stem = format!("{stem}-{}", seen.len() + 1);
        }
        seen.push(stem.clone());
        for which in TABLES {
            if let Some(text) = table(t, which) {
                out.push((format!("{stem}.{which}.csv"), text));
            }
        }
    }
    if !report.ranks.is_empty() {
        out.push(("ranks.csv".into(), ranks(report)));
    }
    out
}

/// A file-name stem with only portable characters.
pub fn safe_stem(s: &str) -> String {
    let t: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).take(120).collect();
    let t = t.trim_start_matches('.').to_string();
    if t.is_empty() {
        "trace".into()
    } else {
        t
    }
}

/// Shortest text that reads back as the same f64 (as in the JSON).
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        v.to_string()
    }
}

#[derive(Default)]
struct Csv {
    out: String,
}

impl Csv {
    fn row<'a>(&mut self, cells: impl IntoIterator<Item = &'a str>) {
        for (i, c) in cells.into_iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            let c = if c.starts_with(['=', '+', '@', '-', '\t', '\r']) && c.parse::<f64>().is_err() {
                format!("'{c}")
            } else {
                c.to_string()
            };
            if c.contains([',', '"', '\n', '\r']) {
                let _ = write!(self.out, "\"{}\"", c.replace('"', "\"\""));
            } else {
                self.out.push_str(&c);
            }
        }
        self.out.push_str("\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_formulas() {
        let mut w = Csv::default();
        w.row(["a,b", "say \"hi\"", "=1+1", "-3.5", "plain"]);
        assert_eq!(w.out, "\"a,b\",\"say \"\"hi\"\"\",'=1+1,-3.5,plain\r\n");
        assert_eq!(safe_stem("../x y"), "_x_y");
    }
}
