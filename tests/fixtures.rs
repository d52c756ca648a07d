//! The project's own small fixtures: exact numbers worked out by hand, every input path
//! (slice, reader, gzip, multi-member gzip, a reader returning 7 bytes at a time, tiny
//! chunks) giving the identical report, and golden text/JSON reports.

mod common;
use common::*;
use tracesight::analysis::passes::{diagnostics::DiagnosticId, hints::HintId};
use tracesight::analysis::rules::taxonomy::{Backend, Bucket};
use tracesight::report::Severity;
use tracesight::report::TraceReport;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn bucket(r: &TraceReport, id: Bucket) -> f64 {
    r.buckets.iter().find(|b| b.id == id).map(|b| b.time_us).unwrap_or(0.0)
}

#[test]
fn current_schema_numbers_by_hand() {
    let r = analyze_bytes("current_schema.json", &read_fixture("current_schema.json")).unwrap();
    assert_invariants(&r);
    let g = &r.gpu;
    // Rows: gemm [100.5, 300.75), flash [300.75, 400.75), layer norm [450, 470.5),
    // memcpy [500, 530), nccl on stream 20 [460, 560), custom [700, 710), mul [1100, 1102.5).
    assert!(close(g.kernel_time_us, 463.25), "{}", g.kernel_time_us);
    assert!(close(g.busy_us, 300.25 + 110.0 + 10.0 + 2.5), "{}", g.busy_us);
    assert!(close(g.span_us, 1002.0));
    assert!(close(g.idle_us, 1002.0 - 422.75));
    assert!(close(g.compute_us, 300.25 + 20.5 + 10.0 + 2.5));
    assert!(close(g.comm_us, 100.0));
    assert!(close(g.exposed_comm_us, 89.5), "{}", g.exposed_comm_us);
    assert!(close(g.overlap_pct, 10.5));
    assert!(close(g.memory_us, 30.0));
    assert_eq!(g.kernel_count, 7);
    // Duration-weighted: gemm 0.5 over 200.25, flash min(2, 1) over 100.
    let eff = (0.5 * 200.25 + 100.0) / 300.25 * 100.0;
    assert!((g.est_sm_efficiency_pct.unwrap() - eff).abs() < 1e-6);

    assert!(close(bucket(&r, Bucket::Gemm), 200.25));
    assert!(close(bucket(&r, Bucket::Attention), 100.0));
    assert!(close(bucket(&r, Bucket::Elementwise), 23.0));
    assert!(close(bucket(&r, Bucket::Memory), 30.0));
    assert!(close(bucket(&r, Bucket::Communication), 100.0));
    assert!(close(bucket(&r, Bucket::Other), 10.0));
    let attn = r.buckets.iter().find(|b| b.id == Bucket::Attention).unwrap();
    assert!(
        attn.matched[0].rule.starts_with("under aten::_scaled_dot_product_flash_attention: SDPA flash op"),
        "{}",
        attn.matched[0].rule
    );
    let coll = r.buckets.iter().find(|b| b.id == Bucket::Communication).unwrap();
    // The kernel's own name decides before the op chain.
    assert_eq!(coll.matched[0].rule, "kernel: NCCL / RCCL / MSCCL collective");

    assert_eq!(r.attention.backend, Backend::Flash);
    assert!(close(r.attention.time_us, 100.0));
    assert!(r.attention.fix.is_none());

    assert_eq!(r.device.name.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(r.device.sm_count, Some(132));
    assert_eq!(r.device.compute_capability.as_deref(), Some("9.0"));
    assert_eq!((r.rank, r.world_size), (Some(3), Some(8)));

    let k0 = &r.top_kernels[0];
    assert!(k0.name.starts_with("sm90_xmma_gemm"));
    assert_eq!(k0.op.as_deref(), Some("aten::addmm"));
    assert!(close(k0.pct, 200.25 / 463.25 * 100.0));
    let op0 = &r.top_ops[0];
    assert_eq!((op0.name.as_str(), op0.op.as_deref()), ("aten::addmm", Some("aten::linear")));
    assert!(
        !r.top_ops.iter().any(|o| o.name.starts_with("ProfilerStep")),
        "annotations are not ops with GPU time of their own"
    );

    assert_eq!(r.steps.len(), 2);
    let s1 = &r.steps[0];
    assert_eq!(s1.name, "ProfilerStep#1");
    assert!(close(s1.span_us, 609.5) && close(s1.busy_us, 420.25) && close(s1.idle_us, 189.25), "{s1:?}");
    assert!(close(s1.cpu_us, 1000.0));
    let s2 = &r.steps[1];
    assert!(close(s2.span_us, 2.5) && close(s2.busy_us, 2.5) && close(s2.idle_us, 0.0));

    assert_eq!((r.launch.launched_kernels, r.launch.shorter_than_launch), (5, 1));
    let diag = |id: &str| r.diagnostics.iter().find(|d| d.id.id() == id).map(|d| d.count);
    assert_eq!(diag("dangling_correlation"), Some(1));
    assert_eq!(diag("unknown_category"), Some(1));
    // The `[memory]` events (one written 2021-style, without a cat) are read as memory, not
    // counted as skipped.
    assert_eq!(diag("no_category"), None);
    assert_eq!(r.memory.as_ref().map(|m| m.events), Some(2));
    assert_eq!(diag("truncated"), None);
    assert_eq!(r.events, 30);
}

#[test]
fn old_schema_bare_array() {
    let r = analyze_bytes("old_schema.json", &read_fixture("old_schema.json")).unwrap();
    assert_invariants(&r);
    assert!(close(r.gpu.kernel_time_us, 152.0));
    assert!(close(r.gpu.busy_us, 152.0));
    assert!(close(r.gpu.span_us, 202.0));
    assert!(close(bucket(&r, Bucket::Gemm), 120.0));
    assert!(close(bucket(&r, Bucket::Elementwise), 30.0));
    assert!(close(bucket(&r, Bucket::Memory), 2.0));
    // "external id" (old spelling) links the launch to the op; "stream 7" is the stream.
    assert_eq!(r.top_kernels[0].op.as_deref(), Some("aten::cudnn_convolution"));
    assert_eq!(r.steps.len(), 1);
    assert!(close(r.steps[0].busy_us, 152.0));
    assert!(r.hints.iter().any(|h| h.id == HintId::NoTensorCores), "sgemm is a SIMT fp32 GEMM");
}

#[test]
fn math_backend_with_reasons_and_fix() {
    let r = analyze_bytes("math_sdpa.json", &read_fixture("math_sdpa.json")).unwrap();
    assert_invariants(&r);
    // The math backend's GEMMs and softmax count as attention: they run under the SDPA op.
    assert!(close(bucket(&r, Bucket::Attention), 90.0));
    assert!(close(bucket(&r, Bucket::Gemm), 40.0));
    assert_eq!(r.attention.backend, Backend::Math);
    assert!(r.attention.fix.as_deref().unwrap().contains("sdpa_kernel(SDPBackend.FLASH_ATTENTION)"));
    let reasons = r.attention.not_flash_reasons.join("\n");
    assert!(reasons.contains("float"), "{reasons}");
    assert!(reasons.contains("attn_mask"), "{reasons}");
    let h = r.hints.iter().find(|h| h.id == HintId::AttentionNotFlash).unwrap();
    assert_eq!(h.severity, Severity::Critical);
    assert!(h.evidence.iter().any(|e| e.contains("math attention = 90 us")), "{:?}", h.evidence);
}

#[test]
fn cpu_only_trace_reports_no_gpu() {
    let r = analyze_bytes("cpu_only.json", &read_fixture("cpu_only.json")).unwrap();
    assert_invariants(&r);
    assert!(!r.has_gpu);
    assert!(r.buckets.is_empty() && r.hints.is_empty());
    assert_eq!(r.attention.backend, Backend::None);
    assert!(r.diagnostics.iter().any(|d| d.id == DiagnosticId::NoGpuRows));
    let unknown = r.diagnostics.iter().find(|d| d.id == DiagnosticId::UnknownCategory).unwrap();
    assert!(unknown.message.contains("xpu_kernel"));
    assert_eq!((r.rank, r.world_size), (Some(1), Some(2)));
}

#[test]
fn every_input_path_gives_the_same_report() {
    for name in ["current_schema.json", "old_schema.json", "math_sdpa.json", "cpu_only.json"] {
        let bytes = read_fixture(name);
        let reference = analyze_bytes(name, &bytes).unwrap();
        let gz = gzip(&bytes);
        let half = bytes.len() / 2;
        // Multi-member gzip: two members concatenated, as `cat a.gz b.gz` writes.
        let mut multi = gzip(&bytes[..half]);
        multi.extend(gzip(&bytes[half..]));
        let variants: Vec<(&str, TraceReport)> = vec![
            ("trickle 7", analyze_with(name, Trickle { data: &bytes, n: 7 }, 1 << 20).unwrap()),
            ("chunk 16", analyze_with(name, &bytes[..], 16).unwrap()),
            ("chunk 61", analyze_with(name, &bytes[..], 61).unwrap()),
            ("chunk 1000", analyze_with(name, &bytes[..], 1000).unwrap()),
            ("gzip", analyze_bytes(name, &gz).unwrap()),
            ("gzip trickle 7 chunk 32", analyze_with(name, Trickle { data: &gz, n: 7 }, 32).unwrap()),
            ("multi-member gzip", analyze_bytes(name, &multi).unwrap()),
        ];
        for (label, r) in variants {
            assert_eq!(r, reference, "{name} via {label}");
        }
    }
}

#[test]
fn reader_tolerates_layout_variants() {
    let base = String::from_utf8(read_fixture("current_schema.json")).unwrap();
    let reference = analyze_bytes("x", base.as_bytes()).unwrap();
    // One line, no whitespace.
    let v: serde_json::Value = serde_json::from_str(&base).unwrap();
    let compact = serde_json::to_string(&v).unwrap();
    // Python-style pretty printing, metadata keys sorted after traceEvents... and a BOM.
    let pretty = format!("\u{feff}{}", serde_json::to_string_pretty(&v).unwrap());
    for (label, text) in [("compact", compact), ("pretty+bom", pretty)] {
        let r = analyze_with("x", text.as_bytes(), 64).unwrap();
        assert_eq!(r.gpu, reference.gpu, "{label}");
        assert_eq!(r.buckets, reference.buckets, "{label}");
        assert_eq!(r.device, reference.device, "{label}");
    }
}

fn golden(name: &str, actual: &str) {
    let path = fixture("../golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {} (run with UPDATE_GOLDEN=1)", path.display()));
    assert_eq!(actual, expected, "golden {name} differs (run with UPDATE_GOLDEN=1 to accept)");
}

#[test]
fn golden_reports() {
    for name in ["current_schema.json", "old_schema.json", "math_sdpa.json", "cpu_only.json"] {
        let r = analyze_bytes(name, &read_fixture(name)).unwrap();
        let mut report = tracesight::combine(vec![Ok(r)]);
        report.tool_version = "golden".into();
        let stem = name.trim_end_matches(".json");
        golden(&format!("{stem}.txt"), &tracesight::text::render(&report));
        golden(&format!("{stem}.report.json"), &(serde_json::to_string_pretty(&report).unwrap() + "\n"));
        // The JSON round-trips into the same Report (the web app and share links rely on it).
        let back: tracesight::Report = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(back, report);
    }
}

#[test]
fn gzip_trailer_is_verified() {
    let bytes = read_fixture("current_schema.json");
    let mut gz = gzip(&bytes);
    let n = gz.len();
    gz[n - 8] ^= 0xff; // the CRC-32 of the member
    let r = analyze_bytes("crc.json.gz", &gz).unwrap();
    let d = r.diagnostics.iter().find(|d| d.id == DiagnosticId::CorruptGzip).expect("a CRC mismatch is reported");
    assert!(d.message.contains("checksum"), "{}", d.message);
    // Everything before the damage was read.
    assert_eq!(r.events, 30);
    // Trailing garbage after a complete member is not silently accepted either.
    let mut junk = gzip(&bytes);
    junk.extend_from_slice(b"not gzip");
    let r = analyze_bytes("junk.json.gz", &junk);
    match r {
        Ok(r) => assert!(r.diagnostics.iter().any(|d| d.severity == Severity::Error), "{:?}", r.diagnostics),
        Err(e) => assert!(e.message.contains("gzip"), "{e}"),
    }
}

/// Row time is summed in whole nanoseconds: 0.1 + 0.2 us of kernels is 0.3 us, not the
/// 0.30000000000000004 a sum of microsecond figures gives.
#[test]
fn row_sums_are_whole_nanoseconds() {
    let rows: Vec<String> = [(10.0, 0.1), (20.0, 0.2), (30.0, 0.1), (40.0, 0.2)]
        .iter()
        .map(|(ts, dur)| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"void gemm_kernel()","pid":0,"tid":7,"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":7}}}}"#
            )
        })
        .collect();
    let trace = format!(r#"{{"traceEvents":[{}]}}"#, rows.join(","));
    let r = analyze_bytes("tiny.json", trace.as_bytes()).unwrap();
    assert_eq!(r.launch_coverage.no_launch_us, 0.6);
    assert_whole_ns(&r);
}
