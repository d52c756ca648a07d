//! `tracesight._tracesight`: the Rust core for Python. Each function reads or renders a
//! Report and hands it over as the JSON that `tracesight --json` prints, so the Python
//! package (python/tracesight) shows exactly the CLI's figures. The GIL is released while
//! files are read.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;
use tracesight::analysis::job::gate::{self, Limit};
use tracesight::analysis::rules::taxonomy::parse_rules;
use tracesight::analysis::{UserPeaks, WhatIfSpec};
use tracesight::parallel::Split;
use tracesight::report::ModelSize;
use tracesight::{combine_all, files, Options, Range, Report, TraceError, TraceReport};

create_exception!(
    _tracesight,
    TracesightError,
    PyException,
    "A trace that could not be read: `.id`, `.file`, `.message`."
);

/// The error's id as the JSON and the CLI name kinds: `not_json`, `truncated`, ...
fn kind_id(e: &TraceError) -> String {
    let mut id = String::new();
    for (i, ch) in format!("{:?}", e.kind).chars().enumerate() {
        if ch.is_uppercase() && i > 0 {
            id.push('_');
        }
        id.push(ch.to_ascii_lowercase());
    }
    id
}

fn raise(e: &TraceError) -> PyErr {
    TracesightError::new_err((kind_id(e), e.file.clone(), e.message.clone()))
}

/// The CLI's roofline and what-if options, as Python passes them (None: not given).
#[derive(Default)]
struct Extra {
    peak_tflops: Option<String>,
    peak_tbps: Option<f64>,
    params: Option<f64>,
    tokens_per_step: Option<f64>,
    what_if: Option<String>,
}

fn positive(name: &str, v: Option<f64>) -> PyResult<Option<f64>> {
    match v {
        Some(x) if !(x.is_finite() && x > 0.0) => {
            Err(PyValueError::new_err(format!("{name}: {x} is not a positive number")))
        }
        _ => Ok(v),
    }
}

fn options(top: usize, rules: Option<String>, range_ms: Option<(f64, f64)>, extra: Extra) -> PyResult<Options> {
    let rules = match rules {
        None => Vec::new(),
        // A path to a rules file, else the rules' text itself.
        Some(r) => {
            let text = std::fs::read_to_string(&r).unwrap_or(r);
            parse_rules(&text).map_err(|e| PyValueError::new_err(format!("rules: {e}")))?
        }
    };
    let window = match range_ms {
        None => None,
        Some((a, b)) => Some(Range::parse_ms(&format!("{a}..{b}")).map_err(PyValueError::new_err)?),
    };
    let mut opts = Options { top_n: top, rules, window, ..Options::default() };
    let tflops = match &extra.peak_tflops {
        None => Vec::new(),
        Some(t) => UserPeaks::parse_tflops(t).map_err(|e| PyValueError::new_err(format!("peak_tflops: {e}")))?,
    };
    opts.peaks = UserPeaks { tflops, tbps: positive("peak_tbps", extra.peak_tbps)? };
    opts.model = match (positive("params", extra.params)?, positive("tokens_per_step", extra.tokens_per_step)?) {
        (Some(params), Some(tokens_per_step)) => Some(ModelSize { params, tokens_per_step }),
        (None, None) => None,
        _ => return Err(PyValueError::new_err("params and tokens_per_step go together (the analytic 6·N·T MFU)")),
    };
    if let Some(w) = &extra.what_if {
        opts.what_if = Some(WhatIfSpec::parse(w).map_err(|e| PyValueError::new_err(format!("what_if: {e}")))?);
    }
    Ok(opts)
}

/// Threads that parse one large plain-JSON file in parts and build its report, as the CLI's
/// `--threads` (None: every core). The report is the same whatever the number.
fn split(opts: &mut Options, threads: Option<usize>) -> PyResult<Split> {
    let n = match threads {
        Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => n.min(256),
        None => tracesight::parallel::cores(),
    };
    if n > 1 {
        opts.fork = tracesight::parallel::threads(n);
    }
    Ok(Split::new(n))
}

/// Every path (a trace, a tracesight report, or a directory of them) read into one Report;
/// the files that could not be read are in its `errors`, and when none could, the first
/// failure is returned.
fn load(paths: &[PathBuf], opts: &Options, split: Split) -> Result<Report, TraceError> {
    let (inputs, mut failed) = files::expand(paths);
    let mut results: Vec<Result<Vec<TraceReport>, TraceError>> = Vec::new();
    for path in inputs {
        let name = files::display_name(&path);
        match files::read(&name, &path, split, opts, &|_| {}).0 {
            Ok(t) => results.push(Ok(t)),
            Err(e) => failed.push(e),
        }
    }
    if results.is_empty() {
        return Err(failed.into_iter().next().unwrap_or_else(|| TraceError {
            file: String::new(),
            kind: tracesight::ErrorKind::NotATrace,
            message: "no trace given".into(),
        }));
    }
    results.extend(failed.into_iter().map(Err));
    Ok(combine_all(results))
}

fn to_json(v: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(v).map_err(|e| PyException::new_err(e.to_string()))
}

fn from_json<T: serde::de::DeserializeOwned>(json: &str) -> PyResult<T> {
    serde_json::from_str(json).map_err(|e| PyValueError::new_err(format!("not a tracesight report: {e}")))
}

/// The Report of `paths` as JSON (what `tracesight --json PATHS...` prints).
#[pyfunction]
#[pyo3(signature = (paths, top=25, rules=None, range_ms=None, threads=None, peak_tflops=None, peak_tbps=None, params=None, tokens_per_step=None, what_if=None))]
// The CLI's flags one by one, as Python keywords.
#[allow(clippy::too_many_arguments)]
fn analyze_json(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    top: usize,
    rules: Option<String>,
    range_ms: Option<(f64, f64)>,
    threads: Option<usize>,
    peak_tflops: Option<String>,
    peak_tbps: Option<f64>,
    params: Option<f64>,
    tokens_per_step: Option<f64>,
    what_if: Option<String>,
) -> PyResult<String> {
    let extra = Extra { peak_tflops, peak_tbps, params, tokens_per_step, what_if };
    let mut opts = options(top, rules, range_ms, extra)?;
    let split = split(&mut opts, threads)?;
    let report = py.detach(|| load(&paths, &opts, split)).map_err(|e| raise(&e))?;
    to_json(&report)
}

/// The CSV tables of a Report's JSON (what `tracesight --csv DIR` writes): (file name, text).
#[pyfunction]
fn csv_files(json: &str) -> PyResult<Vec<(String, String)>> {
    Ok(tracesight::export::csv::files(&from_json::<Report>(json)?))
}

/// The text report (what `tracesight` prints) of a Report's JSON.
#[pyfunction]
fn render_text(json: &str) -> PyResult<String> {
    Ok(tracesight::text::render(&from_json::<Report>(json)?))
}

/// The Markdown summary (what `tracesight --markdown` prints) of a Report's JSON.
#[pyfunction]
fn render_markdown(json: &str) -> PyResult<String> {
    Ok(tracesight::export::markdown::render(&from_json::<Report>(json)?))
}

/// A diff of two inputs (each a trace, a report or a directory of ranks) with the CI limits
/// checked: (diff JSON, checks JSON, text, Markdown), as `tracesight diff` gives them.
#[pyfunction]
#[pyo3(signature = (a, b, fail_if=Vec::new(), top=25))]
fn diff_json(
    py: Python<'_>,
    a: PathBuf,
    b: PathBuf,
    fail_if: Vec<String>,
    top: usize,
) -> PyResult<(String, String, String, String)> {
    let limits: Vec<Limit> =
        fail_if.iter().map(|l| Limit::parse(l).map_err(PyValueError::new_err)).collect::<PyResult<_>>()?;
    let opts = Options::default();
    let split = Split::new(1);
    let (ra, rb) = py.detach(|| (load(&[a], &opts, split), load(&[b], &opts, split)));
    let side = |r: Result<Report, TraceError>| -> PyResult<Vec<TraceReport>> {
        let r = r.map_err(|e| raise(&e))?;
        match r.errors.first() {
            Some(e) => Err(TracesightError::new_err(("unreadable", e.file.clone(), e.message.clone()))),
            None => Ok(r.traces),
        }
    };
    let (ta, tb) = (side(ra)?, side(rb)?);
    let d = tracesight::analysis::job::diff::diff(&ta, &tb);
    let checks = gate::check(&d, &limits);
    let text = tracesight::text::render_diff(&d, top);
    let md = tracesight::export::diff_md::render(&d, &checks, top.min(10));
    Ok((to_json(&d)?, to_json(&checks)?, text, md))
}

#[pymodule]
fn _tracesight(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("TracesightError", m.py().get_type::<TracesightError>())?;
    m.add("TOOL_VERSION", tracesight::TOOL_VERSION)?;
    m.add_function(wrap_pyfunction!(analyze_json, m)?)?;
    m.add_function(wrap_pyfunction!(render_text, m)?)?;
    m.add_function(wrap_pyfunction!(csv_files, m)?)?;
    m.add_function(wrap_pyfunction!(render_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(diff_json, m)?)?;
    Ok(())
}
