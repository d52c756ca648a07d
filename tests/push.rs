//! The push-based analysis (what the browser's worker drives from asynchronous reads) gives
//! exactly what the pull path (`analyze_any`, the CLI's) gives, however the bytes are cut: on
//! every entry of the broken-input corpus, every fixture and every shared real trace.

mod common;
#[path = "common/corpus.rs"]
mod corpus;

use common::Trickle;
use tracesight::{analyze_any, Analysis, Options, TraceError, TraceReport};

fn json(r: &Result<Vec<TraceReport>, TraceError>) -> String {
    match r {
        Ok(t) => {
            let mut t = t.clone();
            for r in &mut t {
                // Reading stops at a syntax error: how far past it was read depends on the pieces.
                if r.diagnostics.iter().any(|d| d.id.to_string() == "invalid_json") {
                    r.json_bytes = 0;
                }
                // So does where a value outgrew the limit (the diagnostic names that offset).
                if r.diagnostics.iter().any(|d| d.id.to_string() == "value_too_large") {
                    r.json_bytes = 0;
                    r.diagnostics.iter_mut().for_each(|d| d.message.clear());
                }
            }
            serde_json::to_string(&t).unwrap()
        }
        Err(e) => format!("error {:?}: {}", e.kind, e.message),
    }
}

fn push(name: &str, bytes: &[u8], piece: usize) -> Result<Vec<TraceReport>, TraceError> {
    let mut a = Analysis::new(name, Options::default());
    for (k, p) in bytes.chunks(piece.max(1)).enumerate() {
        if !a.wants_more() {
            break;
        }
        // Both ways of handing bytes over.
        if k % 2 == 0 {
            a.feed(p);
        } else {
            a.feed_vec(p.to_vec());
        }
    }
    a.finish(None)
}

fn check(name: &str, bytes: &[u8], pieces: &[usize]) {
    let want = json(&analyze_any(name, bytes, &Options::default(), &mut |_| true));
    for &piece in pieces {
        let got = json(&push(name, bytes, piece));
        assert!(
            got == want,
            "{name} in pieces of {piece}:\n got {}\nwant {}",
            &got[..got.len().min(300)],
            &want[..want.len().min(300)]
        );
        // The pull path over the same pieces agrees too.
        if piece < 1 << 20 {
            let trickle =
                json(&analyze_any(name, Trickle { data: bytes, n: piece }, &Options::default(), &mut |_| true));
            assert!(trickle == want, "{name} read {piece} bytes at a time");
        }
    }
}

#[test]
fn push_matches_pull_on_the_broken_corpus() {
    for (name, bytes) in corpus::small() {
        let pieces: &[usize] = if bytes.len() < 1 << 16 { &[7, 4096, usize::MAX] } else { &[1 << 16, usize::MAX] };
        check(name, &bytes, pieces);
    }
}

#[test]
fn push_matches_pull_on_fixtures_plain_and_gzip() {
    for e in std::fs::read_dir(common::fixture("")).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        check(&name, &bytes, &[1, 13, 4096, usize::MAX]);
        check(&name, &corpus::gzip(&bytes), &[1, 13, 4096, usize::MAX]);
    }
}

#[test]
fn push_matches_pull_on_shared_traces() {
    let Some(dir) = common::shared_traces() else { return };
    for p in common::trace_files(&dir) {
        let bytes = std::fs::read(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        check(&name, &bytes, &[1 << 16, 16 << 20]);
    }
}
