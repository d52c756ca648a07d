//! Pass 1, attribution: which CPU op launched each GPU row.
//!
//! A GPU row's correlation id finds its launching runtime call; the call's External id names
//! an op, which is used only when that op encloses the call on the call's thread (some traces
//! reuse the correlation id as the External id, which then names an unrelated op). Otherwise
//! the innermost op around the call on its thread is the launcher. Intervals are half-open: an
//! op that ends where a call starts does not enclose it. A graph launch replays many kernels
//! with one call, so they all belong to the op around that call, unless a capture trace mapped
//! them to the launch that captured them: then to the op around that launch.

use super::capture::CapturedRow;
use super::collect::{CommArgs, GpuRows, Interner, MemEvent, OpRow, OpWork, RuntimeCall};
use super::collect::{NAME_DATALOADER, NAME_GRAPH_LAUNCH, NAME_STEP, NONE};
use crate::analysis::fork::Fork;
use rustc_hash::FxHashMap;

mod by_op;
mod id_index;
mod tree;
pub use by_op::ByOp;
use id_index::IdIndex;
pub use tree::{OpSpan, SpanTree, NO};

/// Where each GPU row came from.
pub struct Attribution {
    /// The op tree, reduced to launching ops, their ancestors, step and DataLoader spans.
    pub ops: SpanTree,
    /// `nn.Module` spans.
    pub modules: SpanTree,
    /// Per GPU row: index into the sorted runtime calls, or NO.
    pub runtime: Vec<u32>,
    /// Per GPU row: the launching (leaf) op in `ops`, or NO.
    pub leaf: Vec<u32>,
    /// Launch calls whose External id named an op that does not enclose the call.
    pub external_mismatch: u64,
    /// GPU rows whose correlation id matches no runtime call.
    pub dangling_correlation: u64,
    /// CPU time of top-level DataLoader spans.
    pub dataloader_ns: i64,
    /// Per `[memory]` event: the op that made it (its outermost `aten::` op, else the innermost
    /// op around it on its thread), as a name id, or NO. Worked out before ops that launch
    /// nothing are dropped, since allocating ops (`aten::empty`) usually launch nothing.
    pub memory_op: Vec<u32>,
    /// Replayed rows mapped to the launch that captured them, by row.
    pub captured: Vec<CapturedRow>,
    /// Per graph launch call (index into the sorted calls): the op around it, or NO.
    pub graph_launch_op: FxHashMap<u32, u32>,
    /// The ops' work and collective metadata, by op (the trace keys them by External id).
    pub op_work: ByOp<OpWork>,
    pub op_comm: ByOp<CommArgs>,
}

impl Attribution {
    /// A replayed row's mapping to its captured launch, if it has one.
    pub fn captured(&self, row: usize) -> Option<&CapturedRow> {
        self.captured.binary_search_by_key(&(row as u32), |c| c.row).ok().map(|k| &self.captured[k])
    }

    /// Where row `row` was launched, as (thread, time) to find its modules at: the captured
    /// launch for a mapped replay row, else its launch call; None without a launch call.
    pub fn launch_point(&self, row: usize, runtime: &[super::collect::Call]) -> Option<(u32, i64)> {
        if let Some(c) = self.captured(row) {
            return Some((c.thread, c.t));
        }
        let r = *self.runtime.get(row)?;
        (r != NO).then(|| (runtime[r as usize].thread, runtime[r as usize].start))
    }
}

/// The ops' work and collective metadata, by External id, as read.
pub type ByExternal = (FxHashMap<i64, OpWork>, FxHashMap<i64, CommArgs>);

/// `runtime` must be sorted by correlation id, `captured` by row. The op tree is built while
/// the rows' launch calls are looked up (and the module tree built), as `fork` runs them.
#[allow(clippy::too_many_arguments)]
pub fn attribute(
    (ops, by_external): (Vec<OpRow>, ByExternal),
    modules: Vec<OpRow>,
    names: &Interner,
    gpu: &mut GpuRows,
    runtime: &[RuntimeCall],
    memory: &[MemEvent],
    captured: Vec<CapturedRow>,
    fork: &Fork,
) -> Attribution {
    let rows = &*gpu;
    let launch_calls = || (launch_calls(rows, runtime), SpanTree::new(modules));
    let ((tree, mut externals), ((runtime_of, dangling_correlation), modules)) =
        fork.join(|| SpanTree::with_externals(ops), launch_calls);
    gpu.drop_correlation();
    let memory_op = memory_ops(&tree, names, memory);
    let launchers = leaf_ops((&tree, &externals), gpu, runtime, &runtime_of, &captured);
    gpu.drop_external();
    let Launchers { mut leaf, call_leaf, external_mismatch } = launchers;
    let (ops, graph_launch_op, dataloader_ns) =
        keep_read_ops((tree, &mut externals), names, runtime, &mut leaf, &call_leaf);
    // The last use of the ops' External ids: their work and metadata found by op from here on.
    let (op_work, op_comm) = (by_op(&externals, &by_external.0), by_op(&externals, &by_external.1));
    Attribution {
        ops,
        modules,
        runtime: runtime_of,
        leaf,
        external_mismatch,
        dangling_correlation,
        dataloader_ns,
        memory_op,
        captured,
        graph_launch_op,
        op_work,
        op_comm,
    }
}

/// What `map` holds for each op's External id (`externals`, by op), by op.
fn by_op<T: Copy>(externals: &[i64], map: &FxHashMap<i64, T>) -> ByOp<T> {
    if map.is_empty() {
        return ByOp::default();
    }
    ByOp::from_sorted(externals.iter().enumerate().filter_map(|(i, e)| Some((i as u32, *map.get(e)?))).collect())
}

/// Each row's launch call: the first (earliest) call with its correlation id, and how many
/// rows named a correlation id that no call has.
fn launch_calls(rows: &GpuRows, runtime: &[RuntimeCall]) -> (Vec<u32>, u64) {
    let correlation_of = |i: usize| runtime[i].correlation;
    let index = IdIndex::new(runtime.len(), correlation_of);
    let mut by_correlation = index.finder();
    let mut dangling_correlation = 0u64;
    let runtime_of: Vec<u32> = (0..rows.len())
        .map(|i| {
            let correlation = rows.correlation(i);
            if correlation == NONE {
                return NO;
            }
            let r = by_correlation.get(correlation, correlation_of);
            dangling_correlation += u64::from(r == NO);
            r
        })
        .collect();
    (runtime_of, dangling_correlation)
}

/// Each memory event's op: the outermost `aten::` op around it, else the innermost op.
fn memory_ops(tree: &SpanTree, names: &Interner, memory: &[MemEvent]) -> Vec<u32> {
    memory
        .iter()
        .map(|m| {
            let inner = tree.innermost(m.thread, m.ts);
            let chain: Vec<u32> = tree.chain(inner).collect();
            let aten = chain.iter().rev().find(|&&o| names.get(tree.spans[o as usize].name).starts_with("aten::"));
            aten.or(chain.first()).map(|&o| tree.spans[o as usize].name).unwrap_or(NO)
        })
        .collect()
}

const UNSEEN: u32 = NO - 1; // A launch call not looked at yet (in `Launchers::call_leaf`).

/// The op that launched each row, and the op around each launch call.
struct Launchers {
    leaf: Vec<u32>,
    call_leaf: Vec<u32>,
    external_mismatch: u64,
}

/// Each row's launching op: its launch call's (or captured launch's) op, else the op its own
/// External id names when the trace has no launch call for it.
fn leaf_ops(
    (tree, externals): (&SpanTree, &[i64]),
    gpu: &GpuRows,
    runtime: &[RuntimeCall],
    runtime_of: &[u32],
    captured: &[CapturedRow],
) -> Launchers {
    // The op carrying each External id (the first, should several carry one).
    let external_of = |i: usize| externals[i];
    let index = IdIndex::new(externals.len(), external_of);
    let mut by_external = index.finder();
    // Each distinct launch call is checked once (a graph launch serves many rows).
    let mut external_mismatch = 0u64;
    let mut call_leaf: Vec<u32> = vec![UNSEEN; runtime.len()];
    let mut leaf: Vec<u32> = Vec::with_capacity(gpu.len());
    let mut next_captured = captured.iter().peekable();
    for (i, &r) in runtime_of.iter().enumerate() {
        let mut l = NO;
        if r != NO {
            if call_leaf[r as usize] == UNSEEN {
                let call = runtime[r as usize];
                let mut found = NO;
                if call.external != NONE {
                    let named = by_external.get(call.external, external_of);
                    if named != NO && tree.encloses(named, call.thread, call.start) {
                        found = named;
                    } else if named != NO {
                        external_mismatch += 1;
                    }
                }
                if found == NO {
                    found = tree.innermost(call.thread, call.start);
                }
                call_leaf[r as usize] = found;
            }
            l = call_leaf[r as usize];
            if let Some(c) = next_captured.next_if(|c| c.row as usize == i) {
                // The captured launch's op, where the capture has one around it.
                let op = tree.innermost(c.thread, c.t);
                if op != NO {
                    l = op;
                }
            }
        } else if gpu.external(i) != NONE {
            // No launch call in the trace: the row's own External id is all there is.
            l = by_external.get(gpu.external(i), external_of);
        }
        leaf.push(l);
    }
    Launchers { leaf, call_leaf, external_mismatch }
}

/// Keeps launching ops, their ancestors and the spans the report reads by name (and their
/// External ids), renumbering `leaf`; also the op around each graph launch and the top
/// dataloader spans' time.
fn keep_read_ops(
    (tree, externals): (SpanTree, &mut Vec<i64>),
    names: &Interner,
    runtime: &[RuntimeCall],
    leaf: &mut [u32],
    call_leaf: &[u32],
) -> (SpanTree, FxHashMap<u32, u32>, i64) {
    let n = tree.spans.len();
    let mut keep = vec![false; n];
    let mut keep_with_ancestors = |i: u32| {
        for a in tree.chain(i) {
            if keep[a as usize] {
                break;
            }
            keep[a as usize] = true;
        }
    };
    let mut dataloader_ns = 0;
    for (i, o) in tree.spans.iter().enumerate() {
        let top_loader = tree.parent[i] == NO && names.is(o.name, NAME_DATALOADER);
        if top_loader {
            dataloader_ns += o.end - o.start;
        }
        if names.is(o.name, NAME_STEP) || top_loader {
            keep_with_ancestors(i as u32);
        }
    }
    for &l in leaf.iter() {
        keep_with_ancestors(l);
    }
    // The op around each graph launch, kept though its rows may have taken captured ops.
    let mut graph_launch_op: FxHashMap<u32, u32> = FxHashMap::default();
    for (r, &l) in call_leaf.iter().enumerate() {
        if l < UNSEEN && names.is(runtime[r].name, NAME_GRAPH_LAUNCH) {
            keep_with_ancestors(l);
            graph_launch_op.insert(r as u32, l);
        }
    }
    let (ops, remap) = tree.retain(&keep, externals);
    for l in leaf.iter_mut().chain(graph_launch_op.values_mut()) {
        if *l != NO {
            *l = remap[*l as usize];
        }
    }
    (ops, graph_launch_op, dataloader_ns)
}

#[cfg(test)]
mod tests;
