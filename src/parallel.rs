//! Reading one large plain-JSON trace on several threads (native only; the core stays
//! single-threaded): the parts that [`crate::analysis::job::split`] plans are read by worker threads
//! and joined in file order as they arrive. Where a part cannot be joined exactly, the file is
//! read on from that part's start on this thread, into the parts joined before it: the result
//! is always what one thread gives.

use crate::analysis::fork::Fork;
use crate::analysis::job::split::{self, Joined, Part, PartJob, PartReader, Rest};
use crate::analysis::model::collect::Collector;
use crate::analysis::{report_of_parts, Options, TraceError};
use crate::report::TraceReport;
use crate::trace::{Fatal, Outcome};
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

pub mod gzip;

/// Bytes fed at a time.
const FEED: usize = 4 << 20;

/// How a file is cut: parts of about `part_bytes`, smaller towards its end (see
/// [`split::part_targets`]); files under `min_bytes` are not split.
#[derive(Debug, Clone, Copy)]
pub struct Split {
    pub threads: usize,
    pub part_bytes: u64,
    pub min_bytes: u64,
}

impl Split {
    pub fn new(threads: usize) -> Split {
        Split { threads, part_bytes: 32 << 20, min_bytes: split::MIN_SPLIT_BYTES }
    }
}

/// Every core this process may use: the default number of threads (CLI, Python, MCP server).
pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// A [`Fork`] for the report build on `threads` threads: each join runs its second job on a
/// scoped thread while the first runs on the caller's (a pass split `threads` ways nests
/// joins). Should no thread start, the second job does not run there, and [`Fork::join`]
/// runs it after the first.
pub fn threads(threads: usize) -> Fork {
    Fork::new(|a, b| {
        std::thread::scope(|s| {
            let _ = std::thread::Builder::new().spawn_scoped(s, b);
            a();
        })
    })
    .with_ways(threads)
}

/// How a file was read in parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InParts {
    /// Every part read on its own and joined.
    Joined,
    /// Part `part` (from 0) could not be joined (a limit reached in it, a cut inside a
    /// string): the parts before it joined, the rest read on from it on one thread.
    ReadOnFrom { part: usize },
}

/// Analyses the plain-JSON trace at `path` on `split.threads` threads; None when the file is
/// not one to split (gzip, a report, small, unreadable).
pub fn analyze_file(
    file: &str,
    path: &Path,
    split: Split,
    opts: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Option<(Result<TraceReport, TraceError>, InParts)> {
    let f = File::open(path).ok()?;
    let size = f.metadata().ok()?.len();
    if split.threads < 2 || size < split.min_bytes.max(1) {
        return None;
    }
    let map = map(&f)?;
    let (jobs, layout) = plan(&map, split)?;
    let n = jobs.len();

    // Workers take parts in order; at most `ahead` parts are parsed but not yet joined, so
    // memory stays near that of one reading. Two per thread: with one, a thread that finished
    // its part waited for the join of the part before it (about 10 ms a part, 500 MB trace).
    let ahead = 2 * split.threads;
    let next = AtomicUsize::new(0);
    let joined = (Mutex::new(0usize), Condvar::new());
    let stop = AtomicBool::new(false);
    let read_bytes = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Option<Part>)>();
    let joining = std::thread::scope(|s| {
        for _ in 0..split.threads {
            let tx = tx.clone();
            let (map, jobs, next, joined, stop, read_bytes) = (&map, &jobs, &next, &joined, &stop, &read_bytes);
            // A thread that cannot start is done without: the others take its parts, and
            // with none the join finds no senders and the file is read on from its start.
            let _ = std::thread::Builder::new().spawn_scoped(s, move || loop {
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
                let part = read_part(map, jobs[k], stop, &|b| {
                    progress(read_bytes.fetch_add(b, Ordering::SeqCst) as u64 + b as u64)
                });
                if tx.send((k, part)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        let joining = join_in_order(rx, &|k| {
            *joined.0.lock().unwrap() = k;
            joined.1.notify_all();
        });
        if let Joining::Until(..) = joining {
            // The threads stop at their next piece.
            stop.store(true, Ordering::SeqCst);
            joined.1.notify_all();
        }
        joining
    });
    match joining {
        Joining::Whole(collector, outcome) => {
            Some((report_of_parts(file, collector, Ok(outcome), opts), InParts::Joined))
        }
        Joining::Until(k, parts) => {
            // Once the threads are done (their parts would sit beside the joined ones), this
            // one reads on from part k.
            let from = jobs[k].from;
            progress(from);
            let (collector, read) = read_rest(&map, parts.rest_from(from, layout.in_object), from, progress);
            Some((report_of_parts(file, collector, read, opts), InParts::ReadOnFrom { part: k }))
        }
    }
}

/// Reads the file on from `from` in one go, into the parts joined before it: what one
/// reading gives, without reading those parts again (a file past the row limit was read
/// twice, once in parts and once whole: 10 M tiny kernels took 1.3x as long on two threads
/// as on one).
fn read_rest(
    map: &memmap2::Mmap,
    mut rest: Rest,
    from: u64,
    progress: &dyn Fn(u64),
) -> (Collector, Result<Outcome, Fatal>) {
    feed_mapped(
        map,
        from as usize,
        map.len(),
        &mut |piece| {
            rest.feed(piece);
            rest.wants_more()
        },
        &mut |at, _| progress(at as u64),
    );
    rest.finish()
}

/// Reads and decompresses `file` on a second thread while this one hands each decoded piece
/// to `feed`, with the file bytes consumed so far; `feed` says whether it wants more. Bounded:
/// at most `DEPTH` pieces in flight, their buffers recycled. Returns the read error that ended
/// the stream, if one did.
pub fn decode_pipelined(file: File, feed: &mut dyn FnMut(&[u8], u64) -> bool) -> Option<io::Error> {
    const PIECE: usize = 1 << 20;
    const DEPTH: usize = 8;
    // A piece: a buffer, how much of it was read, and the file bytes consumed so far.
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<(Vec<u8>, usize, u64)>>(DEPTH);
    let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
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
    loop {
        match full_rx.recv() {
            Ok(Ok((piece, n, consumed))) => {
                let more = feed(&piece[..n], consumed);
                let _ = empty_tx.send(piece);
                if !more {
                    return None;
                }
            }
            Ok(Err(e)) => return Some(e),
            // The reading thread finished: end of input.
            Err(_) => return None,
        }
    }
}

/// The parts of the mapped file, and where its events are; None when it is not one to split
/// or too few cuts were found.
fn plan(bytes: &[u8], split: Split) -> Option<(Vec<PartJob>, split::Layout)> {
    let size = bytes.len() as u64; // what was mapped, should the file have changed since
    let layout = split::layout(&bytes[..split::HEAD_BYTES.min(size as usize)])?;
    let mut last = 0;
    let found = split::part_targets(size, split.part_bytes, split.threads, layout).into_iter().map(|at| {
        let c = next_cut(bytes, at.max(last + 1));
        last = c.unwrap_or(last);
        c
    });
    let cuts = split::cuts(size, found.collect::<Vec<_>>());
    (cuts.len() >= 3).then(|| (PartJob::all(&cuts, layout), layout))
}

/// The file mapped for reading in order. Mapped, not read: a read copies each byte out of the
/// page cache (a sixth of the CPU time on two threads, a tenth on one). Safety: the map is
/// only read, and only while `f` is open; if another process truncates the file meanwhile,
/// reading the lost pages faults (SIGBUS), as with every mmap-based reader (ripgrep, for one).
fn map(f: &File) -> Option<memmap2::Mmap> {
    let map = unsafe { memmap2::Mmap::map(f) }.ok()?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    Some(map)
}

/// Analyses a plain-JSON file on this thread from its mapped bytes (no reading thread, no
/// copy); None when it is gzip (inflated on a second thread instead) or cannot be mapped.
pub fn analyze_mapped(
    name: &str,
    f: &File,
    opts: &Options,
    progress: &dyn Fn(u64),
) -> Option<Result<Vec<TraceReport>, TraceError>> {
    let map = map(f)?;
    // An empty length may not be an empty file (a pipe, /proc): that is read, not mapped.
    if map.is_empty() || crate::input::sniff::encoding(&map[..map.len().min(2)]) == crate::input::Encoding::Gzip {
        return None;
    }
    let mut analysis = crate::analysis::Analysis::new(name, opts.clone());
    feed_mapped(
        &map,
        0,
        map.len(),
        &mut |piece| {
            analysis.feed(piece);
            analysis.wants_more()
        },
        &mut |at, _| progress(at as u64),
    );
    Some(analysis.finish(None))
}

/// Feeds bytes `from..to` of the map in pieces of [`FEED`] bytes, each unmapped once fed, until
/// `feed` (which says after each piece whether it wants more) wants no more; `fed(end, len)`
/// after each piece: for the progress bar, and to stop early.
fn feed_mapped(
    map: &memmap2::Mmap,
    from: usize,
    to: usize,
    feed: &mut dyn FnMut(&[u8]) -> bool,
    fed: &mut dyn FnMut(usize, usize),
) {
    let (mut at, to) = (from, to.min(map.len()));
    while at < to {
        let len = FEED.min(to - at);
        let more = feed(&map[at..at + len]);
        unmap(map, at, len);
        at += len;
        fed(at, len);
        if !more {
            return;
        }
    }
}

/// The bytes are parsed (the reader copied what it holds): unmap them, so that the process's
/// resident memory stays that of the analysis, not of the file.
fn unmap(map: &memmap2::Mmap, at: usize, len: usize) {
    // Safety: a shared read-only map of a file loses nothing; its pages fault in again if
    // touched.
    #[cfg(unix)]
    let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, len) };
}

/// How joining the parts in file order ended.
pub(crate) enum Joining {
    /// Every part joined: the whole file's collector and reading.
    Whole(Collector, Outcome),
    /// Part `k` is missing (it did not end where a part may, or its thread stopped) or could
    /// not be joined (a limit reached in it): the parts before it, joined.
    Until(usize, Joined),
}

/// Joins the parts as they arrive, in file order, up to the last or the first that cannot be;
/// `joined(k)` is told each time the first `k` are in.
pub(crate) fn join_in_order(rx: mpsc::Receiver<(usize, Option<Part>)>, joined: &dyn Fn(usize)) -> Joining {
    let mut waiting: std::collections::BTreeMap<usize, Option<Part>> = Default::default();
    let mut all = Joined::default();
    for k in 0.. {
        let part = loop {
            if let Some(p) = waiting.remove(&k) {
                break p;
            }
            match rx.recv() {
                Ok((i, p)) => _ = waiting.insert(i, p),
                Err(_) => break None,
            }
        };
        let Some(part) = part else { return Joining::Until(k, all) };
        let last = matches!(part, Part::Last { .. });
        if all.push(part).is_err() {
            return Joining::Until(k, all);
        }
        joined(k + 1);
        if last {
            break;
        }
    }
    // The last part is in, so the reading is whole.
    all.finish().map_or_else(|| Joining::Until(0, Joined::default()), |(c, o)| Joining::Whole(c, o))
}

/// Reads one part of the file; None when it does not end where a part may, or the join
/// stopped (the file is then read on without this part).
fn read_part(map: &memmap2::Mmap, job: PartJob, stop: &AtomicBool, progress: &dyn Fn(usize)) -> Option<Part> {
    let mut reader = PartReader::new(job);
    // In pieces, to stop early when the part turns out unjoinable or the join stopped.
    let stopped = || stop.load(Ordering::SeqCst);
    feed_mapped(
        map,
        job.from as usize,
        job.to as usize,
        &mut |piece| {
            reader.feed(piece);
            reader.wants_more() && !stopped()
        },
        &mut |_, len| progress(len),
    );
    if stopped() {
        return None;
    }
    reader.finish()
}

/// The first place at or after `at` that looks like a cut between two events (see
/// [`split::cut_in`]).
fn next_cut(bytes: &[u8], at: u64) -> Option<u64> {
    let mut pos = at as usize;
    while pos < bytes.len() {
        let window = &bytes[pos..bytes.len().min(pos + split::CUT_WINDOW)];
        if let Some(c) = split::cut_in(window) {
            return Some((pos + c) as u64);
        }
        // Overlap so that a pattern across two windows is seen.
        pos += window.len().saturating_sub(64).max(1);
    }
    None
}
