//! The command line: text and JSON output, the seed's flags, directories, bad input.

mod common;
#[path = "common/corpus.rs"]
mod corpus;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracesight")).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch directory of one test, removed when the test ends (passed or failed).
struct Scratch(std::path::PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("tracesight-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

#[test]
fn json_output_has_the_stable_contract() {
    let f = fixture("current_schema.json");
    let o = run(&["--json", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["tool_version"].is_string());
    let t = &v["traces"][0];
    for key in [
        "file",
        "events",
        "device",
        "rank",
        "world_size",
        "gpu",
        "buckets",
        "attention",
        "top_kernels",
        "top_ops",
        "steps",
        "hints",
        "diagnostics",
    ] {
        assert!(t.get(key).is_some(), "missing {key}");
    }
    for key in
        ["kernel_time_us", "busy_us", "span_us", "idle_us", "compute_us", "comm_us", "exposed_comm_us", "overlap_pct"]
    {
        assert!(t["gpu"][key].is_number(), "gpu.{key}");
    }
    for key in ["name", "time_us", "pct", "count", "rule", "top_names"] {
        assert!(t["buckets"][0].get(key).is_some(), "buckets[].{key}");
    }
    for key in ["name", "time_us", "pct", "count", "mean_us", "max_us", "op"] {
        assert!(t["top_kernels"][0].get(key).is_some() && t["top_ops"][0].get(key).is_some(), "top rows .{key}");
    }
    for key in ["backend", "time_us", "evidence"] {
        assert!(t["attention"].get(key).is_some());
    }
    for key in ["name", "span_us", "busy_us", "idle_us"] {
        assert!(t["steps"][0].get(key).is_some());
    }
    for key in ["id", "severity", "message", "evidence"] {
        assert!(t["hints"][0].get(key).is_some());
    }
    for key in ["id", "count", "message"] {
        assert!(t["diagnostics"][0].get(key).is_some());
    }
    assert_eq!(t["file"], "current_schema.json");
    assert_eq!(t["device"]["name"], "NVIDIA H100 80GB HBM3");
    assert_eq!(t["device"]["sm_count"], 132);
}

#[test]
fn text_output_and_seed_flags() {
    let f = fixture("current_schema.json");
    let a = run(&[f.to_str().unwrap(), "--top", "3"]);
    let b = run(&["--trace_file", f.to_str().unwrap(), "--top_n", "3"]);
    assert!(a.status.success() && b.status.success());
    assert_eq!(stdout(&a), stdout(&b));
    let text = stdout(&a);
    for section in [
        "Time by bucket",
        "Attention backend: flash",
        "Top 3 kernels",
        "Top 3 ops",
        "Steps:",
        "Optimisation hints",
        "Matmul + Attention (core compute)",
    ] {
        assert!(text.contains(section), "missing {section}:\n{text}");
    }
    let dir = fixture("");
    let c = run(&["--trace_dir", dir.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap();
    assert_eq!(v["traces"].as_array().unwrap().len(), 4, "every fixture in the directory");
}

#[test]
fn directory_with_a_bad_file_reports_the_others() {
    let d = tmp("dir");
    std::fs::copy(fixture("current_schema.json"), d.join("rank3.json")).unwrap();
    std::fs::copy(fixture("cpu_only.json"), d.join("rank1.json")).unwrap();
    std::fs::write(d.join("broken.json.gz"), b"\x1f\x8b\x08\x00garbage").unwrap();
    std::fs::write(d.join("notes.txt"), b"not a trace, not picked up").unwrap();
    let o = run(&["--json", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "a failed file makes the exit code non-zero");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: Vec<&str> = v["traces"].as_array().unwrap().iter().map(|t| t["file"].as_str().unwrap()).collect();
    assert_eq!(files, vec!["rank1.json", "rank3.json"], "rank order");
    assert_eq!(v["errors"][0]["file"], "broken.json.gz");
    assert!(stderr(&o).contains("broken.json.gz"));
    assert_eq!(v["ranks"].as_array().unwrap().len(), 2);
}

fn error_for(name: &str, bytes: &[u8]) -> (Option<i32>, String) {
    let d = tmp(name);
    let p = d.join(name);
    std::fs::write(&p, bytes).unwrap();
    let o = run(&[p.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{name}: {err}");
    (o.status.code(), err)
}

#[test]
fn bad_input_gets_a_one_line_error_naming_the_file() {
    let trace = read_fixture("current_schema.json");
    let gz = gzip(&trace);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.json", vec![], "empty file"),
        ("text.json", b"hello, world".to_vec(), "not JSON at byte 0"),
        ("number.json", b"42".to_vec(), "not a trace"),
        ("object.json", br#"{"foo": [1, 2]}"#.to_vec(), "no traceEvents"),
        ("cut.json.gz", gz[..20].to_vec(), "truncated"),
        ("garbage.json.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage-garbage".to_vec(), "gzip"),
        ("binary.json", vec![0u8, 159, 146, 150, 1, 2, 3], "not JSON"),
    ];
    for (name, bytes, expect) in cases {
        let (code, err) = error_for(name, &bytes);
        assert_eq!(code, Some(1), "{name}");
        assert!(err.contains(name) && err.contains(expect), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: one line: {err}");
    }
    let (code, _) = error_for("missing-dir-entry.json", b"[]");
    assert_eq!(code, Some(0), "an empty event list is a valid (empty) trace");
    let o = run(&["/nonexistent/trace.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/trace.json"));
}

#[test]
fn truncated_trace_still_reports_with_a_warning() {
    let trace = read_fixture("current_schema.json");
    let cut = &trace[..trace.len() * 3 / 4];
    let d = tmp("cut");
    let p = d.join("cut.json");
    std::fs::write(&p, cut).unwrap();
    let o = run(&["--json", p.to_str().unwrap()]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let diags = v["traces"][0]["diagnostics"].as_array().unwrap();
    assert!(diags.iter().any(|d| d["id"] == "truncated"));
    assert!(v["traces"][0]["gpu"]["kernel_time_us"].as_f64().unwrap() > 0.0);
    assert!(stderr(&o).contains("cut short"));
}

#[test]
fn no_arguments_prints_usage() {
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Usage"));
    assert!(Path::new(env!("CARGO_BIN_EXE_tracesight")).exists());
}

#[test]
fn markdown_and_csv_outputs() {
    let f = fixture("current_schema.json");
    let dir = tmp("csv");
    let out = dir.join("tables");
    let o = run(&["--markdown", "--csv", out.to_str().unwrap(), f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(md.starts_with("# tracesight report\n"), "{md}");
    assert!(md.contains("**Attention backend: `"), "{md}");
    assert!(md.contains("### Top kernels"), "{md}");
    for table in ["buckets", "kernels", "ops", "steps", "hints"] {
        let p = out.join(format!("current_schema.{table}.csv"));
        assert!(p.is_file(), "{} missing", p.display());
    }
    // --json and --markdown are exclusive: a usage error.
    let o = run(&["--json", "--markdown", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

/// Every small entry of the broken-input corpus gives, through the CLI (which inflates on a
/// second thread), the same error or the same diagnostics as the library reading it directly.
#[test]
fn broken_corpus_same_outcome_through_the_cli() {
    let d = tmp("corpus");
    for (name, bytes) in corpus::small() {
        let p = d.join(name);
        std::fs::write(&p, &bytes).unwrap();
        let o = run(&["--json", p.to_str().unwrap()]);
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let lib = tracesight::analyze_slice(name, &bytes, &tracesight::Options::default());
        match lib {
            Err(e) => {
                assert_eq!(o.status.code(), Some(1), "{name}");
                assert_eq!(json["errors"][0]["message"], e.message, "{name}");
            }
            Ok(r) => {
                assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
                let ids: Vec<serde_json::Value> = r.diagnostics.iter().map(|d| serde_json::json!(d.id)).collect();
                let cli: Vec<serde_json::Value> =
                    json["traces"][0]["diagnostics"].as_array().unwrap().iter().map(|d| d["id"].clone()).collect();
                assert_eq!(cli, ids, "{name}");
                assert_eq!(json["traces"][0]["events"], r.events, "{name}");
            }
        }
    }
}

/// `tracesight trace | head`: the reader going away is not a crash.
#[test]
fn a_closed_stdout_is_not_a_crash() {
    let trace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("www/sample-trace.json.gz");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tracesight"))
        .args(["--top", "500", trace.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `--threads N` parses a plain-JSON file in parts (`--part-bytes` splits even small files):
/// the JSON report is the same, byte for byte, as with one thread.
fn same_report_on_threads(f: &Path) {
    let path = f.to_str().unwrap();
    let one = run(&["--json", "--threads", "1", path]);
    for threads in ["2", "3"] {
        let o = run(&["--json", "-v", "--threads", threads, "--part-bytes", "4096", path]);
        assert_eq!(one.status.code(), o.status.code(), "{path}");
        assert!(one.stdout == o.stdout, "{path}: the report differs with --threads {threads}");
        assert!(stderr(&o).contains("parsed in parts"), "{path}: not split: {}", stderr(&o));
    }
}

#[test]
fn threads_give_the_same_report_on_fixtures_and_plain_real_traces() {
    let mut files = json_fixtures();
    if let Some(dir) = shared_traces() {
        files.extend(trace_files(&dir).into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")));
    }
    assert!(files.len() >= 4);
    for f in &files {
        same_report_on_threads(f);
    }
}

#[test]
fn threads_give_the_same_report_on_gzip_fixtures_and_real_gzip_traces() {
    // A .json.gz is inflated on one thread and cut into parts as it streams to the others.
    let d = tmp("threads-gz");
    let mut files = Vec::new();
    for f in json_fixtures() {
        let g = d.join(format!("{}.gz", f.file_name().unwrap().to_str().unwrap()));
        std::fs::write(&g, gzip(&std::fs::read(&f).unwrap())).unwrap();
        files.push(g);
    }
    if let Some(dir) = shared_traces() {
        files.extend(trace_files(&dir).into_iter().filter(|p| p.to_str().is_some_and(|s| s.ends_with(".json.gz"))));
    }
    for f in &files {
        same_report_on_threads(f);
    }
}

#[test]
fn a_limit_reached_in_a_part_reads_on_from_it_with_the_report_of_one_thread() {
    // More distinct names than the name limit: the part where it is reached cannot be joined;
    // the file is read on from that part on one thread (not again from its start), and the
    // report is one thread's.
    let d = tmp("threads-limit");
    let n = tracesight::limits::MAX_NAMES + 5_000;
    let events: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"ph":"X","cat":"kernel","name":"k{i}","pid":0,"tid":7,"ts":{},"dur":3,"args":{{"stream":7}}}}"#,
                i * 10
            )
        })
        .collect();
    let text = format!("{{\"traceEvents\":[{}]}}", events.join(","));
    // The same as .json.gz (inflated again, and read on from that part); and a .json.gz whose
    // stream fails at its end (a wrong CRC), which the read-on meets too: it is then read whole
    // again, and reports the failure as one thread does.
    let mut bad_crc = gzip(text.as_bytes());
    let crc = bad_crc.len() - 8;
    bad_crc[crc] ^= 0xff;
    let files = [
        ("names.json", text.clone().into_bytes(), true),
        ("names.json.gz", gzip(text.as_bytes()), true),
        ("bad-crc.json.gz", bad_crc, false),
    ];
    for (name, bytes, reads_on) in files {
        let f = d.join(name);
        std::fs::write(&f, bytes).unwrap();
        let path = f.to_str().unwrap();
        let one = run(&["--json", "--threads", "1", path]);
        assert!(String::from_utf8_lossy(&one.stdout).contains("distinct names"), "{name}: the limit was not reached");
        let two = run(&["--json", "-v", "--threads", "2", "--part-bytes", "1000000", path]);
        assert!(one.stdout == two.stdout, "{name}: the report differs on two threads");
        assert_eq!(one.status.code(), two.status.code(), "{name}");
        let read_on = stderr(&two).contains("could not be joined");
        assert_eq!(read_on, reads_on, "{name}: {}", stderr(&two));
    }
}

#[test]
fn threads_are_not_fooled_by_event_boundaries_inside_strings() {
    // Names that hold `},{` and `}, {` as text, so that candidate cuts fall inside strings;
    // a cut file and a syntax error late in a file must read as with one thread too.
    let d = tmp("threads");
    let mut events = Vec::new();
    for i in 0..400 {
        events.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"op{i} }},{{\"ph\":\"X\"}}, {{ x","pid":1,"tid":1,"ts":{},"dur":5,"args":{{"External id":{i}}}}}"#,
            i * 10
        ));
        events.push(format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":1,"args":{{"correlation":{i},"External id":{i}}}}}"#,
            i * 10 + 1
        ));
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"k{} }},{{","pid":0,"tid":7,"ts":{},"dur":3,"args":{{"correlation":{i},"stream":7,"blocks per SM":0.{i},"est. achieved occupancy %":{}}}}}"#,
            i % 7,
            i * 10 + 2,
            i % 100
        ));
    }
    let whole = format!("{{\"traceEvents\":[{}],\"traceName\":\"x\"}}", events.join(",\n"));
    let late = whole.len() * 4 / 5 + whole[whole.len() * 4 / 5..].find("\"dur\":3").unwrap();
    let cases = [
        ("whole.json", whole.clone()),
        ("cut.json", whole[..whole.len() * 2 / 3].to_string()),
        ("bad.json", format!("{}\"dur\":3,,]{}", &whole[..late], &whole[late + 7..])),
    ];
    // The same as .json.gz (cut into parts as it inflates), and a .json.gz cut short.
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, text) in cases {
        files.push((format!("{name}.gz"), gzip(text.as_bytes())));
        files.push((name.to_string(), text.into_bytes()));
    }
    let packed = gzip(whole.as_bytes());
    files.push(("cut-gzip.json.gz".into(), packed[..packed.len() * 3 / 4].to_vec()));
    for (name, bytes) in files {
        let f = d.join(&name);
        std::fs::write(&f, bytes).unwrap();
        let path = f.to_str().unwrap();
        let one = run(&["--json", "--threads", "1", path]);
        for threads in ["2", "3"] {
            let o = run(&["--json", "--threads", threads, "--part-bytes", "2000", path]);
            assert!(one.stdout == o.stdout && one.status.code() == o.status.code(), "{name}, {threads} threads");
        }
    }
    for name in ["whole.json", "whole.json.gz"] {
        let o = run(&["--json", "-v", "--threads", "2", "--part-bytes", "2000", d.join(name).to_str().unwrap()]);
        assert!(stderr(&o).contains("parsed in parts"), "{name}: {}", stderr(&o));
    }
}

#[test]
fn no_progress_bar_when_stderr_is_not_a_terminal() {
    // Every file counts as large here; stderr is a pipe, so nothing may be drawn on it.
    let f = fixture("current_schema.json");
    for threads in ["1", "2"] {
        let o =
            run(&["--json", "--progress-from", "0", "--threads", threads, "--part-bytes", "4096", f.to_str().unwrap()]);
        assert!(o.status.success());
        assert_eq!(stderr(&o), "", "{threads} threads");
    }
}
