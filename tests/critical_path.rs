//! The critical path of a step, with known answers on synthetic traces: a path through a
//! synchronisation, a launch-bound step (CPU on the path), what-if figures worked out by hand;
//! and on the real traces, bounds every path must keep.

mod common;
use common::*;
use serde_json::json;
use tracesight::analysis::rules::taxonomy::Bucket;
use tracesight::report::{PathSide, PathStream, StepPath, TraceReport};
use tracesight::{analyze_reader, Options, WhatIfSpec};

const GEMM: &str = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn";
const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>";

fn cpu(t: &mut Trace, cat: &str, name: &str, ts: i64, dur: i64, args: serde_json::Value) {
    t.events.push(
        json!({ "ph": "X", "cat": cat, "name": name, "pid": 100, "tid": CPU_TID, "ts": ts, "dur": dur, "args": args }),
    );
}

/// An op at `op` (start, dur) whose launch call at `call` runs `kernel` at `gpu` on stream 7.
fn launch(t: &mut Trace, op: (&str, i64, i64), call: (i64, i64), kernel: (&str, i64, i64)) {
    let (ext, corr) = (t.id(), t.id());
    cpu(t, "cpu_op", op.0, op.1, op.2, json!({ "External id": ext }));
    cpu(t, "cuda_runtime", "cudaLaunchKernel", call.0, call.1, json!({ "External id": ext, "correlation": corr }));
    t.events.push(json!({ "ph": "X", "cat": "kernel", "name": kernel.0, "pid": 0, "tid": 7, "ts": kernel.1, "dur": kernel.2, "args": { "correlation": corr, "device": 0, "stream": 7 } }));
}

/// Step 0-1000 us: a GEMM launched at 15 runs 25-825 while the CPU blocks in
/// cudaDeviceSynchronize 40-830; then an add. By hand: CPU 0-15 (15), launch delay 15-25 (10),
/// the GEMM (800), the sync's end, CPU 830-1000 (170): 995 us, 185 of it CPU.
fn sync_step() -> Trace {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    cpu(&mut t, "user_annotation", "ProfilerStep#1", 0, 1000, json!({}));
    launch(&mut t, ("aten::mm", 10, 20), (15, 5), (GEMM, 25, 800));
    let corr = t.id();
    cpu(&mut t, "cuda_runtime", "cudaDeviceSynchronize", 40, 790, json!({ "correlation": corr }));
    launch(&mut t, ("aten::add", 840, 20), (845, 5), (ADD, 855, 10));
    t
}

fn with_what_if(t: &Trace, what_if: &str) -> TraceReport {
    let opts = Options { what_if: Some(WhatIfSpec::parse(what_if).unwrap()), ..Options::default() };
    analyze_reader("synthetic.json", &t.bytes()[..], &opts, &mut |_| true).unwrap()
}

fn only_step(r: &TraceReport) -> &StepPath {
    let cp = r.critical_path.as_ref().expect("a critical path");
    assert_eq!(cp.steps.len(), 1);
    &cp.steps[0]
}

#[test]
fn the_path_runs_through_the_synchronisation() {
    let r = sync_step().report();
    let s = only_step(&r);
    let name = |i: u32| r.critical_path.as_ref().unwrap().name(i);
    assert_eq!(s.step, "ProfilerStep#1");
    assert_eq!((s.span_us, s.path_us), (1000.0, 995.0));
    assert_eq!((s.cpu_us, s.gpu_us, s.launch_us, s.gap_us), (185.0, 800.0, 10.0, 0.0));
    assert_eq!(s.syncs, 1);
    assert_eq!(s.longest_row_us, 800.0);
    assert_eq!((name(s.pieces[0].name), s.pieces[0].side, s.pieces[0].us), (GEMM, PathSide::Gpu, 800.0));
    assert_eq!(s.buckets[0].bucket, Bucket::Gemm);
    assert!((s.buckets[0].pct_of_path - 800.0 / 995.0 * 100.0).abs() < 1e-9);
    // The add kernel ends at 865, before the CPU's 1000: not on the path.
    assert!(s.pieces.iter().all(|p| name(p.name) != ADD));
}

/// The path in time, as the page draws it: each timed edge where it ran (back-to-back CPU
/// stretches of one op as one), named, GPU rows on their stream. By hand from `sync_step`.
#[test]
fn the_path_in_time_is_where_it_ran() {
    let r = sync_step().report();
    let cp = r.critical_path.as_ref().unwrap();
    let s = only_step(&r);
    let t0 = r.timeline.as_ref().unwrap().start_ns - 25_000; // the GEMM starts at 25 us
    let got: Vec<(i64, i64, PathSide, &str, Option<PathStream>)> = s
        .segments
        .iter()
        .map(|x| {
            ((x.start_ns - t0) / 1000, (x.end_ns - t0) / 1000, x.side, cp.names[x.name as usize].as_str(), x.stream)
        })
        .collect();
    let on_7 = Some(PathStream { device: 0, stream: 7 });
    let want = vec![
        (0, 10, PathSide::Cpu, "ProfilerStep#1", None),
        (10, 15, PathSide::Cpu, "aten::mm", None),
        (15, 25, PathSide::Launch, "launch delay", None),
        (25, 825, PathSide::Gpu, GEMM, on_7),
        (830, 840, PathSide::Cpu, "ProfilerStep#1", None),
        (840, 845, PathSide::Cpu, "aten::add", None),
        (845, 850, PathSide::Cpu, "cudaLaunchKernel", None),
        (850, 860, PathSide::Cpu, "aten::add", None),
        (860, 1000, PathSide::Cpu, "ProfilerStep#1", None),
    ];
    assert_eq!(got, want);
    assert_eq!(s.segments_left_out, 0);
    let drawn: i64 = s.segments.iter().map(|x| x.end_ns - x.start_ns).sum();
    assert_eq!(drawn as f64 / 1e3, s.path_us, "the segments are the whole path");
}

/// Segments are bounded per report: past `SEGMENT_BUDGET` the later steps keep none, and each
/// step counts what it left out (30 launch-bound steps alike, about 40 segments each).
#[test]
fn the_path_in_time_keeps_to_its_budget() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    for step in 0..30 {
        let at = step * 1000;
        cpu(&mut t, "user_annotation", &format!("ProfilerStep#{step}"), at, 200, json!({}));
        for k in 0..10 {
            let o = at + 10 + 18 * k;
            launch(&mut t, ("aten::add", o, 16), (o + 2, 10), (ADD, o + 7, 2));
        }
    }
    let r = t.report();
    let cp = r.critical_path.as_ref().unwrap();
    assert_eq!(cp.steps.len(), 30);
    let each = cp.steps[0].segments.len() + cp.steps[0].segments_left_out as usize;
    assert!(each > StepPath::SEGMENT_BUDGET / 30, "{each} segments a step do not pass the budget");
    assert!(cp.steps.iter().all(|s| s.segments.len() + s.segments_left_out as usize == each));
    let kept: usize = cp.steps.iter().map(|s| s.segments.len()).sum();
    assert_eq!(kept, StepPath::SEGMENT_BUDGET);
    assert!(cp.steps.last().unwrap().segments.is_empty());
    assert_eq!(cp.segment_count(), 30 * each as u64);
    // A step kept whole draws its whole path; every name a segment gives is in the table.
    let first = &cp.steps[0];
    let drawn: i64 = first.segments.iter().map(|x| x.end_ns - x.start_ns).sum();
    assert_eq!(drawn as f64 / 1e3, first.path_us);
    assert!(cp.steps.iter().flat_map(|s| &s.segments).all(|x| (x.name as usize) < cp.names.len()));
}

#[test]
fn what_if_follows_the_path_not_the_sum() {
    // GEMM 50% faster: 400 us saved along the path (15 + 10 + 400 + 170 = 595).
    let r = with_what_if(&sync_step(), "gemm=50%");
    assert_eq!(only_step(&r).what_if_path_us, Some(595.0));
    let w = r.critical_path.as_ref().unwrap().what_if.as_ref().unwrap();
    assert_eq!((w.path_before_us, w.path_after_us, w.step_before_us, w.step_after_us), (995.0, 595.0, 1000.0, 600.0));
    assert_eq!(w.naive_saving_us, 400.0);
    // 99% faster: the GEMM route (15 + 10 + 8 + 170 = 203) falls below the CPU's own
    // (40 + 170 = 210), so the path saves 785 us where the naive sum says 792.
    let r = with_what_if(&sync_step(), "gemm=99%");
    let w = r.critical_path.as_ref().unwrap().what_if.as_ref().unwrap();
    assert_eq!((w.path_after_us, w.step_after_us, w.naive_saving_us), (210.0, 215.0, 792.0));
    // A name family: "add" names the add kernel (off the path) and aten::add, whose own
    // stretches on the path are 840-845 and 850-860 (its launch call between): 40% faster
    // saves 2 + 4 us.
    let r = with_what_if(&sync_step(), "add=40%");
    assert_eq!(only_step(&r).what_if_path_us, Some(989.0));
}

#[test]
fn what_if_parse_refuses_nonsense() {
    assert_eq!(WhatIfSpec::parse("gemm=30%").unwrap(), WhatIfSpec { target: "gemm".into(), faster_pct: 30.0 });
    for bad in ["gemm", "gemm=x%", "=30%", "gemm=130%"] {
        assert!(WhatIfSpec::parse(bad).is_err(), "{bad}");
    }
}

/// Ten adds, each launch call 10 us and its 2 us kernel started 5 us into the call, the stream
/// idle in between: the CPU holds the step. By hand: the step's own time 40, the ops' 60, the
/// calls' 100: 200 us, all CPU.
#[test]
fn a_launch_bound_step_shows_the_cpu_on_the_path() {
    let mut t = Trace::new("NVIDIA A100", (8, 0));
    cpu(&mut t, "user_annotation", "ProfilerStep#1", 0, 200, json!({}));
    for k in 0..10 {
        let o = 10 + 18 * k;
        launch(&mut t, ("aten::add", o, 16), (o + 2, 10), (ADD, o + 7, 2));
    }
    let r = t.report();
    let s = only_step(&r);
    assert_eq!((s.path_us, s.cpu_us, s.gpu_us), (200.0, 200.0, 0.0));
    let cp = r.critical_path.as_ref().unwrap();
    let piece = |n: &str| s.pieces.iter().find(|p| cp.name(p.name) == n).map(|p| (p.us, p.count));
    assert_eq!(piece("cudaLaunchKernel"), Some((100.0, 10)));
    assert_eq!(piece("aten::add").map(|p| p.0), Some(60.0));
    assert_eq!(piece("ProfilerStep#1").map(|p| p.0), Some(40.0));
    // Faster kernels change nothing: the CPU bounds the step, whatever the naive sum says
    // (ten 2 us kernels 90% faster: 18 us).
    let r = with_what_if(&t, "vectorized=90%");
    let w = r.critical_path.as_ref().unwrap().what_if.as_ref().unwrap();
    assert_eq!((w.path_after_us, w.step_after_us, w.naive_saving_us), (200.0, 200.0, 18.0));
}

/// Every step's path is no longer than the step and no shorter than its longest GPU row.
#[test]
fn real_traces_keep_the_path_bounds() {
    let Some(dir) = shared_traces() else {
        eprintln!("skipping: ../shared/traces is absent");
        return;
    };
    let mut seen = 0;
    for f in trace_files(&dir) {
        let Ok(r) = analyze_reader(
            &f.display().to_string(),
            std::fs::File::open(&f).unwrap(),
            &Options::default(),
            &mut |_| true,
        ) else {
            continue;
        };
        let Some(cp) = &r.critical_path else { continue };
        for s in &cp.steps {
            assert!(
                s.path_us <= s.span_us + 1e-6,
                "{}: {} path {} > span {}",
                f.display(),
                s.step,
                s.path_us,
                s.span_us
            );
            assert!(
                s.path_us + 1e-6 >= s.longest_row_us,
                "{}: {} path {} < row {}",
                f.display(),
                s.step,
                s.path_us,
                s.longest_row_us
            );
            let parts = s.cpu_us + s.gpu_us + s.launch_us + s.gap_us;
            // Each part is whole nanoseconds converted once, not a sum of microseconds that
            // prints float noise (4410.474000000002).
            for x in [s.cpu_us, s.gpu_us, s.launch_us, s.gap_us] {
                assert_eq!((x * 1e3).round() / 1e3, x, "{}: {} part {x}", f.display(), s.step);
            }
            assert!((parts - s.path_us).abs() < 1e-3 * s.path_us.max(1.0), "{}: {} parts {parts}", f.display(), s.step);
            // The segments drawn: no more than the path, all of it when none was left out.
            let drawn = s.segments.iter().map(|x| x.end_ns - x.start_ns).sum::<i64>() as f64 / 1e3;
            let whole = if s.segments_left_out == 0 { (drawn - s.path_us).abs() < 1e-3 } else { drawn <= s.path_us };
            assert!(whole && s.segments.len() <= StepPath::MAX_SEGMENTS, "{}: {} drew {drawn}", f.display(), s.step);
            seen += 1;
        }
        let first = cp.steps.first().map(|s| {
            format!("{} path {:.0}/{:.0} us cpu {:.0} gpu {:.0}", s.step, s.path_us, s.span_us, s.cpu_us, s.gpu_us)
        });
        eprintln!(
            "{}: {} steps; {}",
            f.file_name().unwrap().to_string_lossy(),
            cp.steps.len(),
            first.unwrap_or_default()
        );
    }
    eprintln!("{seen} step paths checked");
    assert!(seen > 0);
}

/// Rank `rank` of two (tests/fixtures/job/held-collective-rank*.json, which the page's browser
/// test opens too): a GEMM (rank 1's takes 1500 us, rank 0's 500) then an all-reduce on the
/// same stream that both leave at 1600 us.
fn rank(rank: i64) -> TraceReport {
    let name = format!("job/held-collective-rank{rank}.json");
    analyze_bytes(&name, &read_fixture(&name)).unwrap()
}

/// The job's path crosses to rank 1 at the all-reduce: rank 1 arrived last, held by its GEMM.
/// By hand: its path to the all-reduce is CPU 0-15, the launch delay 15-25 and the GEMM's
/// 1500 us (1525 us); rank 0 waited 1075 - 75 = 1000 us there.
#[test]
fn the_job_path_names_the_rank_and_op_that_held_the_collective() {
    let report = tracesight::combine(vec![Ok(rank(0)), Ok(rank(1))]);
    let job = report.job.as_ref().expect("a job view");
    assert_eq!(job.critical_path.len(), 1);
    let s = &job.critical_path[0];
    assert_eq!((s.rank, s.held_by.as_str(), s.side), (Some(1), GEMM, PathSide::Gpu));
    assert_eq!((s.held_us, s.stretch_us, s.wait_us), (1500.0, 1525.0, 1000.0));
    // The text report's ranks section names the stretch: the rank, what held it, the times.
    let text = tracesight::text::render(&report);
    let part = text.split(" Job critical path").nth(1).expect("the job's path in the text");
    let row = part.lines().find(|l| l.contains("allreduce")).unwrap();
    assert!(
        row.contains("rank 1") && row.contains("1.50 ms") && row.contains("1.00 ms") && row.contains(GEMM),
        "{row}"
    );
    assert!(part.contains("stretches held, by rank (their time on the path): rank 1: 1 (1.52 ms)"), "{part}");
}

/// The DLRM ranks: a job path through their matched collectives, each stretch at the rank the
/// collective's matching names as the last to arrive.
#[test]
fn dlrm_ranks_give_a_job_path() {
    let Some(dir) = shared_traces().map(|d| d.join("dlrm-8rank-v100")).filter(|d| d.is_dir()) else {
        eprintln!("skipping: ../shared/traces/dlrm-8rank-v100 is absent");
        return;
    };
    let open = |f: &std::path::PathBuf| std::fs::File::open(f).unwrap();
    let traces: Vec<_> = trace_files(&dir)
        .iter()
        .map(|f| analyze_reader(&f.display().to_string(), open(f), &Options::default(), &mut |_| true))
        .collect();
    let report = tracesight::combine(traces);
    let job = report.job.as_ref().expect("a job view");
    assert!(!job.critical_path.is_empty(), "no stretch of the job path");
    for s in &job.critical_path {
        assert_eq!(report.traces[s.row].rank, s.rank);
        assert!(s.held_us <= s.stretch_us + 1e-6 && s.held_us > 0.0);
    }
    let held: f64 = job.critical_path.iter().map(|s| s.stretch_us).sum();
    let mut by_rank = std::collections::BTreeMap::new();
    for s in &job.critical_path {
        *by_rank.entry(s.rank).or_insert(0) += 1;
    }
    eprintln!(
        "DLRM: {} collectives matched, {} stretches on the job path ({held:.0} us), last arrivers {by_rank:?}; first: {:?}",
        job.collectives.len(),
        job.critical_path.len(),
        job.critical_path.first()
    );
}

/// `t` with a step at 2000 us of `n` 1-us kernels (no launch calls) appended.
fn with_big_step(t: &mut Trace, n: usize) -> Vec<u8> {
    use std::io::Write;
    cpu(t, "user_annotation", "ProfilerStep#2", 2000, 2 * n as i64 + 10, json!({}));
    let mut bytes = t.bytes();
    // Written by hand: a million `json!` values take longer than the analysis.
    let close = bytes.iter().rposition(|&b| b == b']').expect("the events array");
    let tail = bytes.split_off(close);
    for k in 0..n {
        let ts = 2001 + 2 * k as i64;
        write!(bytes, r#",{{"ph":"X","cat":"kernel","name":"{ADD}","pid":0,"tid":7,"ts":{ts},"dur":1,"args":{{"device":0,"stream":7}}}}"#).unwrap();
    }
    bytes.extend_from_slice(&tail);
    bytes
}

/// A step past `limits::MAX_PATH_ITEMS` (its graph would cost over 100 bytes an item) gets no
/// path, and the report names it; the step before it keeps its path and every other figure
/// (GPU time) stays exact. A trace whose only step is too large says so too.
#[test]
fn a_step_too_large_for_a_path_is_named_not_computed() {
    let n = tracesight::limits::MAX_PATH_ITEMS + 1;
    let bytes = with_big_step(&mut sync_step(), n);
    let r = analyze_reader("synthetic.json", &bytes[..], &Options::default(), &mut |_| true).unwrap();
    let cp = r.critical_path.as_ref().expect("a critical path");
    assert_eq!(cp.steps.len(), 1, "only the first step has a path");
    assert_eq!(cp.steps[0].step, "ProfilerStep#1");
    assert_eq!(cp.steps_too_large.len(), 1);
    assert_eq!(cp.steps_too_large[0].step, "ProfilerStep#2");
    // The kernels and the step's own span.
    assert_eq!(cp.steps_too_large[0].items, n as u64 + 1);
    let d = r.diagnostics.iter().find(|d| d.id == tracesight::vocab::DiagnosticId::PathStepTooLarge);
    assert_eq!(d.map(|d| d.count), Some(1), "{:?}", r.diagnostics);
    // The kernels are still counted: 800 + 10 us of the first step and 1 us each.
    assert_eq!(r.gpu.kernel_time_us, 810.0 + n as f64);
    let said = format!("the path of step ProfilerStep#2 was not computed: it holds {} rows", n + 1);
    let text = tracesight::text::render(&tracesight::combine(vec![Ok(r)]));
    assert!(text.contains(&said), "{text}");

    let mut alone = Trace::new("NVIDIA A100", (8, 0));
    let r =
        analyze_reader("alone.json", &with_big_step(&mut alone, n)[..], &Options::default(), &mut |_| true).unwrap();
    assert!(r.critical_path.as_ref().is_some_and(|p| p.steps.is_empty() && p.has_steps()));
    let report = tracesight::combine(vec![Ok(r)]);
    assert!(tracesight::text::render(&report).contains(&said), "text");
    let md = tracesight::export::markdown::render(&report);
    assert!(md.contains("### Critical path") && md.contains("was not computed: it holds"), "{md}");
    assert!(!md.contains("| step | path |"), "no empty table: {md}");
}
