//! What a collective kernel was: its call (name, group, sequence number, bytes) from its own
//! metadata, the ops around its launch, or its kernel name.

use crate::analysis::model::attribution::SpanTree;
use crate::analysis::model::collect::{Collector, CommArgs, NONE, NO_NAME};
use crate::report::CollectiveCall;

/// What a collective kernel was: its own metadata, else that of a `record_param_comms` op around
/// its launch, else the name of a `nccl:*` op, else the collective in the kernel's name.
pub(crate) fn collective_call(c: &Collector, tree: &SpanTree, row: usize, leaf: u32, short: &str) -> CollectiveCall {
    let g = c.gpu.get(row);
    let names = &c.names;
    let own = c.gpu_comm.binary_search_by_key(&(row as u32), |x| x.0).ok().map(|i| c.gpu_comm[i].1);
    let from_ops = || tree.chain(leaf).find_map(|o| c.op_comm.get(&tree.spans[o as usize].external).copied());
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
