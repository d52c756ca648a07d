//! Share links and exports: Report + view state -> link -> the same report and state, for
//! every fixture and every shared real trace (their link sizes are printed); hostile links;
//! the Markdown summary of every fixture against its golden file; CSV tables.

mod common;
use common::*;
use tracesight::analysis::taxonomy::Bucket;
use tracesight::export::{csv, markdown};
use tracesight::share_link::{self, decode, encode, for_link, LinkError, SortCol, TableState, ViewState};
use tracesight::Report;

const FIXTURES: [&str; 4] = ["current_schema.json", "old_schema.json", "math_sdpa.json", "cpu_only.json"];

fn fixture_report(name: &str) -> Report {
    let r = analyze_bytes(name, &read_fixture(name)).unwrap();
    let mut report = tracesight::combine(vec![Ok(r)]);
    report.tool_version = "golden".into();
    report
}

/// A state that touches every field the views keep, valid for `report`.
fn busy_state(report: &Report) -> ViewState {
    let t = &report.traces[0];
    ViewState {
        trace: (report.traces.len() as u32).saturating_sub(1),
        bucket: t.top_kernels.first().map(|k| k.bucket),
        kernels: TableState {
            sort: SortCol::Mean,
            desc: false,
            query: "<script>alert(1)</script> ünïcode".into(),
            expanded: (0..t.top_kernels.len().min(3) as u32).collect(),
        },
        ops: TableState { sort: SortCol::Name, desc: true, query: String::new(), expanded: vec![] },
        buckets_open: vec![Bucket::Gemm, Bucket::Attention],
        compare: (report.traces.len() > 1).then_some((0, 1)),
        rules: "# ours\nmy fused mlp* => gemm\n".into(),
    }
}

fn round_trip(report: &Report, label: &str) -> usize {
    let mut state = busy_state(report);
    // Expanded rows index the selected trace's tables.
    let sel = &report.traces[state.trace as usize];
    state.kernels.expanded.retain(|&i| (i as usize) < sel.top_kernels.len());
    let link = encode(Some(report), &state);
    let back = decode(&format!("#{link}")).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(back.state, state, "{label}: view state");
    let got = back.report.expect("a summary link carries the report");
    assert_eq!(got, for_link(report), "{label}: report");
    // Everything the views show survives: the Markdown summary is the same from the link.
    assert_eq!(markdown::render(&got), markdown::render(report), "{label}: views differ");
    for (a, b) in got.traces.iter().zip(&report.traces) {
        assert_eq!(a.top_kernels, b.top_kernels, "{label}");
        assert_eq!(a.top_ops, b.top_ops, "{label}");
        assert_eq!(a.buckets, b.buckets, "{label}");
        assert_eq!(a.attention, b.attention, "{label}");
        assert_eq!(a.hints, b.hints, "{label}");
        // Steps without their idle causes (those need the trace; no view of a link shows them).
        let no_waits = |s: &[tracesight::report::Step]| {
            s.iter()
                .cloned()
                .map(|mut x| {
                    (x.host_wait_us, x.kernel_wait_us, x.other_wait_us) = (0.0, 0.0, 0.0);
                    x
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(a.steps, no_waits(&b.steps), "{label}");
        assert_eq!(a.diagnostics, b.diagnostics, "{label}");
        for table in csv::TABLES {
            assert_eq!(csv::table(a, table), csv::table(b, table), "{label}: {table}.csv");
        }
    }
    // Next to a ?trace= URL the link carries only the view state.
    let only = encode(None, &state);
    assert!(only.len() < 300, "{label}: state-only link of {} bytes", only.len());
    assert_eq!(decode(&only).unwrap().state, state);
    link.len()
}

#[test]
fn fixtures_round_trip_through_a_link() {
    for name in FIXTURES {
        let report = fixture_report(name);
        let n = round_trip(&report, name);
        println!("link size {name}: {n} bytes");
    }
    // Two traces: rank selection and compare pair.
    let two = tracesight::combine(vec![
        analyze_bytes("a.json", &read_fixture("current_schema.json")),
        analyze_bytes("b.json", &read_fixture("math_sdpa.json")),
    ]);
    round_trip(&two, "two traces");
}

#[test]
fn shared_traces_link_sizes() {
    let Some(dir) = shared_traces() else { return };
    let mut sizes = Vec::new();
    for path in trace_files(&dir) {
        let name = path.strip_prefix(&dir).unwrap().display().to_string();
        let r = analyze_reader(&name, std::fs::File::open(&path).unwrap());
        let report = tracesight::combine(vec![Ok(r)]);
        let n = round_trip(&report, &name);
        sizes.push((name, n));
    }
    let dlrm: Vec<_> = trace_files(&dir.join("dlrm-8rank-v100"))
        .iter()
        .map(|p| Ok(analyze_reader(&p.file_name().unwrap().to_string_lossy(), std::fs::File::open(p).unwrap())))
        .collect();
    if !dlrm.is_empty() {
        let report = tracesight::combine(dlrm);
        sizes.push(("dlrm-8rank-v100 (all 8 ranks)".into(), round_trip(&report, "dlrm 8 ranks")));
    }
    println!("{:>8}  shared trace (link fragment bytes, summary + view state)", "bytes");
    for (name, n) in &sizes {
        println!("{n:>8}  {name}");
    }
    let over: Vec<_> = sizes.iter().filter(|(_, n)| *n > 8192).collect();
    // Single traces stay under 8 KB; eight ranks in one link may be larger.
    assert!(over.iter().all(|(name, _)| name.contains("all 8 ranks")), "links over 8 KB: {over:?}");
}

fn analyze_reader(name: &str, f: std::fs::File) -> tracesight::TraceReport {
    let mut decoded = tracesight::input::decode(f).unwrap();
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut decoded, &mut bytes).unwrap();
    analyze_bytes(name, &bytes).unwrap()
}

fn pack(json: &str) -> String {
    use base64::Engine;
    use std::io::Write;
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(json.as_bytes()).unwrap();
    format!("s={}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(enc.finish().unwrap()))
}

#[test]
fn hostile_links_are_refused_with_a_reason() {
    let report = fixture_report("current_schema.json");
    let good = encode(Some(&report), &ViewState::default());
    // Truncated anywhere: an error, never a panic or a partial report.
    for cut in [1, 5, good.len() / 3, good.len() / 2, good.len() - 3] {
        assert!(decode(&good[..cut]).is_err(), "cut at {cut}");
    }
    // A character changed.
    let mut bad = good.clone().into_bytes();
    let mid = bad.len() / 2;
    bad[mid] = if bad[mid] == b'A' { b'B' } else { b'A' };
    // A character changed: an error or (rarely) another valid report, but no panic.
    let _ = decode(std::str::from_utf8(&bad).unwrap());
    // Oversized: 10 MB of data.
    let huge = format!("s={}", "A".repeat(10 << 20));
    assert!(matches!(decode(&huge), Err(LinkError::TooLong { .. })));
    // A deflate bomb: small link, huge JSON.
    let bomb = pack(&format!("{{\"v\":1,\"s\":{{}},\"r\":\"{}\"}}", "a".repeat(4 << 20)));
    assert!(bomb.len() < share_link::MAX_FRAGMENT);
    assert_eq!(decode(&bomb), Err(LinkError::TooLarge));
    // Schema: unknown keys, wrong kinds, huge counts, out-of-range indices.
    let json: serde_json::Value = {
        use base64::Engine;
        use std::io::Read;
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&good[2..]).unwrap();
        let mut s = String::new();
        flate2::read::DeflateDecoder::new(raw.as_slice()).read_to_string(&mut s).unwrap();
        serde_json::from_str(&s).unwrap()
    };
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let edits: Vec<(&str, Edit)> = vec![
        ("unknown key", Box::new(|v| v["zz"] = 1.into())),
        ("huge count", Box::new(|v| v["r"]["t"][0]["n"] = serde_json::json!(1e30))),
        ("count too large", Box::new(|v| v["r"]["t"][0]["tk"][0]["c"] = serde_json::json!(u64::MAX))),
        ("negative count", Box::new(|v| v["r"]["t"][0]["c"] = serde_json::json!(-1))),
        ("time too large", Box::new(|v| v["r"]["t"][0]["u"][0] = serde_json::json!(1e300))),
        ("selected trace", Box::new(|v| v["s"]["t"] = 7.into())),
        ("expanded row", Box::new(|v| v["s"]["k"] = serde_json::json!({"e": [100000]}))),
        ("unknown bucket", Box::new(|v| v["s"]["b"] = "evil".into())),
        ("rules that do not parse", Box::new(|v| v["s"]["r"] = "x => evil".into())),
        ("rules too long", Box::new(|v| v["s"]["r"] = format!("{} => gemm", "x".repeat(5000)).into())),
        ("rule window", Box::new(|v| v["r"]["t"][0]["rg"] = serde_json::json!([1, 2]))),
        ("control chars", Box::new(|v| v["r"]["t"][0]["f"] = "a\u{1b}[31m".into())),
        ("long name", Box::new(|v| v["r"]["t"][0]["f"] = "x".repeat(100_000).into())),
        ("no traces", Box::new(|v| v["r"]["t"] = serde_json::json!([]))),
        (
            "many rows",
            Box::new(|v| {
                let row = v["r"]["t"][0]["tk"][0].clone();
                v["r"]["t"][0]["tk"] = serde_json::Value::Array(vec![row; 5000]);
            }),
        ),
        ("version", Box::new(|v| v["v"] = 9.into())),
        ("state only in a summary link", Box::new(|v| v.as_object_mut().unwrap().remove("r").map(|_| ()).unwrap())),
    ];
    for (what, edit) in edits {
        let mut v = json.clone();
        edit(&mut v);
        let link = pack(&v.to_string());
        match decode(&link) {
            Err(LinkError::Invalid(_)) | Err(LinkError::TooLarge) => {}
            other => panic!("{what}: {other:?}"),
        }
    }
    // Script tags in names are data: accepted, and the Markdown renders them as text.
    let mut evil = report.clone();
    evil.traces[0].file = "<script>alert(1)</script>.json".into();
    evil.traces[0].top_kernels[0].name = "<img src=x onerror=alert(1)>".into();
    evil.traces[0].top_kernels[0].short = "<img src=x onerror=alert(1)>".into();
    let back = decode(&encode(Some(&evil), &ViewState::default())).unwrap().report.unwrap();
    assert_eq!(back.traces[0].file, evil.traces[0].file);
    let md = markdown::render(&back);
    // In code spans (rendered literally by GitHub and chat tools), never as bare markup.
    assert!(md.contains("`<script>alert(1)</script>.json`") && md.contains("`<img src=x onerror=alert(1)>`"), "{md}");
    assert_eq!(md.matches("<img").count(), md.matches("`<img").count(), "{md}");
}

#[test]
fn markdown_matches_golden() {
    for name in FIXTURES {
        let report = fixture_report(name);
        let md = markdown::render(&report);
        golden_file(&format!("{}.md", name.trim_end_matches(".json")), &(md + "\n"));
    }
}

fn golden_file(name: &str, actual: &str) {
    let path = fixture("../golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {} (run with UPDATE_GOLDEN=1)", path.display()));
    assert_eq!(actual, expected, "golden {name} differs (run with UPDATE_GOLDEN=1 to accept)");
}

#[test]
fn csv_tables_have_every_row() {
    let report = fixture_report("current_schema.json");
    let files = csv::files(&report);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "current_schema.buckets.csv",
            "current_schema.kernels.csv",
            "current_schema.ops.csv",
            "current_schema.steps.csv",
            "current_schema.hints.csv"
        ]
    );
    let t = &report.traces[0];
    let kernels = &files[1].1;
    assert_eq!(kernels.lines().count(), t.top_kernels.len() + 1);
    assert!(kernels.starts_with("rank,name,short,time_us,pct,count,mean_us,max_us,bucket,launching_op\r\n"));
    let buckets = &files[0].1;
    assert_eq!(buckets.lines().count(), t.buckets.len() + 1);
}

#[test]
fn mutated_links_never_panic() {
    // A poor man's fuzzer: flip, drop and insert characters of a valid link (deterministic).
    let report = fixture_report("current_schema.json");
    let good = encode(Some(&report), &busy_state(&report));
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=#%<";
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let (mut ok, mut err) = (0, 0);
    for _ in 0..3000 {
        let mut s = good.clone().into_bytes();
        for _ in 0..1 + next(3) {
            let at = 2 + next(s.len() - 2);
            match next(3) {
                0 => s[at] = alphabet[next(alphabet.len())],
                1 => {
                    s.remove(at);
                }
                _ => s.insert(at, alphabet[next(alphabet.len())]),
            }
        }
        match decode(std::str::from_utf8(&s).unwrap()) {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
    }
    println!("mutated links: {ok} still valid, {err} refused");
    assert!(err > 2500);
}
