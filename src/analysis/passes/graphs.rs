//! Graph replays grouped by graph: one pass over the rows a graph launch replayed. A graph is
//! the profiler's graph id where the rows carry one, else the kernel-name sequence of a replay
//! (its signature); each says how often it was replayed, its rows per replay, its GPU time,
//! the op around its launch call, and how much of its time a capture trace mapped.

use crate::analysis::model::attribution::{Attribution, NO};
use crate::analysis::model::collect::{Call, Collector, NAME_GRAPH_LAUNCH};
use crate::report::{CaptureMatch, GraphReplays, MatchMethod, ReplayedGraph};
use crate::vocab::units::us;
use rustc_hash::FxHashMap;

/// Op names in the "launched under" chain: the innermost few, each cut to this many chars.
const CHAIN_LEVELS: usize = 3;
const NAME_CHARS: usize = 80;

#[derive(Default)]
struct Group {
    graph_id: Option<i64>,
    signature: u64,
    first: Vec<u32>,
    launches: u64,
    rows: (u64, u64),
    ns: i64,
    matched_ns: i64,
    methods: [i64; 2],
    /// Launches by the op chain around them (None: no op).
    under: FxHashMap<Option<String>, u64>,
}

/// FNV-1a over the names of a replay's rows in order: the same sequence in any trace gives
/// the same signature.
fn signature(c: &Collector, rows: &[u32]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &r in rows {
        for &b in c.names.get(c.gpu.name(r as usize)).as_bytes().iter().chain(b"\0") {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The graph groups of a trace's replays (None without a graph launch that replayed rows, and
/// no capture).
/// `short` names a kernel for the reader; `capture` is what a capture trace mapped.
pub fn graph_replays(
    c: &Collector,
    at: &Attribution,
    runtime: &[Call],
    short: &dyn Fn(u32) -> String,
    capture: Option<CaptureMatch>,
) -> Option<GraphReplays> {
    let names = &c.names;
    let mut by_call: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for (i, &r) in at.runtime.iter().enumerate() {
        if r != NO && names.is(runtime[r as usize].name, NAME_GRAPH_LAUNCH) {
            by_call.entry(r).or_default().push(i as u32);
        }
    }
    // A capture given beside a trace with no replays is still reported (it matched nothing).
    if by_call.is_empty() && capture.is_none() {
        return None;
    }
    let graph_of: FxHashMap<u32, (i64, i64)> = c.gpu_graph.iter().map(|g| (g.row, (g.graph, g.node))).collect();
    let mut calls: Vec<(u32, Vec<u32>)> = by_call.into_iter().collect();
    calls.sort_unstable_by_key(|(r, _)| (runtime[*r as usize].start, *r));
    let mut groups: Vec<Group> = Vec::new();
    let mut index: FxHashMap<(Option<i64>, u64), usize> = FxHashMap::default();
    let mut out = GraphReplays { launches: calls.len() as u64, capture, ..Default::default() };
    // Replayed, and matched to an op: summed in ns, converted once (a sum of microseconds
    // prints float noise).
    let (mut replayed_ns, mut matched_to_op_ns) = (0i64, 0i64);
    for (call, mut rows) in calls {
        rows.sort_unstable_by_key(|&r| (graph_of.get(&r).map_or(i64::MIN, |g| g.1), c.gpu.start(r as usize), r));
        let graph_id = rows.first().and_then(|r| graph_of.get(r)).map(|g| g.0);
        let sig = signature(c, &rows);
        // With a graph id the id decides (its replays may differ in their rows); without one,
        // the sequence does.
        let key = (graph_id, if graph_id.is_some() { 0 } else { sig });
        let g = *index.entry(key).or_insert_with(|| {
            let first = rows.iter().take(3).map(|&r| c.gpu.name(r as usize)).collect();
            groups.push(Group { graph_id, signature: sig, first, rows: (u64::MAX, 0), ..Default::default() });
            groups.len() - 1
        });
        let g = &mut groups[g];
        g.launches += 1;
        g.rows = (g.rows.0.min(rows.len() as u64), g.rows.1.max(rows.len() as u64));
        let op = at.graph_launch_op.get(&call).copied().unwrap_or(NO);
        *g.under.entry(op_chain(c, at, op)).or_default() += 1;
        for &r in &rows {
            let dur = c.gpu.dur(r as usize);
            g.ns += dur;
            replayed_ns += dur;
            if let Some(m) = at.captured(r as usize) {
                g.matched_ns += dur;
                if out.capture.is_some() && at.ops.innermost(m.thread, m.t) != NO {
                    matched_to_op_ns += dur;
                }
                g.methods[usize::from(m.method == MatchMethod::KernelSequence)] += dur;
            }
        }
    }
    out.replayed_us = us(replayed_ns);
    if let Some(k) = out.capture.as_mut() {
        k.matched_to_op_us = us(matched_to_op_ns);
    }
    groups.sort_by_key(|g| (std::cmp::Reverse(g.ns), g.signature));
    out.more_graphs = groups.len().saturating_sub(GraphReplays::MAX_GRAPHS) as u64;
    groups.truncate(GraphReplays::MAX_GRAPHS);
    out.graphs = groups.into_iter().enumerate().map(|(k, g)| replayed_graph(short, k, g)).collect();
    Some(out)
}

/// The op chain around a launch, outermost first: its innermost few levels.
fn op_chain(c: &Collector, at: &Attribution, op: u32) -> Option<String> {
    (op != NO).then(|| {
        let mut chain: Vec<String> = at
            .ops
            .chain(op)
            .take(CHAIN_LEVELS)
            .map(|o| c.names.get(at.ops.spans[o as usize].name).chars().take(NAME_CHARS).collect())
            .collect();
        chain.reverse();
        chain.join(" > ")
    })
}

fn replayed_graph(short: &dyn Fn(u32) -> String, k: usize, g: Group) -> ReplayedGraph {
    let (launched_under, count) =
        g.under.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map_or((None, 0), |(u, n)| (u.clone(), *n));
    let method = match g.methods {
        [0, 0] => None,
        [n, s] if n >= s => Some(MatchMethod::NodeOrder),
        _ => Some(MatchMethod::KernelSequence),
    };
    ReplayedGraph {
        label: format!("G{}", k + 1),
        graph_id: g.graph_id,
        signature: format!("{:016x}", g.signature),
        launches: g.launches,
        rows_min: g.rows.0,
        rows_max: g.rows.1,
        gpu_us: g.ns as f64 / 1000.0,
        first_kernels: g.first.iter().map(|&n| short(n)).collect(),
        launched_under_count: if launched_under.is_none() { 0 } else { count },
        matched_us: g.matched_ns as f64 / 1000.0,
        method,
        launched_under,
    }
}
