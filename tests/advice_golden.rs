//! The advice on every shared real trace, kept as a golden file per trace
//! (tests/golden/advice/*.txt): any change to what a user is told on a real trace shows in
//! review as a diff of these files, read by hand before it is accepted (UPDATE_GOLDEN=1).
//! Skipped with a message when ../shared/traces is absent.

mod common;
use common::*;
use std::fmt::Write;
use tracesight::report::TraceReport;

/// What a user acts on: the workload, the attention verdict, every hint with its stake,
/// evidence and fix.
fn advice(r: &TraceReport) -> String {
    let mut s = String::new();
    let a = &r.attention;
    writeln!(s, "training: {}", r.training).unwrap();
    writeln!(s, "attention: {} ({:.0} of {:.0} us)", a.backend, a.time_us, a.total_us).unwrap();
    for h in &r.hints {
        writeln!(s, "\n[{}] {} ({:.0} us at stake): {}", h.severity, h.id, h.stake_us, h.message).unwrap();
        for e in &h.evidence {
            writeln!(s, "    {e}").unwrap();
        }
        writeln!(s, "  -> {}", h.fix).unwrap();
    }
    s
}

#[test]
fn advice_on_each_shared_trace_is_the_reviewed_one() {
    let Some(dir) = shared_traces() else { return };
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/advice");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut differ = Vec::new();
    for path in trace_files(&dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let r = analyze_bytes(&name, &std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{e}"));
        let file = golden.join(name.trim_end_matches(".gz").trim_end_matches(".json").to_string() + ".txt");
        let actual = advice(&r);
        if update {
            std::fs::write(&file, &actual).unwrap();
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(actual.as_str()) {
            differ.push(format!("{name} (golden {})", file.display()));
        }
    }
    assert!(differ.is_empty(), "advice changed on {differ:?}: review it, then run with UPDATE_GOLDEN=1");
}
