//! A graph capture trace beside a replay trace: each replayed row is mapped to the launch that
//! captured it, and takes that launch's op, module and stack.
//!
//! The capture trace's launch calls between a `*StreamBeginCapture` and its `*StreamEndCapture`
//! on one thread are one graph's nodes, in capture order (during capture nothing runs, so the
//! calls are all there is: ROCm names the kernel on the call, CUDA does not). A replay is
//! mapped to a captured graph by the rows' graph node ids in order, where the profiler writes
//! them (CUDA 12+: node ids grow in creation order, which is capture order) and a captured
//! graph has as many nodes; else by aligning the replay's kernel names with each graph's
//! (longest common subsequence), keeping the best. A trace with no capture window (an eager
//! trace of the same step) is one sequence of the launches that ran.
//!
//! The capture's ops and `nn.Module` spans are copied into the replay's reading on threads of
//! their own (their own clock: nothing else is on those threads), so attribution finds a
//! matched row's op and modules there as it would for a launch call.

use super::collect::{Collector, GpuKind, OpRow, NAME_DATALOADER, NAME_GRAPH_LAUNCH, NAME_LAUNCH, NAME_STEP, NONE};
use super::collect::{NAME_SYNC, NO_NAME};
use crate::limits;
use crate::report::{CaptureMatch, MatchMethod};
use crate::vocab::units::us;
use rustc_hash::FxHashMap;

/// The reading of a capture trace (or an eager trace of the same step), to be handed to the
/// replay trace's analysis.
pub struct Capture {
    pub(crate) file: String,
    pub(crate) collector: Collector,
}

/// A replayed row mapped to the launch that captured it: the point (an imported thread, a
/// time on the capture's clock) where its op and modules are found.
#[derive(Debug, Clone, Copy)]
pub struct CapturedRow {
    pub row: u32,
    pub thread: u32,
    pub t: i64,
    pub method: MatchMethod,
}

/// One captured launch: its kernel name (capture's name id, or NO_NAME when the trace does not
/// say), what kind of row it makes, and where it was called.
#[derive(Clone, Copy)]
struct Node {
    name: u32,
    kind: GpuKind,
    thread: u32,
    start: i64,
}

/// A replayed sequence mapped: the captured graph, (position in the replay, node in the
/// graph) pairs, and how.
type Mapping = (usize, Vec<(usize, usize)>, MatchMethod);

/// Keys the capture's threads are copied to: a pid no trace writes.
const IMPORT_PID: i64 = i64::MIN + 1;
/// External ids of copied ops with known work: far below any a profiler writes.
const IMPORTED_IDS: i64 = i64::MIN / 4;

/// What kind of row a runtime call makes when captured, if any.
fn node_kind(name: &str, flags: u8) -> Option<GpuKind> {
    if flags & NAME_GRAPH_LAUNCH != 0 || flags & NAME_SYNC != 0 || name.contains("HostFunc") {
        None
    } else if flags & NAME_LAUNCH != 0 {
        Some(GpuKind::Kernel)
    } else if name.contains("Memcpy") {
        Some(GpuKind::Memcpy)
    } else if name.contains("Memset") {
        Some(GpuKind::Memset)
    } else {
        None
    }
}

/// The captured graphs (each a sequence of launches), and whether they came from capture
/// windows (false: the launches of an eager trace, one sequence).
fn captured_graphs(k: &Collector) -> (Vec<Vec<Node>>, bool) {
    let named: FxHashMap<i64, u32> = k.launch_kernels.iter().map(|l| (l.correlation, l.name)).collect();
    // The first row a call launched (an eager trace, or a kernel run outside capture).
    let mut ran: FxHashMap<i64, u32> = FxHashMap::default();
    for i in 0..k.gpu.len() {
        ran.entry(k.gpu.correlation(i)).or_insert(k.gpu.name(i));
    }
    let mut calls: Vec<usize> = (0..k.runtime.len()).collect();
    calls.sort_unstable_by_key(|&i| (k.runtime[i].thread, k.runtime[i].start, i));
    let (mut graphs, mut eager) = (Vec::new(), Vec::new());
    let mut open: Option<(u32, Vec<Node>)> = None;
    for i in calls {
        let call = k.runtime[i];
        let name = k.names.get(call.name);
        if open.as_ref().is_some_and(|o| o.0 != call.thread) {
            open = None;
        }
        if name.contains("BeginCapture") {
            open = Some((call.thread, Vec::new()));
            continue;
        }
        if name.contains("EndCapture") {
            graphs.extend(open.take().map(|o| o.1).filter(|g| !g.is_empty()));
            continue;
        }
        let Some(kind) = node_kind(name, k.names.flags[call.name as usize]) else { continue };
        let label = named.get(&call.correlation).or(ran.get(&call.correlation)).copied().unwrap_or(NO_NAME);
        let node = Node { name: label, kind, thread: call.thread, start: call.start };
        match &mut open {
            Some((_, g)) => g.push(node),
            None if ran.contains_key(&call.correlation) => eager.push(node),
            None => {}
        }
    }
    if graphs.is_empty() {
        (if eager.is_empty() { vec![] } else { vec![eager] }, false)
    } else {
        (graphs, true)
    }
}

/// Longest common subsequence of `a` (replay) and `b` (capture) under `eq`: the matched index
/// pairs, in order. Quadratic; the caller bounds the sizes (to 2^24 cells, so lengths fit u16).
fn lcs(a: &[usize], b: &[usize], eq: &dyn Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    let w = m + 1;
    let mut t = vec![0u16; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * w + j] =
                if eq(a[i], b[j]) { t[(i + 1) * w + j + 1] + 1 } else { t[(i + 1) * w + j].max(t[i * w + j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n && j < m {
        if eq(a[i], b[j]) {
            out.push((a[i], b[j]));
            i += 1;
            j += 1;
        } else if t[(i + 1) * w + j + 1] == t[i * w + j] {
            // Skipping both loses nothing: a kernel that differs in place keeps the rest in
            // step (the same positions pair up where the sequences tie).
            i += 1;
            j += 1;
        } else if t[(i + 1) * w + j] >= t[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The replay's best alignment with one captured sequence. The table is bounded: a long
/// sequence (an eager trace) is aligned in windows of twice the replay's length; a replay too
/// long even for that takes, row by row, the next launch with its name close ahead.
fn align(replay: usize, graph: usize, eq: &dyn Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    const CELLS: usize = 1 << 24;
    if replay == 0 || graph == 0 {
        return Vec::new();
    }
    let a: Vec<usize> = (0..replay).collect();
    if replay.saturating_mul(graph) <= CELLS {
        return lcs(&a, &(0..graph).collect::<Vec<_>>(), eq);
    }
    let width = 2 * replay;
    if replay.saturating_mul(width) > CELLS {
        let (mut out, mut j) = (Vec::new(), 0);
        for i in 0..replay {
            if let Some(d) = (j..graph.min(j + 64)).find(|&d| eq(i, d)) {
                out.push((i, d));
                j = d + 1;
            }
        }
        return out;
    }
    let mut best = Vec::new();
    let mut from = 0;
    while from < graph {
        let b: Vec<usize> = (from..(from + width).min(graph)).collect();
        let found = lcs(&a, &b, eq);
        if found.len() > best.len() {
            best = found;
        }
        from += replay;
    }
    best
}

/// Maps the replay rows of `c` (grouped by graph launch call) to the capture's launches and
/// copies the capture's ops and modules into `c`. Rows come back sorted by row.
pub fn import(c: &mut Collector, capture: Capture) -> (Vec<CapturedRow>, CaptureMatch) {
    let k = capture.collector;
    let (graphs, windows) = captured_graphs(&k);
    let mut summary = CaptureMatch {
        file: capture.file,
        captured_graphs: if windows { graphs.len() as u64 } else { 0 },
        captured_launches: graphs.iter().map(|g| g.len() as u64).sum(),
        named_launches: graphs.iter().flatten().filter(|n| n.name != NO_NAME).count() as u64,
        ..Default::default()
    };
    let replays = replays(c);
    let node_of: FxHashMap<u32, i64> = c.gpu_graph.iter().map(|g| (g.row, g.node)).collect();
    // The same replayed sequence maps the same way: worked out once per sequence.
    let mut done: FxHashMap<Vec<(u32, GpuKind)>, Option<Mapping>> = FxHashMap::default();
    // Replayed, matched, by node order, by kernel sequence: summed in ns and converted once
    // (a sum of microseconds prints float noise).
    let mut ns = [0i64; 4];
    let mut out: Vec<CapturedRow> = Vec::new();
    let mut threads: FxHashMap<u32, u32> = FxHashMap::default();
    for mut rows in replays {
        let by_node = rows.iter().all(|r| node_of.get(r).is_some_and(|&n| n != NONE));
        if by_node {
            rows.sort_by_key(|r| (node_of[r], *r));
        } else {
            rows.sort_by_key(|&r| (c.gpu.start(r as usize), r));
        }
        let seq: Vec<(u32, GpuKind)> = rows.iter().map(|&r| (c.gpu.name(r as usize), c.gpu.kind(r as usize))).collect();
        summary.replayed_rows += rows.len() as u64;
        ns[0] += rows.iter().map(|&r| c.gpu.dur(r as usize)).sum::<i64>();
        let found = done.entry(seq.clone()).or_insert_with(|| map_replay(c, &k, &graphs, &seq, by_node));
        let Some((g, pairs, method)) = found else { continue };
        for &(pos, node) in pairs.iter() {
            let n = graphs[*g][node];
            let next = c.threads.len() as u32;
            let thread = *threads
                .entry(n.thread)
                .or_insert_with(|| *c.threads.entry((IMPORT_PID, n.thread as i64)).or_insert(next));
            let row = rows[pos];
            let dur = c.gpu.dur(row as usize);
            summary.matched_rows += 1;
            ns[1] += dur;
            match method {
                MatchMethod::NodeOrder => ns[2] += dur,
                MatchMethod::KernelSequence => ns[3] += dur,
            }
            out.push(CapturedRow { row, thread, t: n.start, method: *method });
        }
    }
    out.sort_unstable_by_key(|r| r.row);
    copy_spans(c, &k, &threads);
    [summary.replayed_us, summary.matched_us, summary.by_node_order_us, summary.by_sequence_us] = ns.map(us);
    (out, summary)
}

/// The replayed rows of each graph launch call, by the call's correlation id.
fn replays(c: &Collector) -> Vec<Vec<u32>> {
    let launches: FxHashMap<i64, usize> = c
        .runtime
        .iter()
        .filter(|r| c.names.is(r.name, NAME_GRAPH_LAUNCH))
        .enumerate()
        .map(|(i, r)| (r.correlation, i))
        .collect();
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); launches.len()];
    for i in 0..c.gpu.len() {
        if let Some(&l) = launches.get(&c.gpu.correlation(i)) {
            rows[l].push(i as u32);
        }
    }
    rows.retain(|r| !r.is_empty());
    rows
}

/// One replayed sequence against the captured graphs: by node order where the rows carry node
/// ids and a graph has as many launches with no known name disagreeing, else the best
/// alignment of names.
fn map_replay(
    c: &Collector,
    k: &Collector,
    graphs: &[Vec<Node>],
    seq: &[(u32, GpuKind)],
    by_node: bool,
) -> Option<Mapping> {
    let same = |r: (u32, GpuKind), n: &Node| match (r.1, n.kind) {
        (GpuKind::Kernel, GpuKind::Kernel) => n.name != NO_NAME && c.names.get(r.0) == k.names.get(n.name),
        (a, b) => a == b,
    };
    if by_node {
        let fits = |g: &Vec<Node>| {
            g.len() == seq.len() && seq.iter().zip(g).all(|(&r, n)| r.1 == n.kind && (n.name == NO_NAME || same(r, n)))
        };
        if let Some(g) = graphs.iter().position(fits) {
            return Some((g, (0..seq.len()).map(|i| (i, i)).collect(), MatchMethod::NodeOrder));
        }
    }
    let mut best: Option<(usize, Vec<(usize, usize)>)> = None;
    for (g, nodes) in graphs.iter().enumerate() {
        if !nodes.iter().any(|n| n.name != NO_NAME) {
            continue;
        }
        let pairs = align(seq.len(), nodes.len(), &|i, j| same(seq[i], &nodes[j]));
        if pairs.len() > best.as_ref().map_or(0, |b| b.1.len()) {
            best = Some((g, pairs));
        }
    }
    best.map(|(g, pairs)| (g, pairs, MatchMethod::KernelSequence))
}

/// Copies the capture's ops and `nn.Module` spans on the captured launches' threads into `c`,
/// names re-interned; step and DataLoader spans stay out (they would make steps of their own).
fn copy_spans(c: &mut Collector, k: &Collector, threads: &FxHashMap<u32, u32>) {
    let mut copy = |spans: &[OpRow], into_ops: bool| {
        for o in spans {
            let Some(&thread) = threads.get(&o.thread) else { continue };
            if k.names.is(o.name, NAME_STEP) || k.names.is(o.name, NAME_DATALOADER) {
                continue;
            }
            let list = if into_ops { &mut c.ops } else { &mut c.modules };
            if list.len() >= limits::MAX_ROWS {
                c.counters.rows_dropped += 1;
                continue;
            }
            let name = c.names.intern(k.names.get(o.name).as_bytes());
            // An op whose work the capture knows keeps it, under an id no replay op carries.
            let work = if into_ops && o.external != NONE { k.op_work.get(&o.external) } else { None };
            let external = work.map_or(NONE, |w| {
                let id = IMPORTED_IDS + c.op_work.len() as i64;
                c.op_work.insert(id, *w);
                id
            });
            let list = if into_ops { &mut c.ops } else { &mut c.modules };
            list.push(OpRow { start: o.start, end: o.end, external, seq: NONE, name, thread });
        }
    };
    copy(&k.ops, true);
    copy(&k.modules, false);
}
