//! What a collective kernel was: its call (name, group, sequence number, bytes) from its own
//! metadata, the ops around its launch, or its kernel name.

use crate::analysis::model::attribution::Attribution;
use crate::analysis::model::collect::{Collector, CommArgs, NONE, NO_NAME};
use crate::report::{BandwidthRow, CollectiveBandwidth, CollectiveCall, BANDWIDTH_CAVEAT};
use crate::vocab::units::us;

/// What a collective kernel was: its own metadata, else that of a `record_param_comms` op around
/// its launch, else the name of a `nccl:*` op, else the collective in the kernel's name.
pub(crate) fn collective_call(c: &Collector, at: &Attribution, row: usize, leaf: u32, short: &str) -> CollectiveCall {
    let (g, tree) = (c.gpu.get(row), &at.ops);
    let names = &c.names;
    let own = c.gpu_comm.binary_search_by_key(&(row as u32), |x| x.0).ok().map(|i| c.gpu_comm[i].1);
    let from_ops = || tree.chain(leaf).find_map(|o| at.op_comm.get(o).copied());
    let args: Option<CommArgs> = own.or_else(from_ops);
    let text = |id: u32| (id != NO_NAME).then(|| names.get(id).to_string());
    let name = args
        .and_then(|a| text(a.name))
        .or_else(|| {
            tree.chain(leaf).find_map(|o| {
                let n = names.get(tree.spans[o as usize].name);
                n.strip_prefix("nccl:").or_else(|| n.strip_prefix("c10d::")).map(str::to_string)
            })
        })
        .unwrap_or_else(|| kernel_collective(names.get(g.name), short));
    CollectiveCall {
        name: normalise_collective(&name),
        group: args.and_then(|a| text(a.group)),
        seq: args.map(|a| a.seq).filter(|&s| s != NONE),
        start_ns: g.start,
        dur_ns: g.dur,
        bytes: args.map(|a| a.bytes).filter(|&b| b != NONE && b >= 0),
        out_bytes: args.map(|a| a.out_bytes).filter(|&b| b != NONE && b >= 0),
        group_size: args.map(|a| a.group_size).filter(|&n| n != NONE && n > 0),
    }
}

/// `ncclDevKernel_AllReduce_Sum_bf16_RING_LL` and `ncclKernel_SendRecv_RING_SIMPLE_...` -> the
/// collective; other communication kernels by their short name.
pub(crate) fn kernel_collective(kernel: &str, short: &str) -> String {
    for prefix in ["ncclDevKernel_", "ncclKernel_", "ncclSymkDevKernel_"] {
        if let Some(rest) = kernel.strip_prefix(prefix) {
            return rest.split(['_', '(']).next().unwrap_or(rest).to_string();
        }
    }
    short.to_string()
}

/// One spelling per collective across trace versions: `all_reduce`, `allreduce_`,
/// `AllReduce` -> `allreduce`.
pub(crate) fn normalise_collective(name: &str) -> String {
    name.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase()
}

/// busbw / algbw for a collective over `n` ranks, as nccl-tests defines it (doc/PERFORMANCE.md):
/// all-reduce 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n; broadcast and reduce
/// 1. None for other kinds (send/recv, barrier) and for a group of one.
pub(crate) fn bus_factor(name: &str, n: i64) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let n = n as f64;
    let has = |p: &str| name.starts_with(p);
    if has("allreduce") {
        Some(2.0 * (n - 1.0) / n)
    } else if has("allgather") || has("reducescatter") || has("alltoall") {
        Some((n - 1.0) / n)
    } else if has("broadcast") || name == "reduce" {
        Some(1.0)
    } else {
        None
    }
}

/// Per-rank bandwidth by collective kind and group size. A call's size S is the larger of its
/// input and output bytes (nccl-tests counts an all-gather by its gathered output and a
/// reduce-scatter by its input); calls without a size or group size are counted apart.
pub(crate) fn bandwidth(calls: &[CollectiveCall]) -> Option<CollectiveBandwidth> {
    if calls.is_empty() {
        return None;
    }
    let mut out = CollectiveBandwidth { caveat: BANDWIDTH_CAVEAT.to_string(), ..Default::default() };
    let mut unsized_ns = 0i64;
    // Each kind's time in ns, converted once (a sum of microseconds prints float noise).
    let mut kind_ns: Vec<i64> = Vec::new();
    for c in calls {
        match (c.bytes.max(c.out_bytes), c.group_size) {
            (Some(b), Some(n)) if b > 0 && c.dur_ns > 0 => {
                let i = match out.kinds.iter().position(|r| r.name == c.name && r.group_size == n) {
                    Some(i) => i,
                    None => {
                        out.kinds.push(BandwidthRow {
                            name: c.name.clone(),
                            group_size: n,
                            calls: 0,
                            bytes: 0.0,
                            time_us: 0.0,
                            algbw_gb_s: 0.0,
                            bus_factor: bus_factor(&c.name, n),
                            busbw_gb_s: None,
                        });
                        kind_ns.push(0);
                        out.kinds.len() - 1
                    }
                };
                let r = &mut out.kinds[i];
                r.calls += 1;
                r.bytes += b as f64;
                kind_ns[i] += c.dur_ns;
            }
            _ => {
                out.unsized_calls += 1;
                unsized_ns += c.dur_ns;
            }
        }
    }
    out.unsized_us = us(unsized_ns);
    for (r, ns) in out.kinds.iter_mut().zip(kind_ns) {
        r.time_us = us(ns);
        // bytes per us / 1e3 = GB/s (1e9 bytes).
        r.algbw_gb_s = r.bytes / r.time_us / 1e3;
        r.busbw_gb_s = r.bus_factor.map(|f| f * r.algbw_gb_s);
    }
    out.kinds.sort_by(|a, b| b.time_us.total_cmp(&a.time_us).then_with(|| a.name.cmp(&b.name)));
    Some(out)
}
