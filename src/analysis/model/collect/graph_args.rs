//! What a trace says about CUDA/HIP graphs: a replayed row's graph and node (Kineto writes
//! `graph id` / `graph node id` on GPU rows with CUDA 12+), and the kernel a launch call
//! launched (ROCm writes `kernel` on the call). In a capture trace the captured launches run
//! no kernel, so the call's own `kernel` argument is the only record of what was captured.

use super::*;
use crate::trace::{Args, Kind};

impl Collector {
    /// A collector for the trace of a graph capture: it also keeps the kernel names written on
    /// launch calls (an ordinary reading leaves them, as the kernel rows carry the names).
    pub fn for_capture() -> Collector {
        Collector { keep_launch_kernels: true, ..Collector::default() }
    }

    /// An event's graph arguments, read before its record is kept (a GPU row's index is the
    /// next one).
    pub(super) fn graph_args(&mut self, kind: Kind, a: &Args) {
        match kind {
            Kind::Gpu(_) => {
                let graph = a.graph_id.and_then(Loose::as_i64).unwrap_or(0);
                // CUPTI writes 0 for a row not launched through a graph.
                if graph != 0 && self.gpu.len() < limits::MAX_ROWS {
                    let node = a.graph_node_id.and_then(Loose::as_i64).unwrap_or(NONE);
                    self.gpu_graph.push(GraphNode { row: self.gpu.len() as u32, graph, node });
                }
            }
            Kind::Runtime if self.keep_launch_kernels && self.launch_kernels.len() < limits::MAX_ROWS => {
                let correlation = a.correlation.and_then(Loose::as_i64).unwrap_or(NONE);
                let name = a.kernel.and_then(|r| serde_json::from_slice::<String>(r).ok());
                if let (Some(name), true) = (name, correlation != NONE) {
                    let name = self.names.intern(name.as_bytes());
                    self.launch_kernels.push(LaunchKernel { correlation, name });
                }
            }
            _ => {}
        }
    }
}
