//! The work an op does, from the shapes the profiler recorded (`record_shapes=True`): FLOPs
//! and bytes moved. FLOP formulas follow `torch.utils.flop_counter` (PyTorch's own counter,
//! torch/utils/flop_counter.py), cited per formula; where it counts nothing (elementwise,
//! norms, copies) only bytes are estimated, as the tensors read plus the output written.
//!
//! Only ops that launch kernels themselves are modelled (`aten::mm`, not `aten::linear`, which
//! dispatches to it): work is attributed through the op that launched each kernel, so a
//! composite op would count its children's work twice.

mod fast;
mod inputs;
mod models;

use crate::vocab::Precision;
use inputs::numel;
pub use inputs::{dtype_bytes, Arg, Inputs};
pub use models::is_modelled;
use models::{model_of, Model};

/// An op's work.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Work {
    pub flops: f64,
    pub bytes: f64,
    pub precision: Option<Precision>,
    /// Causal attention: counted as half the full product (flop_counter counts it whole).
    pub causal: bool,
}

/// The op's work from its inputs; None when the op is not modelled or its shapes do not fit
/// the model (a varlen attention call, a transposed convolution without its output size).
pub fn work(name: &str, x: &Inputs) -> Option<Work> {
    // Tensor lists recorded as `[]` (older profilers) leave nothing to count: unknown, not zero.
    // Shapes whose products leave the finite range are a broken trace's: unknown too.
    work_of(name, x).filter(|w| (w.flops > 0.0 || w.bytes > 0.0) && w.flops.is_finite() && w.bytes.is_finite())
}

fn work_of(name: &str, x: &Inputs) -> Option<Work> {
    let model = model_of(name)?;
    let w =
        |flops: f64, bytes: f64, precision: Option<Precision>| Some(Work { flops, bytes, precision, causal: false });
    match model {
        Model::Matmul(a, b) => {
            let (sa, sb) = (x.tensor(a)?, x.tensor(b)?);
            // flop_counter mm_flop / bmm_flop: 2 * m * k * n per batch (addmm's bias add is not
            // counted, as there).
            let (batch, m, k, n) = match (sa, sb) {
                ([m, k], [k2, n]) if k == k2 => (1, *m, *k, *n),
                ([b, m, k], [b2, k2, n]) if b == b2 && k == k2 => (*b, *m, *k, *n),
                _ => return None,
            };
            let rows = batch as f64 * m as f64;
            let flops = 2.0 * rows * k as f64 * n as f64;
            let out = rows * n as f64 * x.elem(a).max(2.0);
            w(flops, x.all_bytes() + out, x.precision(a).or(x.precision(b)))
        }
        Model::GroupedMm => {
            let (sa, sb) = (x.tensor(0)?, x.tensor(1)?);
            let flops = match (sa, sb) {
                // Experts' tokens stacked in a ([total_m, k]), one weight per group in b.
                ([m, k], [_, k2, n]) if k == k2 => 2.0 * *m as f64 * *k as f64 * *n as f64,
                ([g, m, k], [g2, k2, n]) if g == g2 && k == k2 => 2.0 * *g as f64 * *m as f64 * *k as f64 * *n as f64,
                _ => return None,
            };
            w(flops, x.all_bytes(), x.precision(0))
        }
        Model::Attention { bhsd, backward, causal_at } => attention(x, bhsd, backward, causal_at),
        Model::Conv { stride, padding, dilation, groups, transposed } => {
            conv(x, [stride, padding, dilation, groups], transposed)
        }
        Model::ConvBackward => {
            let (grad_out, input, weight) = (x.tensor(0)?, x.tensor(1)?, x.tensor(2)?);
            if grad_out.len() < 3 || weight.len() != grad_out.len() {
                return None;
            }
            // flop_counter conv_backward_flop: grad_input and grad_weight each cost what the
            // forward does, counted when output_mask asks for them (both when not recorded).
            let mask = x.concrete.get(10).filter(|m| m.starts_with('['));
            let parts = mask.map_or(2, |m| m.split(',').take(2).filter(|b| b.contains("True")).count()) as f64;
            let flops = parts * 2.0 * numel(grad_out) * numel(&weight[1..]);
            let bytes = x.all_bytes() + parts.min(1.0) * numel(input) * x.elem(1);
            w(flops, bytes, x.precision(0))
        }
        Model::ConvBackwardInput => {
            let (grad_out, weight) = (x.tensor(1)?, x.tensor(2)?);
            if grad_out.len() < 3 || weight.len() != grad_out.len() {
                return None;
            }
            let flops = 2.0 * numel(grad_out) * numel(&weight[1..]);
            // The input gradient is as large as the input: grad_output's batch, weight's c_in x
            // groups; approximated by reading grad_output and the weight and writing as much.
            w(flops, 2.0 * x.all_bytes(), x.precision(1))
        }
        Model::Elementwise => {
            let out = (0..x.dims.len()).filter_map(|i| x.tensor(i)).map(numel).fold(0.0, f64::max);
            let write = if name.ends_with('_') { 0.0 } else { x.largest_bytes() };
            w(out, x.all_bytes() + write, (0..x.dims.len()).find_map(|i| x.precision(i)))
        }
        Model::Memory => w(0.0, x.all_bytes() + x.largest_bytes(), (0..x.dims.len()).find_map(|i| x.precision(i))),
        Model::Reduction => w(0.0, x.all_bytes(), x.precision(0)),
        Model::Gather { table, index } => {
            let (t, idx) = (x.tensor(table)?, x.tensor(index)?);
            let row: f64 = numel(t.get(1..)?);
            let gathered = numel(idx) * row * x.elem(table);
            w(0.0, 2.0 * gathered + x.bytes_of(index), x.precision(table))
        }
    }
}

/// flop_counter conv_flop_count: 2 * batch * prod(out spatial) * c_out * prod(kernel) *
/// c_in/groups, that is 2 * numel(out) * numel(weight) / c_out; the output's size from the
/// concrete stride, padding and dilation (`at`: their positions, and the groups').
fn conv(x: &Inputs, at: [usize; 4], transposed: Option<usize>) -> Option<Work> {
    let [stride, padding, dilation, groups] = at;
    if transposed.is_some_and(|t| x.concrete.get(t).is_none_or(|v| v != "False")) {
        return None;
    }
    let (input, weight) = (x.tensor(0)?, x.tensor(1)?);
    let spatial = input.len().checked_sub(2).filter(|&s| s >= 1 && weight.len() == input.len())?;
    let (s, p, d) = (x.ints(stride, spatial)?, x.ints(padding, spatial)?, x.ints(dilation, spatial)?);
    x.ints(groups, 1)?;
    let mut out = vec![input[0], weight[0]];
    for i in 0..spatial {
        // Checked: the shapes are the trace's, and a hostile one must not overflow.
        let reach = d[i].checked_mul(weight[2 + i].checked_sub(1)?)?;
        let span = input[2 + i].checked_add(p[i].checked_mul(2)?)?.checked_sub(reach)?.checked_sub(1)?;
        out.push(span.checked_div(s[i])?.checked_add(1)?.max(0));
    }
    let flops = 2.0 * numel(&out) * numel(&weight[1..]);
    Some(Work { flops, bytes: x.all_bytes() + numel(&out) * x.elem(0), precision: x.precision(0), causal: false })
}

/// flop_counter sdpa_flop_count (forward: q·kᵀ and p·v, 2 * b * h * s_q * s_k * (d + d_v)) and
/// sdpa_backward_flop_count (the recomputed scores and four products, 2 * b * h * s_q * s_k *
/// (3d + 2d_v): 2.5x the forward for d = d_v). Causal attention computes about half of the
/// product; flop_counter counts it whole, this halves it and marks the figure.
fn attention(x: &Inputs, bhsd: bool, backward: bool, causal_at: usize) -> Option<Work> {
    let q_at = usize::from(backward);
    let (q, k, v) = (x.tensor(q_at)?, x.tensor(q_at + 1)?, x.tensor(q_at + 2)?);
    if q.len() != 4 || k.len() != 4 || v.len() != 4 {
        return None; // varlen (packed [total, h, d]) calls: sequence lengths are not in the trace
    }
    let (b, h, sq, d) = if bhsd { (q[0], q[1], q[2], q[3]) } else { (q[0], q[2], q[1], q[3]) };
    let sk = if bhsd { k[2] } else { k[1] };
    let dv = v[3];
    let bhqk = b as f64 * h as f64 * sq as f64 * sk as f64;
    let (d, dv) = (d as f64, dv as f64);
    let mut flops = if backward { 2.0 * bhqk * (3.0 * d + 2.0 * dv) } else { 2.0 * bhqk * (d + dv) };
    let causal = if matches!(x.concrete.get(causal_at).map(String::as_str), Some("1" | "2")) {
        true // the efficient kernels' custom_mask_type
    } else {
        x.flag(causal_at)
    };
    if causal {
        flops /= 2.0;
    }
    // Flash-style kernels never write the score matrix: q, k, v (and the gradients) are read,
    // the output written.
    let out = numel(q) / d * dv * x.elem(q_at);
    let bytes =
        x.all_bytes() + if backward { x.bytes_of(q_at) + x.bytes_of(q_at + 1) + x.bytes_of(q_at + 2) } else { out };
    Some(Work { flops, bytes, precision: x.precision(q_at), causal })
}

#[cfg(test)]
mod tests;
