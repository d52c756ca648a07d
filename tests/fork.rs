//! The report build with its independent passes on two threads (what the CLI does with
//! `--threads 2` or more) gives the report of one thread, byte for byte: on every fixture,
//! a hand-written attention trace (whose launch order is then worked out ahead), and every
//! shared real trace. A fork that runs the second job first checks that no pass reads what
//! the other writes.

mod common;

use std::io::Read;

use common::{json_fixtures, shared_traces, trace_files, Trace, CPU_TID};
use tracesight::analysis::fork::Fork;
use tracesight::analysis::rules::taxonomy::Backend;
use tracesight::{analyze_slice, parallel, Options};

const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
const ALL_REDUCE: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const SOFTMAX: &str = "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)";

/// q @ k^T, softmax, @ v written by hand, twice, inside a module, between projections.
fn hand_written_attention() -> Vec<u8> {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    let start = t.cpu;
    let mut g = 0;
    for _ in 0..2 {
        for (chain, kernel, dur) in [
            (&["aten::linear", "aten::addmm"][..], GEMM, 30),
            (&["aten::matmul", "aten::bmm"][..], GEMM, 40),
            (&["aten::softmax", "aten::_softmax"][..], SOFTMAX, 20),
            (&["aten::matmul", "aten::bmm"][..], GEMM, 40),
        ] {
            t.launch(chain, kernel, g, dur);
            g += dur;
        }
    }
    let end = t.cpu;
    t.module("nn.Module: SelfAttention_0", start - 1, end);
    t.span("user_annotation", "ProfilerStep#1", start - 2, end - start + 4, CPU_TID, None);
    t.bytes()
}

/// 300 steps (more than a batch of steps walked at once: 64 a way), each a GEMM, an
/// all-reduce on a second stream (arrivals) and a step-dependent gap, so that the steps' paths,
/// pieces and segments differ and the report's segment budget runs out part way.
fn many_steps() -> Vec<u8> {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    let mut g = 100;
    for k in 0..300 {
        let start = t.cpu;
        t.launch(&["aten::linear", "aten::addmm"], GEMM, g, 30 + k % 11);
        g += 40 + k % 11;
        let all_reduce = [(ALL_REDUCE, g, 20 + k % 7)];
        t.launch_on(&["c10d::allreduce_"], "cudaLaunchKernel", 5, &all_reduce, 13);
        g += 25 + k % 13;
        t.cpu += k % 17;
        let end = t.cpu;
        t.span("user_annotation", &format!("ProfilerStep#{k}"), start - 1, end - start + 2, CPU_TID, None);
    }
    t.bytes()
}

fn report(name: &str, bytes: &[u8], fork: Fork) -> String {
    let opts = Options { fork, ..Options::default() };
    serde_json::to_string(&analyze_slice(name, bytes, &opts).map_err(|e| e.message)).unwrap()
}

#[test]
fn the_report_built_on_two_threads_is_the_report_built_on_one() {
    let mut files: Vec<(String, Vec<u8>)> =
        json_fixtures().iter().map(|f| (f.display().to_string(), std::fs::read(f).unwrap())).collect();
    files.push(("hand-written attention".into(), hand_written_attention()));
    files.push(("300 steps".into(), many_steps()));
    match shared_traces() {
        Some(dir) => {
            for f in trace_files(&dir) {
                let mut bytes = std::fs::read(&f).unwrap();
                if bytes.starts_with(&[0x1f, 0x8b]) {
                    let mut plain = Vec::new();
                    flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_end(&mut plain).unwrap();
                    bytes = plain;
                }
                files.push((f.display().to_string(), bytes));
            }
        }
        None => eprintln!("skipping the shared real traces: ../shared/traces is absent"),
    }
    let second_first = Fork::new(|a, b| {
        b();
        a();
    });
    assert!(parallel::threads(2).at_once() && !Fork::default().at_once());
    for (name, bytes) in &files {
        let one = report(name, bytes, Fork::default());
        // Two ways, and more: the critical path's steps split in halves of halves, unevenly.
        for fork in
            [parallel::threads(2), parallel::threads(7), second_first.clone(), second_first.clone().with_ways(5)]
        {
            let got = report(name, bytes, fork.clone());
            assert!(got == one, "{name} with {fork:?}:\n got {got:.300}\nwant {one:.300}");
        }
    }
    // The many steps' paths: every step walked, the segment budget spent part way, arrivals.
    let steps = analyze_slice("300 steps", &many_steps(), &Options::default()).unwrap();
    let path = steps.critical_path.as_ref().expect("a critical path");
    let segments: Vec<usize> = path.steps.iter().map(|s| s.segments.len()).collect();
    assert_eq!(path.steps.len(), 300);
    assert!(segments[0] > 0 && segments[299] == 0 && path.steps[299].segments_left_out > 0, "{segments:?}");
    assert!(path.arrivals.len() >= 300, "{} arrivals", path.arrivals.len());
    // The trace that makes the threads work out the launch order ahead does use it.
    let opts = Options { fork: parallel::threads(2), ..Options::default() };
    let eager = analyze_slice("eager", &hand_written_attention(), &opts).unwrap();
    assert_eq!(eager.attention.backend, Backend::Eager);
}
