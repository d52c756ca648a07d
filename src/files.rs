//! Trace files on the local disk (native only: the CLI, the Python package): directories
//! expanded into their traces, and one file read on several threads when it splits, else
//! decompressed on a second thread while this one parses. The core stays single-threaded.

#![forbid(unsafe_code)]

use crate::analysis::{Analysis, Options, TraceError};
use crate::parallel::{self, InParts, Split};
use crate::report::TraceReport;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

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
            if let Some(r) = parallel::gzip::analyze(name, path, split, opts, progress) {
                return (r.map(|t| vec![t]), Some(InParts::Joined));
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
/// where it lies (the core itself stays single-threaded). Bounded: at most `DEPTH` pieces
/// in flight, and their buffers are recycled. `progress` gets the file bytes consumed.
fn analyze_pipelined(
    name: &str,
    file: File,
    opts: &Options,
    progress: &dyn Fn(u64),
) -> Result<Vec<crate::TraceReport>, TraceError> {
    const PIECE: usize = 1 << 20;
    const DEPTH: usize = 8;
    // A piece: a buffer, how much of it was read, and the file bytes consumed so far.
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<(Vec<u8>, usize, u64)>>(DEPTH);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    thread::spawn(move || {
        let mut decoded = match crate::input::decode(file) {
            Ok(d) => d,
            Err(e) => {
                let _ = full_tx.send(Err(crate::input::carry(&e)));
                return;
            }
        };
        loop {
            // Buffers keep their length: zeroing them again for every piece (inflating
            // gives 64 kB ones) cost more than the inflating.
            let mut buf = empty_rx.try_recv().unwrap_or_else(|_| vec![0; PIECE]);
            match crate::input::read_retrying(&mut decoded, &mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if full_tx.send(Ok((buf, n, decoded.consumed.get()))).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = full_tx.send(Err(crate::input::carry(&e)));
                    return;
                }
            }
        }
    });
    let mut analysis = Analysis::new(name, opts.clone());
    let failure = loop {
        match full_rx.recv() {
            Ok(Ok((piece, n, consumed))) => {
                analysis.feed(&piece[..n]);
                progress(consumed);
                let _ = empty_tx.send(piece);
                if !analysis.wants_more() {
                    break None;
                }
            }
            Ok(Err(e)) => break Some(e),
            // The reading thread finished: end of input.
            Err(_) => break None,
        }
    };
    analysis.finish(failure)
}
