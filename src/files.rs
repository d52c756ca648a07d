//! Trace files on the local disk (native only: the CLI, the Python package): directories
//! expanded into their traces, and one file read on several threads when it splits, else
//! decompressed on a second thread while this one parses. The core stays single-threaded.

#![forbid(unsafe_code)]

use crate::analysis::{Analysis, Options, TraceError};
use crate::parallel::{self, InParts, Split};
use crate::report::TraceReport;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Reads one trace (or tracesight report) file: on several threads when `split` allows and
/// the file splits, else in one go. Also says how it was read in parts, if it was.
pub fn read(
    name: &str,
    path: &Path,
    split: Split,
    opts: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> (Result<Vec<TraceReport>, TraceError>, Option<InParts>) {
    match (parallel::analyze_file(name, path, split, opts, progress), File::open(path)) {
        (Some((r, how)), _) => (r.map(|t| vec![t]), Some(how)),
        (None, Ok(f)) => {
            // A refused split may have moved the progress: reading starts again.
            progress(0);
            if let Some(r) = parallel::analyze_mapped(name, &f, opts, progress) {
                return (r, None);
            }
            if let Some((r, how)) = parallel::gzip::analyze(name, path, split, opts, progress) {
                return (r.map(|t| vec![t]), Some(how));
            }
            progress(0);
            (analyze_pipelined(name, f, opts, progress), None)
        }
        (None, Err(e)) => (Err(error(path, &format!("cannot open: {e}"))), None),
    }
}

pub fn is_trace_name(p: &Path) -> bool {
    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    n.ends_with(".json") || n.ends_with(".json.gz")
}

/// Expands directories into their trace files, sorted by name.
pub fn expand(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<TraceError>) {
    let (mut files, mut errors) = (Vec::new(), Vec::new());
    for p in paths {
        if p.is_dir() {
            match std::fs::read_dir(p) {
                Ok(rd) => {
                    let mut inside: Vec<PathBuf> = rd
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.is_file() && is_trace_name(p))
                        .collect();
                    inside.sort();
                    if inside.is_empty() {
                        errors.push(error(p, "no *.json or *.json.gz trace files in this directory"));
                    }
                    files.extend(inside);
                }
                Err(e) => errors.push(error(p, &format!("cannot read directory: {e}"))),
            }
        } else {
            files.push(p.clone());
        }
    }
    (files, errors)
}

pub fn display_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}

/// An input that could not be opened or listed, as a file error.
pub fn error(p: &Path, message: &str) -> TraceError {
    TraceError { file: p.display().to_string(), kind: crate::ErrorKind::Io, message: message.to_string() }
}

/// Reads and decompresses on a second thread while this one parses each decoded piece
/// where it lies (the core itself stays single-threaded). `progress` gets the file bytes
/// consumed.
fn analyze_pipelined(
    name: &str,
    file: File,
    opts: &Options,
    progress: &dyn Fn(u64),
) -> Result<Vec<crate::TraceReport>, TraceError> {
    let mut analysis = Analysis::new(name, opts.clone());
    let failure = parallel::decode_pipelined(file, &mut |piece, consumed| {
        analysis.feed(piece);
        progress(consumed);
        analysis.wants_more()
    });
    analysis.finish(failure)
}
