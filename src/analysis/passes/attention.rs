//! Pass 3, attention: hand-written attention found by its shape, and the backend verdict.
//!
//! Attention written by hand (`q @ k.transpose`, softmax, `@ v`) launches a batched matmul, a
//! softmax and another batched matmul, with only elementwise work between them (scale, mask,
//! dropout, casts) and no projection GEMM. Those rows are attention with backend `eager`, and
//! the fix is `F.scaled_dot_product_attention`. The same shape appears in the backward pass
//! (matmul gradients around the softmax gradient), which is found the same way.

use super::steps::us;
use crate::analysis::model::attribution::SpanTree;
use crate::analysis::model::attribution::{Attribution, NO};
use crate::analysis::model::classify::Classes;
use crate::analysis::model::classify::Why;
use crate::analysis::model::collect::{Collector, GpuKind, Interner};
use crate::analysis::rules::kernel_name::{full_name, short_name};
use crate::analysis::rules::taxonomy::{self, Backend, Bucket, TE_LIBRARY};
use crate::report::{Attention, Evidence, EvidenceKind, HfModel};
use rustc_hash::FxHashMap;

/// The role a GPU row plays in the matmul-softmax-matmul shape.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A batched matmul (aten::bmm / baddbmm / matmul of batched operands), not a projection.
    Matmul,
    Softmax,
    /// A GEMM that is not a batched matmul (a linear layer), or fused attention: ends a shape.
    Breaker,
    Between,
}

const BATCHED_MATMUL_OPS: &[&str] = &["aten::bmm", "aten::baddbmm", "aten::einsum"];
const LINEAR_OPS: &[&str] = &["aten::linear", "aten::addmm", "aten::mm", "aten::_scaled_mm"];

/// The rows with a launch call, in launch order per CPU thread (what [`find_eager`] walks).
/// Row indices only (sorted by a key looked up), not (thread, start, row) tuples: 4 bytes per
/// row where the tuples took 16.
pub fn launch_order(gpu_rows: usize, at: &Attribution, runtime: &[crate::analysis::model::collect::Call]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..gpu_rows as u32).filter(|&i| at.runtime[i as usize] != NO).collect();
    let call_of = |i: u32| &runtime[at.runtime[i as usize] as usize];
    order.sort_unstable_by_key(|&i| (call_of(i).thread, call_of(i).start, i));
    order
}

/// Marks hand-written attention rows: sets their class to attention / `Why::Eager`. `order`
/// is [`launch_order`]'s, or None to have it worked out here when there is softmax to look at.
pub fn find_eager(
    c: &Collector,
    at: &Attribution,
    runtime: &[crate::analysis::model::collect::Call],
    order: Option<Vec<u32>>,
    classes: &mut Classes,
) {
    if !classes.any_bucket(Bucket::Softmax) {
        return;
    }
    let order = order.unwrap_or_else(|| launch_order(c.gpu.len(), at, runtime));
    let call_of = |i: u32| &runtime[at.runtime[i as usize] as usize];
    let mut state = State::Idle;
    let mut windows: Vec<(usize, usize)> = Vec::new();
    for pos in 0..order.len() {
        if pos > 0 && call_of(order[pos]).thread != call_of(order[pos - 1]).thread {
            state = State::Idle;
        }
        state = state.next(role(c, at, classes, order[pos] as usize), pos, &mut windows);
    }
    for (a, b) in windows {
        let first = order[a] as usize;
        let scope = scope_name(c, at, runtime, first);
        for &i in &order[a..=b] {
            let i = i as usize;
            if classes.get(i).0 != Bucket::Communication {
                classes.set(i, (Bucket::Attention, Why::Eager(scope)));
            }
        }
    }
}

/// What a row can be in an eager attention shape.
fn role(c: &Collector, at: &Attribution, classes: &Classes, i: usize) -> Role {
    let (names, tree) = (&c.names, &at.ops);
    let op_is = |op: u32, list: &[&str]| list.contains(&names.get(tree.spans[op as usize].name));
    let (bucket, _) = classes.get(i);
    let leaf = at.leaf[i];
    match bucket {
        Bucket::Softmax => Role::Softmax,
        Bucket::Attention | Bucket::Communication => Role::Breaker,
        Bucket::Gemm if c.gpu.kind(i) == GpuKind::Kernel => {
            if leaf == NO {
                return Role::Breaker;
            }
            // A batched matmul whose chain has no linear layer in its first levels.
            let batched = tree.chain(leaf).take(3).any(|o| op_is(o, BATCHED_MATMUL_OPS));
            let linear = tree.chain(leaf).take(3).any(|o| op_is(o, LINEAR_OPS));
            if batched && !linear {
                Role::Matmul
            } else {
                Role::Breaker
            }
        }
        _ => Role::Between,
    }
}

/// Where the scan over one thread's launches is in an eager attention shape (positions in the
/// launch order).
#[derive(Clone, Copy)]
enum State {
    Idle,
    /// Saw a run of matmuls starting at this position.
    Qk {
        start: usize,
        last_matmul: usize,
    },
    Softmax {
        start: usize,
    },
    /// Just marked a shape; consecutive matmuls right after it belong to it.
    Trail,
}

impl State {
    /// The state after the row at `pos`, pushing each shape found (first, last position).
    fn next(self, role: Role, pos: usize, windows: &mut Vec<(usize, usize)>) -> State {
        match (role, self) {
            (Role::Matmul, State::Softmax { start }) => {
                windows.push((start, pos));
                State::Trail
            }
            (Role::Matmul, State::Trail) => {
                windows.push((pos, pos));
                State::Trail
            }
            (Role::Matmul, State::Qk { start, last_matmul }) if last_matmul + 1 == pos => {
                State::Qk { start, last_matmul: pos }
            }
            (Role::Matmul, _) => State::Qk { start: pos, last_matmul: pos },
            (Role::Softmax, State::Qk { start, .. }) | (Role::Softmax, State::Softmax { start }) => {
                State::Softmax { start }
            }
            (Role::Softmax, _) | (Role::Breaker, _) => State::Idle,
            (Role::Between, State::Trail) => State::Idle,
            (Role::Between, s) => s,
        }
    }
}

/// The name of the attention block a row ran in: the innermost `nn.Module` or op whose name
/// says attention, else the op around the launching op.
fn scope_name(c: &Collector, at: &Attribution, runtime: &[crate::analysis::model::collect::Call], row: usize) -> u32 {
    let names = &c.names;
    let m = at.launch_point(row, runtime).map_or(NO, |(thread, t)| at.modules.innermost(thread, t));
    if let Some(module) =
        at.modules.chain(m).find(|&i| taxonomy::is_attention_scope(names.get(at.modules.spans[i as usize].name)))
    {
        return at.modules.spans[module as usize].name;
    }
    let leaf = at.leaf[row];
    if let Some(op) =
        at.ops.chain(leaf).find(|&i| taxonomy::is_attention_scope(names.get(at.ops.spans[i as usize].name)))
    {
        return at.ops.spans[op as usize].name;
    }
    if m != NO {
        return at.modules.spans[m as usize].name;
    }
    let non_aten = at.ops.chain(leaf).find(|&i| !names.get(at.ops.spans[i as usize].name).starts_with("aten::"));
    non_aten.map(|i| at.ops.spans[i as usize].name).unwrap_or(NO)
}

/// Time per (backend, evidence kind, name, library).
#[derive(Default)]
pub struct AttentionEvidence {
    rows: FxHashMap<(Backend, EvidenceKind, u32, &'static str), (i64, u64)>,
}

impl AttentionEvidence {
    pub fn add(&mut self, backend: Backend, kind: EvidenceKind, name: u32, library: &'static str, ns: i64) {
        let e = self.rows.entry((backend, kind, name, library)).or_default();
        e.0 += ns;
        e.1 += 1;
    }

    /// The verdict; `hf`: the Hugging Face model the trace's modules show ([`hf_model`]).
    pub fn verdict(&self, names: &Interner, c: &Collector, hf: Option<HfModel>) -> Attention {
        let mut per_backend: Vec<(Backend, i64)> = Vec::new();
        for ((b, ..), (ns, _)) in &self.rows {
            match per_backend.iter_mut().find(|(x, _)| x == b) {
                Some(e) => e.1 += ns,
                None => per_backend.push((*b, *ns)),
            }
        }
        per_backend.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        let total: i64 = per_backend.iter().map(|x| x.1).sum();
        let mut rows: Vec<Evidence> = self
            .rows
            .iter()
            .map(|((b, kind, n, lib), (ns, count))| Evidence {
                backend: *b,
                kind: *kind,
                name: if *n == NO { String::new() } else { full_name(names.get(*n)) },
                short: if *n == NO { String::new() } else { short_name(names.get(*n)) },
                library: (!lib.is_empty()).then(|| lib.to_string()),
                time_us: us(*ns),
                count: *count,
            })
            .collect();
        rows.sort_by(|x, y| y.time_us.total_cmp(&x.time_us).then_with(|| x.name.cmp(&y.name)));
        rows.truncate(12);
        let Some(&(winner, ns)) = per_backend.first() else {
            return Attention { evidence: rows, hf_model: hf, ..Default::default() };
        };
        let library = rows.iter().find(|r| r.backend == winner).and_then(|r| r.library.clone());
        // TransformerEngine runs cuDNN's flash-style fused kernels by its own choice of backend
        // (NVTE_FUSED_ATTN / NVTE_FLASH_ATTN): SDPA's backend advice does not apply.
        let te = library.as_deref() == Some(TE_LIBRARY);
        let (reasons, fix) = if winner.is_fused_flash_like() || te {
            (Vec::new(), None)
        } else if winner == Backend::Eager {
            (Vec::new(), Some(eager_fix(hf.as_ref())))
        } else if winner == Backend::Cudnn {
            // PyTorch's SDPA chose cuDNN attention: named, not marked for replacing; the hint
            // weighs it against the device (attention_not_flash), reading these input facts.
            (not_flash_reasons(c), None)
        } else {
            (not_flash_reasons(c), Some(FLASH_FIX.to_string()))
        };
        Attention {
            backend: winner,
            library,
            time_us: us(ns),
            total_us: us(total),
            evidence: rows,
            not_flash_reasons: reasons,
            fix,
            hf_model: hf,
        }
    }
}

pub const FLASH_FIX: &str = "wrap the attention call in `with torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION):` (it raises an error that says why flash cannot run), then fix that reason: fp16/bf16 inputs, head dim <= 256 and a multiple of 8, no explicit attn_mask (use is_causal=True)";
const EAGER_FIX: &str = "replace the hand-written softmax(q @ k^T) @ v with torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=..., dropout_p=..., is_causal=...): with fp16/bf16 inputs it runs a fused flash kernel that never writes the attention matrix to memory";

/// The fix for hand-written attention. `attn_implementation="sdpa"` is named only for a
/// Hugging Face model whose family has an SDPA path; a family without one is told so, with
/// what fits it instead; a model not recognised gets the generic fix.
pub fn eager_fix(hf: Option<&HfModel>) -> String {
    let Some(m) = hf else { return EAGER_FIX.to_string() };
    if m.sdpa {
        return format!(
            "{EAGER_FIX}; this is Hugging Face {}, whose family has an SDPA path in transformers: load it with from_pretrained(..., attn_implementation=\"sdpa\") (or \"flash_attention_2\" with the flash-attn package installed)",
            m.class
        );
    }
    let instead = taxonomy::HF_FAMILIES.iter().find(|f| f.prefix == m.family).map_or("", |f| f.instead);
    format!(
        "this is Hugging Face {}, which has no SDPA path in transformers ({}PreTrainedModel._supports_sdpa is False), so attn_implementation=\"sdpa\" is refused: {instead}",
        m.class, m.family
    )
}

/// The Hugging Face model family most of the trace's `nn.Module` spans belong to (the class
/// of its first span named), if any is known ([`taxonomy::hf_family`]).
pub fn hf_model(names: &Interner, modules: &SpanTree) -> Option<HfModel> {
    let mut seen: FxHashMap<u32, Option<(&'static taxonomy::HfFamily, u32)>> = FxHashMap::default();
    let mut count: Vec<(&'static str, u32, u64)> = Vec::new();
    for span in &modules.spans {
        let known = *seen
            .entry(span.name)
            .or_insert_with(|| taxonomy::hf_family(names.get(span.name)).map(|(f, _)| (f, span.name)));
        let Some((family, _)) = known else { continue };
        match count.iter_mut().find(|c| c.0 == family.prefix) {
            Some(c) => c.2 += 1,
            None => count.push((family.prefix, span.name, 1)),
        }
    }
    // Most spans; the first seen between equal counts (spans sorted by thread and start).
    let mut best: Option<&(&str, u32, u64)> = None;
    for c in &count {
        if best.is_none_or(|b| c.2 > b.2) {
            best = Some(c);
        }
    }
    let &(prefix, name, _) = best?;
    let (family, class) = taxonomy::hf_family(names.get(name))?;
    Some(HfModel { class: class.to_string(), family: prefix.to_string(), sdpa: family.sdpa })
}

/// Reads the SDPA op's recorded shapes and dtypes (present with record_shapes=True) for the
/// usual reasons PyTorch skips the flash kernel.
fn not_flash_reasons(c: &Collector) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for call in &c.sdpa_calls {
        if let Some(types) = call.input_types.as_deref() {
            let types: Vec<String> = serde_json::from_str(types).unwrap_or_default();
            if let Some(t) = types.first() {
                if t == "float" || t == "double" {
                    push(format!("{} inputs are {t} (fp32): flash needs fp16 or bf16", call.op));
                }
            }
        }
        if let Some(dims) = call.input_dims.as_deref() {
            let dims: Vec<Vec<i64>> = serde_json::from_str(dims).unwrap_or_default();
            if let Some(q) = dims.first() {
                if let Some(&d) = q.last() {
                    if d > 256 || d % 8 != 0 {
                        push(format!(
                            "head dim {d} (query shape {q:?}): flash needs head dim <= 256 and a multiple of 8"
                        ));
                    }
                }
            }
            if dims.get(3).is_some_and(|m| !m.is_empty()) {
                push(format!(
                    "an explicit attn_mask of shape {:?} is passed: flash supports no mask except is_causal",
                    dims[3]
                ));
            }
        }
        if let Some(ci) = call.concrete_inputs.as_deref() {
            let ci: Vec<String> = serde_json::from_str(ci).unwrap_or_default();
            if let Some(p) = ci.get(4).and_then(|p| p.parse::<f64>().ok()) {
                if p > 0.0 {
                    push(format!("dropout_p = {p}: dropout in attention limits the fused kernels on some GPUs"));
                }
            }
        }
    }
    if c.sdpa_calls.is_empty() {
        out.push("no SDPA op arguments recorded (profile with record_shapes=True to see dtypes and shapes)".into());
    }
    out
}
