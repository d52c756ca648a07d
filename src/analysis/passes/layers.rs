//! GPU time by layer: each row's launch is placed in the `nn.Module` spans around it (else the
//! outermost op under the step). Backward rows are placed in the layer of their forward op:
//! a backward op carries the autograd sequence number of the forward op it differentiates.

use super::steps::us;
use crate::analysis::model::attribution::Attribution;
use crate::analysis::model::collect::{Collector, NAME_BACKWARD, NAME_STEP, NONE};
use crate::analysis::model::frozen::Model;
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
}

/// The layer path (outermost first, name ids) of a launch on `thread` at `t`.
fn module_path(at: &Attribution, thread: u32, t: i64) -> Vec<u32> {
    let m = at.modules.innermost(thread, t);
    let mut p: Vec<u32> = at.modules.chain(m).map(|i| at.modules.spans[i as usize].name).collect();
    p.reverse();
    p.truncate(MAX_DEPTH);
    p
}

pub fn layers(m: &Model) -> Vec<LayerNode> {
    let (c, at, runtime, buckets) = (m.c, m.at, m.runtime, m.buckets);
    let names = &c.names;
    let tree = &at.ops;
    let have_modules = !at.modules.spans.is_empty();
    // Forward ops by sequence number (the outermost op carrying it).
    let mut forward: FxHashMap<i64, u32> = FxHashMap::default();
    for (i, o) in tree.spans.iter().enumerate() {
        if o.seq != NONE && !names.is(o.name, NAME_BACKWARD) {
            forward.entry(o.seq).or_insert(i as u32);
        }
    }
    let mut nodes: FxHashMap<Vec<u32>, Node> = FxHashMap::default();
    for (i, g) in c.gpu.iter().enumerate() {
        let Some((thread, start)) = at.launch_point(i, runtime) else { continue };
        let leaf = at.leaf[i];
        // A backward op in the chain makes this backward time; its sequence number (when the
        // trace records it) links it to its forward op's layer.
        let (mut is_backward, mut linked) = (false, None);
        for o in tree.chain(leaf) {
            let op = &tree.spans[o as usize];
            if names.is(op.name, NAME_BACKWARD) {
                is_backward = true;
                if op.seq != NONE {
                    if let Some(f) = forward.get(&op.seq) {
                        linked = Some(f);
                        break;
                    }
                }
            }
        }
        let path = match linked {
            Some(&f) if have_modules => {
                let op = &tree.spans[f as usize];
                module_path(at, op.thread, op.start)
            }
            Some(&f) => outermost_op_path(c, at, f),
            None if have_modules && !is_backward => module_path(at, thread, start),
            None => outermost_op_path(c, at, leaf),
        };
        if path.is_empty() {
            continue;
        }
        // Inclusive: every prefix of the path is a node that contains this time.
        for k in 1..=path.len() {
            let n = nodes.entry(path[..k].to_vec()).or_default();
            if is_backward {
                n.backward += g.dur;
            } else {
                n.forward += g.dur;
            }
            *n.buckets.entry(buckets[i]).or_default() += g.dur;
        }
    }
    // Pre-order, largest first among siblings, bounded.
    let mut paths: Vec<(&Vec<u32>, i64)> = nodes.iter().map(|(p, n)| (p, n.forward + n.backward)).collect();
    paths.sort_by(|a, b| a.0.len().cmp(&b.0.len()).then(b.1.cmp(&a.1)));
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
        let n = &nodes[p];
        let mut b: Vec<(Bucket, f64)> = n.buckets.iter().map(|(k, v)| (*k, us(*v))).collect();
        b.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        b.truncate(4);
        let name = names.get(*p.last().expect("paths are not empty"));
        out.push(LayerNode {
            name: name.strip_prefix("nn.Module: ").unwrap_or(name).to_string(),
            depth: (p.len() - 1) as u32,
            forward_us: us(n.forward),
            backward_us: us(n.backward),
            buckets: b,
        });
        if let Some(mut kids) = children.remove(p.as_slice()) {
            kids.sort_by(|a, b| total(a).cmp(&total(b)).then_with(|| b.cmp(a)));
            stack.extend(kids);
        }
    }
    out
}

/// Without module spans: the outermost op under the ProfilerStep (one level).
fn outermost_op_path(c: &Collector, at: &Attribution, leaf: u32) -> Vec<u32> {
    let chain: Vec<u32> = at.ops.chain(leaf).collect();
    chain
        .iter()
        .rev()
        .map(|&o| at.ops.spans[o as usize].name)
        .find(|&n| !c.names.is(n, NAME_STEP) && !c.names.get(n).starts_with("enumerate(DataLoader)"))
        .map(|n| vec![n])
        .unwrap_or_default()
}
