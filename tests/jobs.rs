//! Many ranks and before/after: ranks of one job line up, collectives match across ranks and
//! the late rank is named with its injected wait; a diff reports exactly the changes made.

mod common;
use common::*;
use tracesight::analysis::job::diff::{diff, Status};
use tracesight::analysis::rules::taxonomy::{Backend, Bucket};
use tracesight::report::{Report, TraceReport};
use tracesight::{analyze_any, combine, combine_all, merge, merge_labelled, Options};

const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
const ALLREDUCE: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const RANKS: i64 = 4;
const COLLECTIVES: i64 = 5;
const LATE_RANK: i64 = 2;
const LATE_US: i64 = 300;
const TRANSFER_US: i64 = 40;

/// One rank of a data-parallel job: before each all-reduce a GEMM; the late rank's GEMM takes
/// `LATE_US` longer, so every other rank's all-reduce waits that long for it.
fn rank_trace(rank: i64) -> Trace {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.dist = Some((rank, RANKS));
    let mut clock = 0;
    for _ in 0..COLLECTIVES {
        let gemm = 1_000 + if rank == LATE_RANK { LATE_US } else { 0 };
        t.launch_on(&["aten::mm"], "cudaLaunchKernel", 5, &[(GEMM, clock, gemm)], 7);
        // Every rank starts the collective when its GEMM ends and all leave together.
        let leave = clock + 1_000 + LATE_US + TRANSFER_US;
        let start = clock + gemm;
        t.launch_on(&["record_param_comms"], "cudaLaunchKernel", 5, &[(ALLREDUCE, start, leave - start)], 20);
        clock = leave + 10;
    }
    t
}

fn job() -> Vec<TraceReport> {
    (0..RANKS).map(|r| rank_trace(r).report()).collect()
}

#[test]
fn the_late_rank_is_named_with_its_injected_wait() {
    let report = combine(job().into_iter().map(Ok).collect());
    let job = report.job.as_ref().expect("a job view for several ranks");
    assert!(job.one_job, "{:?}", job.notes);
    assert_eq!(job.collectives.len() as i64, COLLECTIVES);
    assert_eq!(job.unmatched, 0);
    let s = job.straggler.expect("a straggler");
    assert_eq!(report.ranks[s].rank, Some(LATE_RANK));
    let injected = (COLLECTIVES * LATE_US) as f64;
    for w in &job.waits {
        let want = if w.rank == Some(LATE_RANK) { 0.0 } else { injected };
        assert!((w.wait_us - want).abs() <= 0.01 * injected, "rank {:?} waited {} us, want {want}", w.rank, w.wait_us);
    }
    let caused = job.waits[s].caused_us;
    assert!((caused - injected * (RANKS - 1) as f64).abs() <= 0.01 * injected, "caused {caused}");
    for c in &job.collectives {
        assert_eq!(c.transfer_us, TRANSFER_US as f64);
        assert_eq!(report.ranks[c.last_row].rank, Some(LATE_RANK));
    }
}

#[test]
fn files_of_different_jobs_are_called_so() {
    let mut traces = job();
    traces[1].rank = Some(0);
    let report = combine(traces.into_iter().map(Ok).collect());
    let job = report.job.unwrap();
    assert!(!job.one_job);
    assert!(job.notes.iter().any(|n| n.contains("same rank")), "{:?}", job.notes);
}

#[test]
fn per_rank_json_reports_give_the_same_ranks_view() {
    let traces: Vec<Trace> = (0..RANKS).map(rank_trace).collect();
    let from_traces = combine_all(
        traces.iter().map(|t| analyze_any("rank.json", &t.bytes()[..], &Options::default(), &mut |_| true)).collect(),
    );
    // Each rank analysed on its own (as a cluster job would), its report written as JSON,
    // then the reports combined, one of them gzip-compressed.
    let reports: Vec<Vec<u8>> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let single =
                combine_all(vec![analyze_any("rank.json", &t.bytes()[..], &Options::default(), &mut |_| true)]);
            let json = serde_json::to_vec_pretty(&single).unwrap();
            if i == 0 {
                gzip(&json)
            } else {
                json
            }
        })
        .collect();
    let from_reports = combine_all(
        reports.iter().map(|b| analyze_any("rank.report.json", &b[..], &Options::default(), &mut |_| true)).collect(),
    );
    assert!(from_reports.errors.is_empty(), "{:?}", from_reports.errors);
    assert_eq!(from_reports.ranks, from_traces.ranks);
    assert_eq!(from_reports.job, from_traces.job);
}

#[test]
fn dlrm_eight_ranks_line_up() {
    let Some(dir) = shared_traces() else { return };
    let files = trace_files(&dir.join("dlrm-8rank-v100"));
    let singles: Vec<TraceReport> =
        files.iter().map(|f| analyze_bytes("x", &std::fs::read(f).unwrap()).unwrap()).collect();
    let report = combine(singles.iter().cloned().map(Ok).collect());
    let ranks: Vec<Option<i64>> = report.ranks.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, (0..8).map(Some).collect::<Vec<_>>());
    // Per-rank numbers are each file's own.
    for row in &report.ranks {
        let own = singles.iter().find(|t| t.rank == row.rank).unwrap();
        assert_eq!(row.busy_us, own.gpu.busy_us);
        assert_eq!(row.exposed_comm_us, own.gpu.exposed_comm_us);
    }
    let job = report.job.unwrap();
    assert!(job.one_job);
    assert_eq!(job.world_size, Some(8));
    // The 8 collectives of the step (all-to-alls and all-reduces) match on all 8 ranks.
    assert_eq!(job.collectives.len(), 8);
    assert_eq!(job.unmatched, 0);
    assert!(job.collectives.iter().all(|c| c.ranks == 8));
    let s = job.straggler.unwrap();
    assert_eq!(report.ranks[s].rank, Some(7), "rank 7 arrives last at most collectives");
}

// ---- diff ----

fn run(gemm_us: i64, attention: &str, extra: Option<&str>) -> TraceReport {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.span("user_annotation", "ProfilerStep#1", 900, 5_000, CPU_TID, None);
    t.launch(&["aten::linear", "aten::addmm"], GEMM, 0, gemm_us);
    match attention {
        "flash" => t.launch(
            &["aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention"],
            "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4> >(pytorch_flash::Flash_fwd_params)",
            2_000,
            100,
        ),
        _ => {
            let math = ["aten::scaled_dot_product_attention", "aten::_scaled_dot_product_attention_math"];
            t.launch(&[math[0], math[1], "aten::bmm"], "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize64x64x64", 2_000, 150);
            t.launch(&[math[0], math[1], "aten::_softmax"], "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*)", 2_150, 80);
            t.launch(&[math[0], math[1], "aten::bmm"], "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize64x64x64", 2_230, 150);
        }
    }
    if let Some(k) = extra {
        t.launch(&["aten::add"], k, 3_000, 50);
    }
    t.report()
}

#[test]
fn a_run_against_itself_has_no_changes() {
    let a = run(1_000, "flash", None);
    let d = diff(std::slice::from_ref(&a), std::slice::from_ref(&a));
    assert!(d.kernels.is_empty() && d.ops.is_empty(), "{:?} {:?}", d.kernels, d.ops);
    assert!(d.buckets.iter().all(|b| b.change.status == Status::Same));
    assert!(d.verdict.starts_with("No measurable change"), "{}", d.verdict);
}

#[test]
fn a_kernel_made_twice_as_slow() {
    let d = diff(&[run(1_000, "flash", None)], &[run(2_000, "flash", None)]);
    assert_eq!(d.kernels.len(), 1, "{:?}", d.kernels);
    let k = &d.kernels[0];
    assert_eq!((k.name.as_str(), k.change.status, k.change.delta_us), (GEMM, Status::Changed, 1_000.0));
    assert_eq!(k.change.rel_pct, Some(100.0));
    assert_eq!(d.ops.len(), 1);
    assert_eq!(d.ops[0].name, "aten::addmm");
    let changed: Vec<Bucket> = d.buckets.iter().filter(|b| b.change.status != Status::Same).map(|b| b.bucket).collect();
    assert_eq!(changed, [Bucket::Gemm]);
}

#[test]
fn backend_switched_from_flash_to_math() {
    let d = diff(&[run(1_000, "flash", None)], &[run(1_000, "math", None)]);
    assert_eq!((d.backend_a, d.backend_b), (Backend::Flash, Backend::Math));
    assert!(d.verdict.contains("math instead of flash"), "{}", d.verdict);
    assert!(d.verdict.contains("unchanged"), "GEMM is unchanged: {}", d.verdict);
    let gone: Vec<&str> =
        d.kernels.iter().filter(|k| k.change.status == Status::Gone).map(|k| k.name.as_str()).collect();
    assert_eq!(gone.len(), 1);
    assert!(gone[0].contains("pytorch_flash::flash_fwd_kernel"));
    assert_eq!(d.kernels.iter().filter(|k| k.change.status == Status::New).count(), 2);
}

#[test]
fn a_kernel_added() {
    let add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int)";
    let d = diff(&[run(1_000, "flash", None)], &[run(1_000, "flash", Some(add))]);
    assert_eq!(d.kernels.len(), 1);
    assert_eq!((d.kernels[0].change.status, d.kernels[0].change.b_us), (Status::New, 50.0));
    assert_eq!(d.kernels[0].bucket, Some(Bucket::Elementwise));
}

#[test]
fn report_json_round_trips_through_analyze_any() {
    let a = run(1_000, "flash", None);
    let report: Report = combine(vec![Ok(a.clone())]);
    let bytes = serde_json::to_vec(&report).unwrap();
    let back = analyze_any("r.json", &bytes[..], &Options::default(), &mut |_| true).unwrap();
    assert_eq!(back, vec![a]);
}

#[test]
fn merging_per_file_reports_equals_combining_the_files() {
    // The page analyses each file in its own worker and merges the per-file Reports.
    let mut inputs: Vec<Vec<u8>> = (0..RANKS).rev().map(|r| rank_trace(r).bytes()).collect();
    inputs.insert(1, b"{\"not\": \"a trace\"}".to_vec());
    let analyse = |b: &Vec<u8>| analyze_any("f.json", &b[..], &Options::default(), &mut |_| true);
    let all = combine_all(inputs.iter().map(analyse).collect());
    let merged = merge(inputs.iter().map(|b| combine_all(vec![analyse(b)])).collect());
    assert_eq!(merged, all);
    assert_eq!(merged.errors.len(), 1);
    assert_eq!(serde_json::to_string_pretty(&merged).unwrap(), serde_json::to_string_pretty(&all).unwrap());
}

#[test]
fn sets_of_ranks_compare_as_means_per_rank() {
    // A: two ranks at 1000 us of GEMM; B: one rank unchanged, one at 3000 us: +1000 us per rank.
    let a = [run(1_000, "flash", None), run(1_000, "flash", None)];
    let b = [run(1_000, "flash", None), run(3_000, "flash", None)];
    let d = diff(&a, &b);
    assert_eq!(d.a_files.len(), 2);
    let k = &d.kernels[0];
    assert_eq!((k.name.as_str(), k.change.a_us, k.change.b_us, k.change.delta_us), (GEMM, 1_000.0, 2_000.0, 1_000.0));
    let gemm = d.buckets.iter().find(|x| x.bucket == Bucket::Gemm).unwrap();
    assert_eq!((gemm.change.delta_us, gemm.change.status), (1_000.0, Status::Changed));
    assert!(d.verdict.contains("matmul (GEMM/conv) +1.00 ms"), "{}", d.verdict);
}

#[test]
fn default_compare_split() {
    use tracesight::web::view_state::CompareSets;
    let ranked = |ranks: &[i64]| -> Vec<TraceReport> {
        ranks
            .iter()
            .map(|&r| {
                let mut t = run(1_000, "flash", None);
                t.rank = Some(r);
                t
            })
            .collect()
    };
    // Two traces: A then B.
    assert_eq!(CompareSets::default_for(&ranked(&[0, 1])), CompareSets::pair(0, 1));
    // Two runs of one 4-rank job dropped together (sorted by rank): each rank's first file is A.
    let two_runs = CompareSets::default_for(&ranked(&[0, 0, 1, 1, 2, 2, 3, 3]));
    assert_eq!((two_runs.a, two_runs.b), (vec![0, 2, 4, 6], vec![1, 3, 5, 7]));
    // One job of 8 ranks: first half against second half.
    let halves = CompareSets::default_for(&ranked(&[0, 1, 2, 3, 4, 5, 6, 7]));
    assert_eq!((halves.a, halves.b), (vec![0, 1, 2, 3], vec![4, 5, 6, 7]));
    let odd = CompareSets::default_for(&ranked(&[0, 1, 2]));
    assert_eq!((odd.a, odd.b), (vec![0, 1], vec![2]));
}

#[test]
fn a_second_run_merged_in_is_set_b() {
    use tracesight::analysis::job::diff::diff_refs;
    use tracesight::web::view_state::{CompareSets, Side};
    // Two runs of a 4-rank job whose files have the same names; the second run's GEMMs are slower.
    let runs: Vec<Report> = [1_000, 1_500]
        .iter()
        .map(|&gemm| {
            combine(
                (0..RANKS)
                    .map(|r| {
                        let mut t = run(gemm, "flash", None);
                        (t.rank, t.world_size, t.file) = (Some(r), Some(RANKS), format!("rank{r}.json"));
                        Ok(t)
                    })
                    .collect(),
            )
        })
        .collect();
    let (before, after) = (runs[0].traces.clone(), runs[1].traces.clone());
    let labelled = runs.into_iter().zip([Some(Side::A), Some(Side::B)]).collect();
    let (merged, sides) = merge_labelled(labelled);
    assert_eq!(merged.traces.len() as i64, 2 * RANKS);
    let sets = CompareSets::from_sides(&sides);
    assert_eq!((sets.a.len(), sets.b.len()), (RANKS as usize, RANKS as usize));
    let pick = |set: &[u32]| set.iter().map(|&i| &merged.traces[i as usize]).collect::<Vec<_>>();
    let d = diff_refs(&pick(&sets.a), &pick(&sets.b));
    assert_eq!(d, diff(&before, &after));
    assert_eq!(d.kernels[0].change.delta_us, 500.0);
    // The merged report is the one of all files together: one rank twice, so not one job.
    assert!(!merged.job.unwrap().one_job);
}

/// One report per rank, as cluster array tasks write them: the task whose trace is broken
/// writes a report with no trace and that file's error. Merging the reports names that file,
/// as reading the traces together would; it is not lost.
#[test]
fn a_report_of_an_unreadable_trace_names_its_file_when_merged() {
    let good = rank_trace(0).bytes();
    let broken = br#"{"traceEvents": ["#.to_vec();
    let one = |name: &str, bytes: &[u8]| analyze_any(name, bytes, &Options::default(), &mut |_| true);
    let direct = combine_all(vec![one("rank0.json", &good), one("rank1.json", &broken)]);
    assert_eq!(direct.errors.len(), 1);

    let report_of = |name: &str, bytes: &[u8]| serde_json::to_vec(&combine_all(vec![one(name, bytes)])).unwrap();
    let (r0, r1) = (report_of("rank0.json", &good), report_of("rank1.json", &broken));
    let read_back = analyze_any("rank1.report.json", &r1[..], &Options::default(), &mut |_| true);
    let e = read_back.as_ref().unwrap_err();
    assert_eq!((e.file.as_str(), e.kind), ("rank1.json", tracesight::ErrorKind::Reported));
    let merged =
        combine_all(vec![analyze_any("rank0.report.json", &r0[..], &Options::default(), &mut |_| true), read_back]);
    assert_eq!(merged.errors, direct.errors);
    assert_eq!(merged.traces, direct.traces);
}

/// A report that an earlier tracesight wrote named each critical-path piece in full, its
/// `names` holding only the segments' names: read back, its pieces index the names (a name no
/// segment has added at the end; a link of version 2, with no names, is tested in share.rs), and
/// every piece and segment names what it named.
#[test]
fn a_report_of_an_earlier_version_with_pieces_named_in_full_reads_back() {
    let one = |name: &str, bytes: &[u8]| analyze_any(name, bytes, &Options::default(), &mut |_| true);
    let direct = combine_all(vec![one("rank0.json", &rank_trace(0).bytes())]);
    let mut old = serde_json::to_value(&direct).unwrap();
    let path = &mut old["traces"][0]["critical_path"];
    let names: Vec<String> = serde_json::from_value(path["names"].clone()).unwrap();
    let mut segment_names: Vec<String> = Vec::new();
    let mut pieces = 0;
    for s in path["steps"].as_array_mut().unwrap() {
        for x in s["pieces"].as_array_mut().unwrap() {
            x["name"] = names[x["name"].as_u64().unwrap() as usize].clone().into();
            pieces += 1;
        }
        for g in s.get_mut("segments").and_then(|g| g.as_array_mut()).into_iter().flatten() {
            let name = &names[g["name"].as_u64().unwrap() as usize];
            let k = segment_names.iter().position(|n| n == name).unwrap_or_else(|| {
                segment_names.push(name.clone());
                segment_names.len() - 1
            });
            g["name"] = k.into();
        }
    }
    assert!(pieces > 0 && !segment_names.is_empty(), "{names:?}");
    path["names"] = segment_names.into();
    // Written as tracesight writes a report, `tool_version` first (what tells a report).
    let version = old.as_object_mut().unwrap().remove("tool_version").unwrap();
    let rest = serde_json::to_string(&old).unwrap();
    let bytes = format!("{{\"tool_version\":{version},{}", &rest[1..]).into_bytes();
    let read_back = combine_all(vec![one("rank0.report.json", &bytes)]);
    assert!(read_back.errors.is_empty(), "{:?}", read_back.errors);

    let (a, b) =
        (direct.traces[0].critical_path.as_ref().unwrap(), read_back.traces[0].critical_path.as_ref().unwrap());
    let named = |p: &tracesight::report::CriticalPath| {
        let pieces = p.steps.iter().flat_map(|s| &s.pieces).map(|x| (p.name(x.name).to_string(), x.us));
        let segments =
            p.steps.iter().flat_map(|s| &s.segments).map(|g| (p.name(g.name).to_string(), g.start_ns as f64));
        pieces.chain(segments).collect::<Vec<_>>()
    };
    assert_eq!(named(b), named(a));
    assert!(named(a).iter().all(|(n, _)| n != "?"));
    // Everything else read back as written.
    let strip = |r: &tracesight::Report| {
        let mut r = r.clone();
        r.traces.iter_mut().for_each(|t| t.critical_path = None);
        r
    };
    assert_eq!(strip(&read_back), strip(&direct));
}
