//! GPU time by layer: each row's launch is placed in the `nn.Module` spans around it (else the
//! outermost op under the step). Backward rows are placed in the layer of their forward op:
//! a backward op carries the autograd sequence number of the forward op it differentiates.

use super::steps::us;
use crate::analysis::model::attribution::{Attribution, NO};
use crate::analysis::model::collect::{Collector, Interner, NAME_BACKWARD, NAME_STEP, NONE};
use crate::analysis::model::frozen::Model;
use crate::analysis::passes::roofline::{OpKernelTable, RowWorks};
use crate::analysis::rules::taxonomy::Bucket;
use crate::report::LayerNode;
use rustc_hash::FxHashMap;

/// At most this many layer nodes are reported (the largest), to a depth of `MAX_DEPTH`.
pub const MAX_NODES: usize = 300;
pub const MAX_DEPTH: usize = 12;

#[derive(Default)]
struct Node {
    forward: i64,
    backward: i64,
    buckets: FxHashMap<Bucket, i64>,
    /// The work of the rows whose work is known, and their time.
    flops: f64,
    bytes: f64,
    work_ns: i64,
}

/// The layer path (outermost first, name ids) of the module spans around module `m` and it.
fn module_path(at: &Attribution, m: u32) -> Vec<u32> {
    let mut p: Vec<u32> = at.modules.chain(m).map(|i| at.modules.spans[i as usize].name).collect();
    p.reverse();
    p.truncate(MAX_DEPTH);
    p
}

/// What a row's layer path is read from: the innermost module span around a point, or the
/// name of the outermost op above an op (NO when there is none). Rows of one layer share it,
/// so each path is made and its nodes looked up once, not once per row.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum PathOf {
    Module(u32),
    Op(u32),
}

pub fn layers(m: &Model, per_op: &OpKernelTable) -> Vec<LayerNode> {
    let nodes = layer_times(m, per_op);
    pre_order(&m.c.names, &nodes)
}

/// GPU time per layer path, inclusive: every prefix of a row's path holds its time.
fn layer_times(m: &Model, per_op: &OpKernelTable) -> FxHashMap<Vec<u32>, Node> {
    let (c, at, runtime, buckets) = (m.c, m.at, m.runtime, m.buckets);
    let tree = &at.ops;
    let have_modules = !at.modules.spans.is_empty();
    let forward = forward_ops(c, at);
    // Each path's nodes (every prefix), by what the path is read from.
    let mut slots_of: FxHashMap<PathOf, Vec<u32>> = FxHashMap::default();
    let mut slot: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
    let mut nodes: Vec<Node> = Vec::new();
    let mut works = RowWorks::new(m, per_op);
    for (i, g) in c.gpu.briefs().enumerate() {
        let work = works.as_mut().and_then(|w| w.of(i));
        let Some((thread, start)) = at.launch_point(i, runtime) else { continue };
        let leaf = at.leaf[i];
        let (is_backward, linked) = backward_link(c, at, &forward, leaf);
        let from = match linked {
            Some(f) if have_modules => {
                let op = &tree.spans[f as usize];
                PathOf::Module(at.modules.innermost(op.thread, op.start))
            }
            Some(f) => PathOf::Op(outermost_op(c, at, f)),
            None if have_modules && !is_backward => PathOf::Module(at.modules.innermost(thread, start)),
            None => PathOf::Op(outermost_op(c, at, leaf)),
        };
        let slots = slots_of.entry(from).or_insert_with(|| {
            let path = match from {
                PathOf::Module(m) => module_path(at, m),
                PathOf::Op(NO) => Vec::new(),
                PathOf::Op(name) => vec![name],
            };
            // Inclusive: every prefix of the path is a node that contains this time.
            (1..=path.len())
                .map(|k| {
                    *slot.entry(path[..k].to_vec()).or_insert_with(|| {
                        nodes.push(Node::default());
                        (nodes.len() - 1) as u32
                    })
                })
                .collect()
        });
        for &k in slots.iter() {
            let n = &mut nodes[k as usize];
            if is_backward {
                n.backward += g.dur;
            } else {
                n.forward += g.dur;
            }
            *n.buckets.entry(buckets[i]).or_default() += g.dur;
            if let Some((flops, bytes)) = work {
                (n.flops, n.bytes, n.work_ns) = (n.flops + flops, n.bytes + bytes, n.work_ns + g.dur);
            }
        }
    }
    // Each slot's path beside its node (a slot is made once per path).
    let mut paths = vec![Vec::new(); nodes.len()];
    for (path, k) in slot {
        paths[k as usize] = path;
    }
    paths.into_iter().zip(nodes).collect()
}

/// Forward ops by sequence number (the outermost op carrying it).
fn forward_ops(c: &Collector, at: &Attribution) -> FxHashMap<i64, u32> {
    let mut forward: FxHashMap<i64, u32> = FxHashMap::default();
    for (i, o) in at.ops.spans.iter().enumerate() {
        if o.seq != NONE && !c.names.is(o.name, NAME_BACKWARD) {
            forward.entry(o.seq).or_insert(i as u32);
        }
    }
    forward
}

/// Whether the ops around `leaf` make its time backward time, and the forward op the first
/// backward op with a known sequence number differentiates (its layer is this time's layer).
fn backward_link(c: &Collector, at: &Attribution, forward: &FxHashMap<i64, u32>, leaf: u32) -> (bool, Option<u32>) {
    let tree = &at.ops;
    let mut is_backward = false;
    for o in tree.chain(leaf) {
        let op = &tree.spans[o as usize];
        if c.names.is(op.name, NAME_BACKWARD) {
            is_backward = true;
            if op.seq != NONE {
                if let Some(&f) = forward.get(&op.seq) {
                    return (true, Some(f));
                }
            }
        }
    }
    (is_backward, None)
}

/// The layer nodes in pre-order, largest first among siblings, bounded to `MAX_NODES`.
fn pre_order(names: &Interner, nodes: &FxHashMap<Vec<u32>, Node>) -> Vec<LayerNode> {
    let mut paths: Vec<(&Vec<u32>, i64)> = nodes.iter().map(|(p, n)| (p, n.forward + n.backward)).collect();
    // Ties by path: which nodes are kept must not depend on the map's layout.
    paths.sort_by(|a, b| a.0.len().cmp(&b.0.len()).then(b.1.cmp(&a.1)).then_with(|| a.0.cmp(b.0)));
    let keep: Vec<&Vec<u32>> = paths.iter().take(MAX_NODES).map(|x| x.0).collect();
    let mut children: FxHashMap<&[u32], Vec<&Vec<u32>>> = FxHashMap::default();
    let mut roots = Vec::new();
    for p in &keep {
        if p.len() == 1 {
            roots.push(*p);
        } else if keep.iter().any(|q| q.as_slice() == &p[..p.len() - 1]) {
            children.entry(&p[..p.len() - 1]).or_default().push(*p);
        }
    }
    let total = |p: &Vec<u32>| nodes[p].forward + nodes[p].backward;
    let mut out = Vec::new();
    let mut stack: Vec<&Vec<u32>> = roots;
    stack.sort_by(|a, b| total(a).cmp(&total(b)).then_with(|| b.cmp(a)));
    while let Some(p) = stack.pop() {
        out.push(layer_node(names, p, &nodes[p]));
        if let Some(mut kids) = children.remove(p.as_slice()) {
            kids.sort_by(|a, b| total(a).cmp(&total(b)).then_with(|| b.cmp(a)));
            stack.extend(kids);
        }
    }
    out
}

/// One layer's row: its name without the module prefix, its times and its four largest buckets.
fn layer_node(names: &Interner, path: &[u32], n: &Node) -> LayerNode {
    let mut b: Vec<(Bucket, f64)> = n.buckets.iter().map(|(k, v)| (*k, us(*v))).collect();
    b.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    b.truncate(4);
    let name = names.get(*path.last().expect("paths are not empty"));
    LayerNode {
        name: name.strip_prefix("nn.Module: ").unwrap_or(name).to_string(),
        depth: (path.len() - 1) as u32,
        forward_us: us(n.forward),
        backward_us: us(n.backward),
        buckets: b,
        flops: n.flops,
        bytes: n.bytes,
        work_us: us(n.work_ns),
    }
}

/// Without module spans: the name of the outermost op under the ProfilerStep (one level), NO
/// when there is none.
fn outermost_op(c: &Collector, at: &Attribution, leaf: u32) -> u32 {
    let chain: Vec<u32> = at.ops.chain(leaf).collect();
    chain
        .iter()
        .rev()
        .map(|&o| at.ops.spans[o as usize].name)
        .find(|&n| !c.names.is(n, NAME_STEP) && !c.names.get(n).starts_with("enumerate(DataLoader)"))
        .unwrap_or(NO)
}
