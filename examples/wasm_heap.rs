//! The page's analysis worker's wasm memory, emulated natively: the worker's own steps (the
//! file copied into one reused buffer 256 KB at a time and fed to an `Analysis` told how far
//! into the file each piece reaches, the report built, then its compact JSON written 1 MB at a
//! time) on the allocator Rust's wasm32 standard library uses (dlmalloc), over a memory that,
//! as a wasm memory, only grows at its top, is never given back and cannot remap a block in
//! place. Prints the memory's size after each step (its high-water mark, as the page's `wasm
//! memory` figure is) and the live bytes.
//!
//!   cargo run --release --example wasm_heap FILE.json
//!   SIZED=0 FEED_KB=16384 JSON=whole cargo run --release --example wasm_heap FILE.json   (as before)
//!   PARTS=3 cargo run --release --example wasm_heap FILE.json   (the lead of a reading in parts)
//!
//! Natively the allocator remaps large blocks and returns freed ones to the system, so the
//! CLI's peak RSS says little about the worker's memory; this does, in seconds, without a
//! browser (checked against Chromium's figures in docs/performance.md). Native sizes are
//! 64-bit (a wasm32 `Vec` or `String` header is half as large), so it errs on the high side.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const PAGE: usize = 64 << 10;
/// Address space reserved for the emulated memory (wasm32's own ceiling).
const RESERVE: usize = 4 << 30;

static BASE: AtomicUsize = AtomicUsize::new(0);
static TOP: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// A wasm memory: `memory.grow` hands out pages above the current top, nothing is returned.
struct WasmMemory;

unsafe impl dlmalloc::Allocator for WasmMemory {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let base = BASE.load(Ordering::Relaxed);
        if base == 0 {
            return (std::ptr::null_mut(), 0, 0);
        }
        let size = size.div_ceil(PAGE) * PAGE;
        let top = TOP.load(Ordering::Relaxed);
        if top + size > RESERVE {
            return (std::ptr::null_mut(), 0, 0);
        }
        TOP.store(top + size, Ordering::Relaxed);
        ((base + top) as *mut u8, size, 0)
    }
    fn remap(&self, _: *mut u8, _: usize, _: usize, _: bool) -> *mut u8 {
        std::ptr::null_mut()
    }
    fn free_part(&self, _: *mut u8, _: usize, _: usize) -> bool {
        false
    }
    fn free(&self, _: *mut u8, _: usize) -> bool {
        false
    }
    fn can_release_part(&self, _: u32) -> bool {
        false
    }
    fn allocates_zeros(&self) -> bool {
        true
    }
    fn page_size(&self) -> usize {
        PAGE
    }
}

/// dlmalloc behind a spin lock (the example runs on one thread; the lock keeps it sound).
struct Heap {
    lock: AtomicBool,
    inner: UnsafeCell<dlmalloc::Dlmalloc<WasmMemory>>,
}

unsafe impl Sync for Heap {}

impl Heap {
    fn with<T>(&self, f: impl FnOnce(&mut dlmalloc::Dlmalloc<WasmMemory>) -> T) -> T {
        while self.lock.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
        // SAFETY: the lock gives this thread the only access until it is released below.
        let out = f(unsafe { &mut *self.inner.get() });
        self.lock.store(false, Ordering::Release);
        out
    }
}

/// Whether allocations go to the emulated memory; off, they go to the system's (another
/// worker's memory: the parts the lead is handed, made before it starts).
static EMULATED: AtomicBool = AtomicBool::new(true);

/// Whether `p` lies in the emulated memory (else the system allocator gave it).
fn in_emulated(p: *mut u8) -> bool {
    let base = BASE.load(Ordering::Relaxed);
    base != 0 && (base..base + RESERVE).contains(&(p as usize))
}

unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if !EMULATED.load(Ordering::Relaxed) {
            return unsafe { std::alloc::System.alloc(l) };
        }
        ensure_base();
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        self.with(|d| unsafe { d.malloc(l.size(), l.align()) })
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if !EMULATED.load(Ordering::Relaxed) {
            return unsafe { std::alloc::System.alloc_zeroed(l) };
        }
        ensure_base();
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        self.with(|d| unsafe { d.calloc(l.size(), l.align()) })
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if !in_emulated(p) {
            return unsafe { std::alloc::System.dealloc(p, l) };
        }
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        self.with(|d| unsafe { d.free(p, l.size(), l.align()) })
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if !in_emulated(p) {
            return unsafe { std::alloc::System.realloc(p, l, new) };
        }
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        self.with(|d| unsafe { d.realloc(p, l.size(), l.align(), new) })
    }
}

#[global_allocator]
static HEAP: Heap =
    Heap { lock: AtomicBool::new(false), inner: UnsafeCell::new(dlmalloc::Dlmalloc::new_with_allocator(WasmMemory)) };

/// Reserves the emulated memory's address space once (pages are only committed when touched).
fn ensure_base() {
    if BASE.load(Ordering::Relaxed) != 0 {
        return;
    }
    let map = memmap2::MmapOptions::new().len(RESERVE).map_anon().expect("reserving address space");
    let base = map.as_ptr() as usize;
    std::mem::forget(map);
    // A wasm memory starts at 0 with the program's own data; its first page is never handed out.
    BASE.store(base, Ordering::Relaxed);
    TOP.store(PAGE, Ordering::Relaxed);
}

fn mib(n: usize) -> f64 {
    n as f64 / (1 << 20) as f64
}

fn say(step: &str) {
    eprintln!(
        "{step:>10}: memory {:7.1} MiB, live {:7.1} MiB",
        mib(TOP.load(Ordering::Relaxed)),
        mib(LIVE.load(Ordering::Relaxed))
    );
}

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: [SIZED=0] [FEED_KB=256] [JSON=chunked|whole] [PARTS=N] wasm_heap FILE.json");
        return std::process::ExitCode::from(2);
    };
    let bytes = match std::fs::File::open(&path).and_then(|f| unsafe { memmap2::Mmap::map(&f) }) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("wasm_heap: {path}: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    // The worker's (src/web/worker/reader.rs: PIECE; 4096 and 16384, a whole slice, before).
    let feed_kb: usize = std::env::var("FEED_KB").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    // The worker's (chunked: src/web/protocol.rs REPORT_CHUNK; whole: counted, then written
    // into a string of exactly its size, as before).
    let whole = std::env::var("JSON").as_deref() == Ok("whole");
    ensure_base();
    if let Some(parts) = std::env::var("PARTS").ok().and_then(|v| v.parse::<u64>().ok()).filter(|&n| n > 1) {
        return lead(&path, &bytes, parts, feed_kb);
    }
    say("start");
    let mut analysis = tracesight::Analysis::new(&path, tracesight::analysis::Options::default());
    // As the worker (src/web/worker/files.rs), unless SIZED=0 (as before).
    let sized = std::env::var("SIZED").as_deref() != Ok("0");
    let mut fed = 0;
    let mut scratch: Vec<u8> = Vec::new();
    for piece in bytes.chunks(feed_kb.max(1) << 10) {
        scratch.clear();
        scratch.extend_from_slice(piece);
        fed += piece.len() as u64;
        if sized {
            analysis.progress(fed, bytes.len() as u64);
        }
        analysis.feed(&scratch);
        if !analysis.wants_more() {
            break;
        }
    }
    say("read");
    let report = tracesight::combine_all(vec![analysis.finish(None)]);
    say("report");
    let mut sink = Sink { whole, buf: Vec::new(), total: 0 };
    if whole {
        let mut count = Sink { whole: false, buf: Vec::new(), total: 0 };
        serde_json::to_writer(&mut count, &report).expect("report as JSON");
        sink.buf.reserve_exact(count.total);
    } else {
        sink.buf.reserve_exact(1 << 20); // src/web/protocol.rs: REPORT_CHUNK
    }
    serde_json::to_writer(&mut sink, &report).expect("report as JSON");
    say("json");
    eprintln!("{:>10}: {:.1} MiB", "json size", mib(sink.total));
    drop((sink, report, scratch));
    say("end");
    std::process::ExitCode::SUCCESS
}

/// The lead worker of a reading in `n` parts (src/web/worker/files.rs, `analyse_in_parts`):
/// the other parts read and encoded first, outside the emulated memory (by other workers);
/// then the lead reads part 0, and copies in, decodes and joins each other part in turn.
fn lead(path: &str, bytes: &[u8], n: u64, feed_kb: usize) -> std::process::ExitCode {
    use tracesight::analysis::job::split::{self, Joined, Part, PartJob, PartReader};
    EMULATED.store(false, Ordering::Relaxed);
    let size = bytes.len() as u64;
    let Some(layout) = split::layout(&bytes[..bytes.len().min(split::HEAD_BYTES)]) else {
        eprintln!("wasm_heap: {path}: not a file to read in parts");
        return std::process::ExitCode::from(1);
    };
    let found = split::targets(size, n, layout).into_iter().map(|at| {
        let end = (at as usize + split::CUT_WINDOW).min(bytes.len());
        split::cut_in(&bytes[at as usize..end]).map(|c| at + c as u64)
    });
    let jobs = PartJob::all(&split::cuts(size, found.collect::<Vec<_>>()), layout);
    let read = |job: PartJob| {
        let mut reader = PartReader::new(job);
        for piece in bytes[job.from as usize..job.to as usize].chunks(feed_kb.max(1) << 10) {
            reader.feed(piece);
        }
        reader.finish()
    };
    let others: Vec<Vec<u8>> = jobs[1..].iter().map(|&job| read(job).map_or_else(Vec::new, |p| p.encode())).collect();
    eprintln!("{:>10}: {} parts, encoded {:.1} MiB", "parts", jobs.len(), mib(others.iter().map(Vec::len).sum()));
    EMULATED.store(true, Ordering::Relaxed);
    say("start");
    let Some(first) = read(jobs[0]) else {
        eprintln!("wasm_heap: {path}: its first part could not be read as one");
        return std::process::ExitCode::from(1);
    };
    say("part 0");
    let mut joined = Joined::default();
    let mut ok = joined.push(first).is_ok();
    for (k, encoded) in others.iter().enumerate() {
        // As the worker: the part's bytes copied into wasm memory, decoded, and dropped before
        // the part is joined.
        let copy = encoded.to_vec();
        say(&format!("copy {}", k + 1));
        let part = Part::decode(&copy);
        say(&format!("decode {}", k + 1));
        drop(copy);
        if std::env::var("SIZED").as_deref() != Ok("0") {
            joined.progress(jobs[k + 1].to, size);
        }
        ok &= part.is_some_and(|p| joined.push(p).is_ok());
        say(&format!("join {}", k + 1));
    }
    let Some((collector, outcome)) = joined.finish().filter(|_| ok) else {
        eprintln!("wasm_heap: {path}: the parts could not be joined");
        return std::process::ExitCode::from(1);
    };
    let report = tracesight::analysis::report_of_parts(path, collector, Ok(outcome), &Default::default());
    say("report");
    drop((report, others));
    say("end");
    std::process::ExitCode::SUCCESS
}

/// Where the report's JSON goes: one buffer of its whole size, or a buffer of one chunk that
/// is emptied when full (its bytes leave wasm memory); counts the bytes either way.
struct Sink {
    whole: bool,
    buf: Vec<u8>,
    total: usize,
}

impl std::io::Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.total += b.len();
        if self.whole {
            self.buf.extend_from_slice(b);
        } else if self.buf.capacity() > 0 {
            if self.buf.len() + b.len() > self.buf.capacity() {
                self.buf.clear();
            }
            if b.len() <= self.buf.capacity() {
                self.buf.extend_from_slice(b);
            }
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
