//! Pass 2, classification: the bucket of every GPU row, and why.
//!
//! Precedence, first that applies:
//! 1. memcpy / memset rows are memory movement (peer-to-peer copies are communication);
//! 2. an SDPA op anywhere in the launching chain: attention (the math backend's GEMMs and
//!    softmax are attention time);
//! 3. a kernel whose own name gives it an identity (GEMM, norm, rope, quantize, copy, ...)
//!    keeps it, under any other op;
//! 4. the innermost op in the chain that sets a context (optimizer, collective, embedding,
//!    a fused attention Function, ...) claims the remaining, neutral kernels;
//! 5. a neutral kernel's own name (elementwise, fill, ...);
//! 6. the launching (leaf) op's name, for kernels whose name matched nothing;
//! 7. other.

use crate::analysis::fork::Fork;
use crate::analysis::model::attribution::{Attribution, SpanTree, NO};
use crate::analysis::model::collect::{Call, GpuKind, Interner};
use crate::analysis::rules::taxonomy::{
    self, Bucket, Identity, KernelFacts, OpContext, KERNEL_RULES, LEAF_OP_RULES, OP_CONTEXT_RULES,
};
use rustc_hash::FxHashMap;

/// Why a row went to its bucket (indices into the taxonomy tables, name ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Why {
    /// An enclosing op (name id) matched an op-context rule.
    Op {
        op: u32,
        rule: u16,
    },
    Kernel(u16),
    LeafOp(u16),
    CopyRow(CopyKind),
    /// Hand-written attention; the scope (module or op name id, or NO) it was found in.
    Eager(u32),
    /// The user's rule (index into `Options::rules`).
    User(u16),
    /// A routing op (topk, sort, gather, ...) inside a MoE scope (module or op name id).
    Routing(u32),
    Unmatched,
}

/// What a memcpy / memset row copies, from its name (`Memcpy HtoD (Pageable -> Device)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CopyKind {
    HostToDevice { pageable: bool },
    DeviceToHost { pageable: bool },
    DeviceToDevice,
    PeerToPeer,
    Memset,
    Other,
}

impl CopyKind {
    pub fn of(name: &str, kind: GpuKind) -> CopyKind {
        if kind == GpuKind::Memset {
            return CopyKind::Memset;
        }
        let pageable = name.contains("Pageable");
        if name.contains("HtoD") {
            CopyKind::HostToDevice { pageable }
        } else if name.contains("DtoH") {
            CopyKind::DeviceToHost { pageable }
        } else if name.contains("PtoP") {
            CopyKind::PeerToPeer
        } else if name.contains("DtoD") {
            CopyKind::DeviceToDevice
        } else {
            CopyKind::Other
        }
    }

    fn label(self) -> &'static str {
        match self {
            CopyKind::HostToDevice { .. } => "host-to-device memcpy row",
            CopyKind::DeviceToHost { .. } => "device-to-host memcpy row",
            CopyKind::DeviceToDevice => "device-to-device memcpy row",
            CopyKind::PeerToPeer => "peer-to-peer memcpy row (between devices)",
            CopyKind::Memset => "memset row",
            CopyKind::Other => "memcpy row",
        }
    }
}

/// The words shown for a `Why` in a bucket's "matched" list.
pub fn why_label(why: Why, names: &Interner, rules: &[crate::analysis::rules::taxonomy::UserRule]) -> String {
    match why {
        Why::User(i) => format!("your rule: {}", rules.get(i as usize).map(|r| r.pattern.as_str()).unwrap_or("?")),
        Why::Op { op, rule } => format!("under {}: {}", names.get(op), OP_CONTEXT_RULES[rule as usize].why),
        Why::Kernel(i) => format!("kernel: {}", KERNEL_RULES[i as usize].why),
        Why::LeafOp(i) => format!("unnamed kernel launched by {}", LEAF_OP_RULES[i as usize].why),
        Why::CopyRow(k) => k.label().to_string(),
        Why::Eager(scope) if scope != NO => {
            format!("hand-written attention (matmul, softmax, matmul) in {}", names.get(scope))
        }
        Why::Eager(_) => "hand-written attention (matmul, softmax, matmul)".to_string(),
        Why::Routing(scope) => format!("{} in {}", taxonomy::ROUTING_OP_RULES[0].why, names.get(scope)),
        Why::Unmatched => "no rule matched".to_string(),
    }
}

/// The op-chain facts classification reads, per kept op.
pub struct Chains {
    /// Per name id: what the taxonomy says of it (asked only of the op spans' names).
    op_names: Vec<OpName>,
    /// Per op: the innermost SDPA op at or above it.
    pub sdpa: Vec<u32>,
    /// Per op: the innermost other context op at or above it.
    pub context: Vec<u32>,
    /// Per op: whether it or an `aten::` op it runs inside (without a non-aten op between)
    /// is a token routing op.
    routing: Vec<bool>,
    /// Per op: the innermost op at or above it that names a MoE gate / router / experts block.
    moe_scope: Vec<u32>,
}

/// What the taxonomy says of one op name.
#[derive(Clone, Copy, Default)]
struct OpName {
    rule: Option<u16>,
    routing: bool,
    scope: bool,
    aten: bool,
}

impl OpName {
    fn of(name: &str) -> OpName {
        OpName {
            rule: taxonomy::op_context(name).map(|i| i as u16),
            routing: taxonomy::is_routing_op(name),
            scope: taxonomy::is_moe_scope(name),
            aten: name.starts_with("aten::"),
        }
    }
}

/// The op spans' names, each asked of the taxonomy once, in pieces split over the fork's
/// ways: a trace names each ProfilerStep#N once, and thousands of names took the rules
/// tens of milliseconds on one core while the other waited (gen_trace.py, 500 MB: 6,003 steps).
/// Other names (kernels, runtime calls) are not asked.
fn op_names(tree: &SpanTree, names: &Interner, fork: &Fork) -> Vec<OpName> {
    let mut used = vec![false; names.names.len()];
    for s in &tree.spans {
        used[s.name as usize] = true;
    }
    let asked: Vec<u32> = (0..used.len() as u32).filter(|&n| used[n as usize]).collect();
    let piece = asked.len().div_ceil(4 * fork.ways()).max(256);
    let pieces = fork.map(0..asked.len().div_ceil(piece), &|k| {
        asked[k * piece..asked.len().min((k + 1) * piece)].iter().map(|&n| OpName::of(names.get(n))).collect::<Vec<_>>()
    });
    let mut out = vec![OpName::default(); used.len()];
    for (&n, facts) in asked.iter().zip(pieces.into_iter().flatten()) {
        out[n as usize] = facts;
    }
    out
}

impl Chains {
    pub fn new(tree: &SpanTree, names: &Interner, fork: &Fork) -> Chains {
        let op_names = op_names(tree, names, fork);
        let m = tree.spans.len();
        let (mut sdpa, mut context) = (vec![NO; m], vec![NO; m]);
        let (mut routing, mut moe_scope) = (vec![false; m], vec![NO; m]);
        // Spans are sorted so that parents come before children: one pass inherits.
        for i in 0..m {
            let p = tree.parent[i];
            let inherit = |v: &Vec<u32>| if p == NO { NO } else { v[p as usize] };
            let name = tree.spans[i].name;
            let OpName { rule, routing: is_routing, scope: is_scope, aten } = op_names[name as usize];
            let ctx = rule.map(|r| OP_CONTEXT_RULES[r as usize].then.context);
            sdpa[i] = if ctx == Some(OpContext::Sdpa) { i as u32 } else { inherit(&sdpa) };
            context[i] = match ctx {
                Some(OpContext::Sdpa) | None => inherit(&context),
                Some(_) => i as u32,
            };
            routing[i] = is_routing || (aten && p != NO && routing[p as usize]);
            moe_scope[i] = if is_scope { i as u32 } else { inherit(&moe_scope) };
        }
        Chains { op_names, sdpa, context, routing, moe_scope }
    }

    fn op_why(&self, tree: &SpanTree, op: u32) -> (Bucket, Why) {
        let name = tree.spans[op as usize].name;
        let rule = self.op_names[name as usize].rule.unwrap_or(0);
        (OP_CONTEXT_RULES[rule as usize].then.context.bucket(), Why::Op { op: name, rule })
    }

    /// The bucket of one GPU row launched by `leaf` (NO when unattributed); `module_scope`
    /// finds the name of a MoE `nn.Module` around the launch (NO when none), asked only for
    /// rows of routing ops.
    #[allow(clippy::too_many_arguments)]
    pub fn classify(
        &self,
        tree: &SpanTree,
        names: &Interner,
        kind: GpuKind,
        copy: CopyKind,
        facts: &KernelFacts,
        leaf: u32,
        module_scope: impl FnOnce() -> u32,
    ) -> (Bucket, Why) {
        if kind != GpuKind::Kernel {
            let bucket = if copy == CopyKind::PeerToPeer { Bucket::Communication } else { Bucket::Memory };
            return (bucket, Why::CopyRow(copy));
        }
        let at = |v: &Vec<u32>| if leaf == NO { NO } else { v[leaf as usize] };
        let (sdpa, context) = (at(&self.sdpa), at(&self.context));
        if sdpa != NO {
            return self.op_why(tree, sdpa);
        }
        let rule = facts.rule.map(|i| (&KERNEL_RULES[i], i as u16));
        // Routing in eager MoE code: the launching op and its scope decide, before the
        // kernel's own name (a scatter kernel is memory elsewhere); GEMMs and collectives
        // keep theirs.
        let keeps = rule.is_some_and(|(r, _)| matches!(r.then.bucket, Bucket::Gemm | Bucket::Communication));
        if leaf != NO && self.routing[leaf as usize] && !keeps {
            let op_scope = self.moe_scope[leaf as usize];
            let scope = if op_scope != NO { tree.spans[op_scope as usize].name } else { module_scope() };
            if scope != NO {
                return (Bucket::MoeRouting, Why::Routing(scope));
            }
        }
        if let Some((r, i)) = rule {
            if r.then.identity == Identity::Own {
                return (r.then.bucket, Why::Kernel(i));
            }
        }
        if context != NO {
            return self.op_why(tree, context);
        }
        if let Some((r, i)) = rule {
            return (r.then.bucket, Why::Kernel(i));
        }
        if leaf != NO {
            let op = names.get(tree.spans[leaf as usize].name);
            if let Some(i) = taxonomy::leaf_op_rule(op) {
                return (LEAF_OP_RULES[i].then, Why::LeafOp(i as u16));
            }
        }
        (Bucket::Other, Why::Unmatched)
    }
}

/// The innermost `nn.Module` around row `i`'s launch that names a MoE gate, router or experts
/// block (its name id), or NO.
pub fn moe_module(names: &Interner, at: &Attribution, runtime: &[Call], i: usize) -> u32 {
    let Some(call) = at.runtime.get(i).and_then(|&r| runtime.get(r as usize)) else { return NO };
    let m = at.modules.innermost(call.thread, call.start);
    let scope = at.modules.chain(m).find(|&j| taxonomy::is_moe_scope(names.get(at.modules.spans[j as usize].name)));
    scope.map_or(NO, |j| at.modules.spans[j as usize].name)
}

/// Each row's (bucket, why), as an index into the distinct classes (a few hundred in a
/// trace): 4 bytes per row instead of 12.
pub struct Classes {
    distinct: Vec<(Bucket, Why)>,
    ids: FxHashMap<(Bucket, Why), u32>,
    of_row: Vec<u32>,
}

impl Classes {
    pub fn with_capacity(rows: usize) -> Self {
        Classes { distinct: Vec::new(), ids: FxHashMap::default(), of_row: Vec::with_capacity(rows) }
    }

    fn id(&mut self, class: (Bucket, Why)) -> u32 {
        let next = self.distinct.len() as u32;
        let id = *self.ids.entry(class).or_insert(next);
        if id == next {
            self.distinct.push(class);
        }
        id
    }

    pub fn push(&mut self, class: (Bucket, Why)) {
        let id = self.id(class);
        self.of_row.push(id);
    }

    pub fn set(&mut self, row: usize, class: (Bucket, Why)) {
        self.of_row[row] = self.id(class);
    }

    pub fn get(&self, row: usize) -> (Bucket, Why) {
        self.distinct[self.of_row[row] as usize]
    }

    pub fn any_bucket(&self, b: Bucket) -> bool {
        self.distinct.iter().any(|c| c.0 == b)
    }

    pub fn buckets(&self) -> Vec<Bucket> {
        self.of_row.iter().map(|&k| self.distinct[k as usize].0).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::model::collect::{OpRow, NONE};

    /// The op names asked in pieces over threads say what each name asked alone says, for the
    /// spans' names only (a kernel's name is not asked).
    #[test]
    fn op_names_in_pieces_are_each_names_own() {
        let mut names = Interner::default();
        let kernel = names.intern(b"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n");
        let special =
            ["aten::scaled_dot_product_attention", "aten::scatter_add_", "MoEGate", "Optimizer.step#AdamW.step"];
        let mut spans = Vec::new();
        for (k, n) in
            special.iter().map(|s| s.to_string()).chain((0..1500).map(|k| format!("ProfilerStep#{k}"))).enumerate()
        {
            let k = k as i64;
            spans.push(OpRow {
                start: 10 * k,
                end: 10 * k + 5,
                external: NONE,
                seq: NONE,
                name: names.intern(n.as_bytes()),
                thread: 0,
            });
        }
        let tree = SpanTree::new(spans);
        let swapped = Fork::new(|a, b| {
            b();
            a();
        });
        let alone: Vec<(Option<u16>, bool, bool)> = (0..names.names.len() as u32)
            .map(|n| if n == kernel { OpName::default() } else { OpName::of(names.get(n)) })
            .map(|o| (o.rule, o.routing, o.scope))
            .collect();
        assert!(alone.iter().any(|o| o.0.is_some()) && alone.iter().any(|o| o.1) && alone.iter().any(|o| o.2));
        for fork in [Fork::default(), swapped.clone(), swapped.with_ways(5)] {
            let got: Vec<_> = op_names(&tree, &names, &fork).iter().map(|o| (o.rule, o.routing, o.scope)).collect();
            assert_eq!(got, alone, "{fork:?}");
        }
    }
}
