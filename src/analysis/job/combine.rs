//! Several traces' results into one Report: rank order, file errors, the ranks table and the
//! job view.

use super::ranks;
use crate::analysis::options::TraceError;
use crate::report::{FileError, Report, TraceReport};

/// Combines per-file results into one Report: traces in rank order (then file name), files
/// that failed listed in `errors`, and a cross-rank table when there are several ranks.
pub fn combine(results: Vec<Result<TraceReport, TraceError>>) -> Report {
    combine_all(results.into_iter().map(|r| r.map(|t| vec![t])).collect())
}

/// As [`combine`], for inputs that each gave one or more traces (a Report file gives several).
pub fn combine_all(results: Vec<Result<Vec<TraceReport>, TraceError>>) -> Report {
    let mut traces = Vec::new();
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(t) => traces.extend(t),
            Err(e) => errors.push(FileError { file: e.file, message: e.message }),
        }
    }
    assemble(traces, errors)
}

/// Merges Reports of separate files (each made by [`combine_all`] on its own, as the page's
/// workers do, one file each) into the Report of all of them: the same as [`combine_all`]
/// over all the files in that order.
pub fn merge(reports: Vec<Report>) -> Report {
    let mut traces = Vec::new();
    let mut errors = Vec::new();
    for r in reports {
        traces.extend(r.traces);
        errors.extend(r.errors);
    }
    assemble(traces, errors)
}

/// As [`merge`], and each trace's label (the label of the Report it came from), in the merged
/// order: the page merges a second run into the open one and knows which traces are which.
pub fn merge_labelled<T: Clone>(reports: Vec<(Report, T)>) -> (Report, Vec<T>) {
    let mut traces = Vec::new();
    let mut errors = Vec::new();
    for (r, label) in reports {
        traces.extend(r.traces.into_iter().map(|t| (t, label.clone())));
        errors.extend(r.errors);
    }
    // The same stable order as `assemble`, so its sort leaves these as they are.
    traces.sort_by(|a, b| trace_order(&a.0, &b.0));
    let (traces, labels) = traces.into_iter().unzip();
    (assemble(traces, errors), labels)
}

/// Rank order (traces without a rank last), then file name.
fn trace_order(a: &TraceReport, b: &TraceReport) -> std::cmp::Ordering {
    (a.rank.is_none(), a.rank.unwrap_or(0), &a.file).cmp(&(b.rank.is_none(), b.rank.unwrap_or(0), &b.file))
}

fn assemble(mut traces: Vec<TraceReport>, errors: Vec<FileError>) -> Report {
    traces.sort_by(trace_order);
    let (ranks, job) = if traces.len() > 1 {
        let mut rows = ranks::rank_rows(&traces);
        let job = ranks::job_view(&traces, &mut rows);
        (rows, Some(job))
    } else {
        (Vec::new(), None)
    };
    Report { tool_version: crate::vocab::TOOL_VERSION.to_string(), traces, errors, ranks, job }
}
