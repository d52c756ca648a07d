//! Reading one large plain-JSON trace on several threads (native only; the core stays
//! single-threaded). The file is cut into parts at event boundaries; each part is parsed into
//! its own collector by a worker, and the parts are joined in file order. A cut is only
//! trusted once the part before it, read by the real state machine, ends exactly there (in the
//! events array, right after a comma, nothing held): so a `},{` inside a string cannot fool
//! it. Whenever something does not fit (a cut inside a string, a limit reached, metadata after
//! the events, a read error), the caller reads the file in one go instead: the result is
//! always what one thread gives.

use crate::analysis::collect::Collector;
use crate::analysis::{report_of_parts, Options, TraceError};
use crate::report::TraceReport;
use crate::trace::{Ending, Outcome, PushReader};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// Bytes read and fed at a time.
const READ: usize = 4 << 20;

/// How a file is cut: parts of about `part_bytes`, at least one per thread; files under
/// `min_bytes` are not split.
#[derive(Debug, Clone, Copy)]
pub struct Split {
    pub threads: usize,
    pub part_bytes: u64,
    pub min_bytes: u64,
}

impl Split {
    pub fn new(threads: usize) -> Split {
        Split { threads, part_bytes: 64 << 20, min_bytes: 32 << 20 }
    }
}

/// What a part gave: a part before the last ends between events.
enum Part {
    Middle { collector: Collector, events: u64, stray_commas: u64 },
    Last { collector: Collector, outcome: Outcome },
}

/// Analyses the plain-JSON trace at `path` on `split.threads` threads; None when the file is
/// not one to split (gzip, a report, small, unreadable) or its parts cannot be joined exactly.
pub fn analyze_file(
    file: &str,
    path: &Path,
    split: Split,
    opts: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Option<Result<TraceReport, TraceError>> {
    let f = File::open(path).ok()?;
    let size = f.metadata().ok()?.len();
    if split.threads < 2 || size < split.min_bytes.max(1) {
        return None;
    }
    let mut head = vec![0u8; 512.min(size as usize)];
    f.read_exact_at(&mut head, 0).ok()?;
    if head.starts_with(&[0x1f, 0x8b]) || crate::analysis::is_report(&head) {
        return None;
    }
    // The events array is an object's `traceEvents` unless the file is a bare array.
    let in_object = match head.iter().find(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0xEF | 0xBB | 0xBF)) {
        Some(b'{') => true,
        Some(b'[') => false,
        _ => return None,
    };
    // Cuts go after the start of `traceEvents` when it is near the top (Kineto writes
    // `deviceProperties` first, whose `},{` between devices is no cut between events).
    let mut top = vec![0u8; (1 << 20).min(size as usize)];
    f.read_exact_at(&mut top, 0).ok()?;
    let events_at = memchr::memmem::find(&top, b"\"traceEvents\"").unwrap_or(0) as u64;
    drop(top);
    let parts = (size / split.part_bytes.max(1)).max(split.threads as u64);
    let mut cuts = vec![0u64];
    for k in 1..parts {
        let at = (size * k / parts).max(events_at);
        if let Some(c) = next_cut(&f, at.max(*cuts.last()? + 1), size) {
            if c < size && c > *cuts.last()? {
                cuts.push(c);
            }
        }
    }
    cuts.dedup();
    cuts.push(size);
    if cuts.len() < 3 {
        return None;
    }
    let n = cuts.len() - 1;

    // Workers take parts in order; at most `ahead` parts are parsed but not yet joined, so
    // memory stays near that of one reading.
    let ahead = split.threads;
    let next = AtomicUsize::new(0);
    let joined = (Mutex::new(0usize), Condvar::new());
    let stop = AtomicBool::new(false);
    let read_bytes = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Option<Part>)>();
    std::thread::scope(|s| {
        for _ in 0..split.threads {
            let tx = tx.clone();
            let (f, cuts, next, joined, stop, read_bytes) = (&f, &cuts, &next, &joined, &stop, &read_bytes);
            s.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                if k >= n || stop.load(Ordering::SeqCst) {
                    return;
                }
                {
                    let (lock, cv) = joined;
                    let mut done = lock.lock().unwrap();
                    while k >= *done + ahead && !stop.load(Ordering::SeqCst) {
                        done = cv.wait(done).unwrap();
                    }
                }
                let part = parse_part(f, cuts[k], cuts[k + 1], k == 0, k + 1 == n, in_object, &|b| {
                    progress(read_bytes.fetch_add(b, Ordering::SeqCst) as u64 + b as u64)
                });
                if tx.send((k, part)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let result = join_in_order(rx, n, &joined, &stop);
        if result.is_none() {
            stop.store(true, Ordering::SeqCst);
            joined.1.notify_all();
        }
        let (collector, outcome) = result?;
        Some(report_of_parts(file, collector, Ok(outcome), opts))
    })
}

/// Joins the parts as they arrive, in file order.
fn join_in_order(
    rx: mpsc::Receiver<(usize, Option<Part>)>,
    n: usize,
    joined: &(Mutex<usize>, Condvar),
    stop: &AtomicBool,
) -> Option<(Collector, Outcome)> {
    let mut waiting: std::collections::BTreeMap<usize, Part> = Default::default();
    let mut all: Option<Collector> = None;
    let (mut events, mut stray_commas) = (0u64, 0u64);
    for k in 0..n {
        let part = loop {
            if let Some(p) = waiting.remove(&k) {
                break p;
            }
            let (i, p) = rx.recv().ok()?;
            waiting.insert(i, p?);
        };
        let (collector, last) = match part {
            Part::Middle { collector, events: e, stray_commas: c } => {
                events += e;
                stray_commas += c;
                (collector, None)
            }
            Part::Last { collector, outcome } => (collector, Some(outcome)),
        };
        match &mut all {
            None => all = Some(collector),
            Some(a) => a.join(collector).ok()?,
        }
        *joined.0.lock().unwrap() = k + 1;
        joined.1.notify_all();
        if let Some(mut outcome) = last {
            if stop.load(Ordering::SeqCst) {
                return None;
            }
            outcome.events += events;
            outcome.stray_commas += stray_commas;
            return Some((all?, outcome));
        }
    }
    None
}

/// Parses bytes `from..to` of the file; None when the part does not end where a part may.
fn parse_part(
    f: &File,
    from: u64,
    to: u64,
    first: bool,
    last: bool,
    in_object: bool,
    progress: &dyn Fn(usize),
) -> Option<Part> {
    let (mut reader, mut collector) = if first {
        (PushReader::new(), Collector::default())
    } else {
        (PushReader::resume_after_comma(from, in_object), Collector::for_later_part())
    };
    let mut buf = vec![0u8; READ];
    let mut at = from;
    while at < to && reader.wants_more() {
        let len = READ.min((to - at) as usize);
        f.read_exact_at(&mut buf[..len], at).ok()?;
        reader.feed(&buf[..len], &mut collector);
        progress(len);
        at += len as u64;
    }
    if last {
        let outcome = reader.finish(&mut collector, Ending::Eof).ok()?;
        return Some(Part::Last { collector, outcome });
    }
    if reader.after_event_comma() != Some(in_object) {
        return None;
    }
    let (events, stray_commas) = (reader.events(), reader.stray_commas());
    Some(Part::Middle { collector, events, stray_commas })
}

/// Whether `w` starts with one whole JSON value followed by `,` or `]` (a `},{` inside a
/// string is seldom followed by that).
fn value_then_comma(w: &[u8]) -> bool {
    let mut values = serde_json::Deserializer::from_slice(w).into_iter::<serde::de::IgnoredAny>();
    if !matches!(values.next(), Some(Ok(_))) {
        return false;
    }
    let end = values.byte_offset();
    matches!(w[end..].iter().find(|b| !b.is_ascii_whitespace()), Some(b',' | b']'))
}

/// The first place at or after `at` that looks like a cut between two events: right after the
/// comma of `}` `,` `{` (whitespace allowed between). Only a candidate: the reading checks it.
fn next_cut(f: &File, at: u64, size: u64) -> Option<u64> {
    let mut buf = vec![0u8; 1 << 16];
    let mut pos = at;
    while pos < size {
        let len = buf.len().min((size - pos) as usize);
        f.read_exact_at(&mut buf[..len], pos).ok()?;
        let w = &buf[..len];
        for c in memchr::memchr_iter(b',', w) {
            let before = w[..c].iter().rev().find(|b| !b.is_ascii_whitespace());
            let after = w[c + 1..].iter().find(|b| !b.is_ascii_whitespace());
            if before == Some(&b'}') && after == Some(&b'{') && value_then_comma(&w[c + 1..]) {
                return Some(pos + c as u64 + 1);
            }
        }
        // Overlap so that a pattern across two windows is seen.
        pos += (len as u64).saturating_sub(64).max(1);
    }
    None
}
