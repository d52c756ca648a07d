//! Reading one `.json.gz` trace on several threads. One thread inflates and cuts the inflated
//! stream into parts at event boundaries as it goes (where a part of a plain file may be cut,
//! see [`split`]); each part streams to a worker as it is inflated, so that the first part is
//! read while the rest inflates, and the parts are joined in file order. Inflating is several
//! times faster than reading, so the workers, not the inflating, set the pace. Where a part
//! cannot be joined exactly (a limit reached in it), the stream is inflated again and read on
//! from that part's start, into the parts joined before it; where the stream is damaged, the
//! caller reads the file in one go instead: the result is always what one thread gives.

use super::{decode_pipelined, join_in_order, InParts, Joining, Split};
use crate::analysis::job::split::{self, PartJob, PartReader, Rest};
use crate::analysis::model::collect::Collector;
use crate::analysis::{report_of_parts, Options, TraceError};
use crate::input::Encoding;
use crate::report::TraceReport;
use crate::trace::{Fatal, Outcome};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;

/// Inflated bytes handed to a worker at a time, at most.
const PIECE: usize = 1 << 20;

/// A part as a worker takes it: where it starts, and its bytes as they are inflated.
struct Streamed {
    k: usize,
    from: u64,
    in_object: bool,
    pieces: Receiver<Piece>,
}

enum Piece {
    /// The part's next bytes: the first `.1` of the buffer (which goes back to be filled again).
    Bytes(Vec<u8>, usize),
    /// The part ends at offset `to`; `last` when the stream ends there.
    End { to: u64, last: bool },
}

/// Analyses the gzip-compressed trace at `path` on `split.threads` threads, in parts of about
/// a quarter of `split.part_bytes` inflated bytes, and says how it was read in parts; None when
/// it is not one to read so (one thread, not a regular file, not gzip, not a plain Chrome-JSON
/// trace inside, damaged).
pub fn analyze(
    file: &str,
    path: &Path,
    split: Split,
    opts: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Option<(Result<TraceReport, TraceError>, InParts)> {
    // Opened again for its own offset; a pipe would be consumed by a second reading.
    let f = File::open(path).ok().filter(|f| f.metadata().is_ok_and(|m| m.is_file()))?;
    if split.threads < 2 {
        return None;
    }
    // A quarter of a plain file's parts: inflated bytes wait in memory until read, where a
    // mapped file's wait in the page cache (2 GB trace, two threads: a quarter's parts read as
    // fast as whole ones and peaked at 277 MB against 285).
    let part = (split.part_bytes / 4).max(1) as usize;
    // Pieces of 1 MB at the default parts: blocks that large are mapped by the allocator
    // (`main.rs`) and given back when freed; at 512 kB they stayed in the inflating thread's
    // heap after the parts were read (10 M tiny kernels read on: peak 294 -> 287 MB).
    let piece = (part / 8).clamp(256, PIECE);
    // The inflated bytes in flight, at most: a part for each worker and one more, so that a
    // worker that finishes one finds the next already inflated.
    let budget = (split.threads + 1) * part.div_ceil(piece) + split.threads;
    let stop = AtomicBool::new(false);
    let (done_tx, done_rx) = mpsc::channel();
    let (pool_tx, pool_rx) = mpsc::channel::<Vec<u8>>();
    let (parts_tx, parts_rx) = mpsc::channel::<Streamed>();
    let parts_rx = Mutex::new(parts_rx);
    // Where each part offered starts in the inflated stream, and whether inside an object.
    let starts = Mutex::new(Vec::new());
    let joining = std::thread::scope(|s| {
        for _ in 0..split.threads {
            let (done_tx, pool_tx, parts_rx, stop) = (done_tx.clone(), pool_tx.clone(), &parts_rx, &stop);
            // A worker that cannot start leaves its parts to the others; with none, the join
            // finds no senders and the caller reads the file in one go.
            let _ = std::thread::Builder::new().spawn_scoped(s, move || work(parts_rx, done_tx, pool_tx, stop));
        }
        drop((done_tx, pool_tx));
        let cut = Cutter { parts: parts_tx, pool: pool_rx, stop: &stop, starts: &starts, part, piece, budget, made: 0 };
        let _ = std::thread::Builder::new().spawn_scoped(s, move || cut.run(f, progress));
        let joining = join_in_order(done_rx, &|_| {});
        if let Joining::Until(..) = joining {
            stop.store(true, Ordering::SeqCst);
        }
        joining
    });
    match joining {
        Joining::Whole(collector, outcome) => {
            Some((report_of_parts(file, collector, Ok(outcome), opts), InParts::Joined))
        }
        // Once the threads are done, the stream (not kept) is inflated again and read on from
        // part k. A part never offered: the inflating stopped before it (damaged, or not a
        // trace to cut), which a reading in one go reports.
        Joining::Until(k, parts) => {
            let (from, in_object) = starts.into_inner().ok()?.get(k).copied()?;
            let (collector, read) = read_rest(path, parts.rest_from(from, in_object), from, progress)?;
            Some((report_of_parts(file, collector, read, opts), InParts::ReadOnFrom { part: k }))
        }
    }
}

/// Inflates the stream again and reads it on from `from` (the bytes before it inflated and
/// passed over, several times faster than read) into `rest`; None when the stream fails
/// (the caller reads it in one go, which reports where).
fn read_rest(
    path: &Path,
    mut rest: Rest,
    from: u64,
    progress: &dyn Fn(u64),
) -> Option<(Collector, Result<Outcome, Fatal>)> {
    let mut at = 0u64;
    let failed = decode_pipelined(File::open(path).ok()?, &mut |piece, consumed| {
        let skip = from.saturating_sub(at).min(piece.len() as u64) as usize;
        at += piece.len() as u64;
        rest.feed(&piece[skip..]);
        progress(consumed);
        rest.wants_more()
    });
    failed.is_none().then(|| rest.finish())
}

/// Takes the next part, reads its bytes as they come, hands it on when it ends, and again.
fn work(
    parts: &Mutex<Receiver<Streamed>>,
    done: Sender<(usize, Option<split::Part>)>,
    pool: Sender<Vec<u8>>,
    stop: &AtomicBool,
) {
    loop {
        let Ok(part) = parts.lock().map_err(drop).and_then(|rx| rx.recv().map_err(drop)) else { return };
        let job = PartJob { from: part.from, to: part.from, last: false, in_object: part.in_object };
        let mut reader = PartReader::new(job);
        let read = loop {
            match part.pieces.recv() {
                _ if stop.load(Ordering::SeqCst) => return,
                Ok(Piece::Bytes(buf, n)) => {
                    if reader.wants_more() {
                        reader.feed(&buf[..n]);
                    }
                    let _ = pool.send(buf);
                }
                Ok(Piece::End { to, last }) => break reader.finish_at(to, last),
                // The inflating stopped inside this part.
                Err(_) => return,
            }
        };
        if done.send((part.k, read)).is_err() {
            return;
        }
    }
}

/// The inflating thread's side: inflates, cuts, and streams each part to whoever takes it.
struct Cutter<'a> {
    parts: Sender<Streamed>,
    pool: Receiver<Vec<u8>>,
    stop: &'a AtomicBool,
    starts: &'a Mutex<Vec<(u64, bool)>>,
    part: usize,
    piece: usize,
    /// Buffers of `piece` bytes that may be made, and how many were.
    budget: usize,
    made: usize,
}

impl Cutter<'_> {
    /// None when it stopped early: not gzip, not a trace to cut, damaged, or told to stop.
    fn run(mut self, f: File, progress: &(dyn Fn(u64) + Sync)) -> Option<()> {
        let mut stream = crate::input::decode(f).ok().filter(|d| d.encoding == Encoding::Gzip)?;
        let consumed = stream.consumed.clone();
        let mut head = vec![0; split::HEAD_BYTES];
        let h = fill(&mut stream, &mut head)?;
        head.truncate(h);
        let layout = split::layout(&head)?;
        let mut stream = std::io::Cursor::new(head).chain(stream);
        // Where the part starts, and the stream offset of `buf`.
        let (mut k, mut from, mut at) = (0, 0u64, 0u64);
        let mut to = self.start(k, from, layout.in_object)?;
        let mut buf = self.buffer()?;
        let mut n = fill(&mut stream, &mut buf)?;
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return None;
            }
            let end = n < buf.len(); // the stream ended in this buffer
            let long = at + n as u64 - from >= self.part as u64;
            let after = (layout.events_at + 1).saturating_sub(at);
            match long.then(|| super::next_cut(&buf[..n], after)).flatten() {
                Some(c) => {
                    // The bytes after the cut start the next part's buffer.
                    let (c, mut next) = (c as usize, self.buffer()?);
                    next[..n - c].copy_from_slice(&buf[c..n]);
                    (k, from, at) = (k + 1, at + c as u64, at + c as u64);
                    to.send(Piece::Bytes(buf, c)).ok()?;
                    to.send(Piece::End { to: from, last: false }).ok()?;
                    to = self.start(k, from, layout.in_object)?;
                    buf = next;
                    n = n - c + fill(&mut stream, &mut buf[n - c..])?;
                }
                None if end => {
                    to.send(Piece::Bytes(buf, n)).ok()?;
                    return to.send(Piece::End { to: at + n as u64, last: true }).ok();
                }
                None => {
                    to.send(Piece::Bytes(buf, n)).ok()?;
                    at += n as u64;
                    buf = self.buffer()?;
                    n = fill(&mut stream, &mut buf)?;
                }
            }
            progress(consumed.get());
        }
    }

    /// Offers part `k` to the workers; its bytes go to the sender returned.
    fn start(&self, k: usize, from: u64, in_object: bool) -> Option<Sender<Piece>> {
        self.starts.lock().ok()?.push((from, in_object));
        let (tx, pieces) = mpsc::channel();
        self.parts.send(Streamed { k, from, in_object, pieces }).ok()?;
        Some(tx)
    }

    /// A buffer back from a worker, a new one while the budget allows, else the next one a
    /// worker gives back. (Buffers keep their length: zeroing them for every piece would cost
    /// about as much as the inflating.)
    fn buffer(&mut self) -> Option<Vec<u8>> {
        if let Ok(b) = self.pool.try_recv() {
            return Some(b);
        }
        if self.made < self.budget {
            self.made += 1;
            return Some(vec![0; self.piece]);
        }
        self.pool.recv().ok()
    }
}

/// Reads until `buf` is full or the stream ends; None on a read error (the caller's reading
/// in one go then reports it, with what was read before it).
fn fill(r: &mut impl Read, buf: &mut [u8]) -> Option<usize> {
    match crate::input::fill_to(r, buf, buf.len()) {
        (n, None) => Some(n),
        (_, Some(_)) => None,
    }
}
