//! The push-based analysis (what the browser's worker drives from asynchronous reads) gives
//! exactly what the pull path (`analyze_any`, the CLI's) gives, however the bytes are cut: on
//! every entry of the broken-input corpus, every fixture and every shared real trace.

mod common;
#[path = "common/corpus.rs"]
mod corpus;

use common::Trickle;
use tracesight::input::{CarriedError, InflateStage, Inflating};
use tracesight::{analyze_any, Analysis, Options, TraceError, TraceReport};

fn json(r: &Result<Vec<TraceReport>, TraceError>) -> String {
    match r {
        Ok(t) => serde_json::to_string(t).unwrap(),
        Err(e) => format!("error {:?}: {}", e.kind, e.message),
    }
}

/// `sized`: the file's size given first (the per-event lists then grow by the progress).
fn push(name: &str, bytes: &[u8], piece: usize, sized: bool) -> Result<Vec<TraceReport>, TraceError> {
    let mut a = Analysis::new(name, Options::default());
    let mut fed = 0;
    for (k, p) in bytes.chunks(piece.max(1)).enumerate() {
        if !a.wants_more() {
            break;
        }
        fed += p.len() as u64;
        if sized {
            a.progress(fed, bytes.len() as u64);
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
        for sized in [false, true] {
            let got = json(&push(name, bytes, piece, sized));
            assert!(
                got == want,
                "{name} in pieces of {piece} (size given: {sized}):\n got {}\nwant {}",
                &got[..got.len().min(300)],
                &want[..want.len().min(300)]
            );
        }
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

/// The page's two-stage reading of a .json.gz: one worker inflates (`InflateStage`), another
/// parses the inflated chunks and finishes with the inflate stage's error, if any. Falls back
/// (None) where the page would read the file in one worker: a gzip report.
fn two_stage(name: &str, bytes: &[u8], piece: usize, chunk: usize) -> Option<Result<Vec<TraceReport>, TraceError>> {
    let mut stage = InflateStage::new(chunk);
    let mut a = Analysis::new(name, Options::default());
    let mut pieces = bytes.chunks(piece.max(1));
    loop {
        match stage.pull() {
            Inflating::Bytes(b) => {
                a.feed(&b);
                if a.is_report() {
                    return None;
                }
                if !a.wants_more() {
                    return Some(a.finish(None));
                }
            }
            Inflating::NeedInput => match pieces.next() {
                Some(p) => stage.push(p.to_vec()),
                None => stage.end(None),
            },
            Inflating::End => return Some(a.finish(None)),
            Inflating::Failed(e) => {
                // The error crosses between workers as data.
                let e: CarriedError = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
                return Some(a.finish(Some(e.into_error())));
            }
        }
    }
}

fn check_two_stage(name: &str, bytes: &[u8]) -> bool {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return false;
    }
    let want = json(&push(name, bytes, 1 << 16, false));
    let mut staged = false;
    for (piece, chunk) in [(1 << 16, 4 << 20), (4096, 1000), (7, 1)] {
        if let Some(got) = two_stage(name, bytes, piece, chunk) {
            let got = json(&got);
            assert!(got == want, "{name} in two stages ({piece}, {chunk}):\n got {got:.300}\nwant {want:.300}");
            staged = true;
        }
    }
    staged
}

#[test]
fn two_stage_gzip_matches_one_worker_on_the_corpus_fixtures_and_shared_traces() {
    let mut staged = 0;
    for (name, bytes) in corpus::small() {
        staged += check_two_stage(name, &bytes) as usize;
    }
    for e in std::fs::read_dir(common::fixture("")).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let bytes = std::fs::read(&p).unwrap();
            let gz = corpus::gzip(&bytes);
            staged += check_two_stage(&p.display().to_string(), &gz) as usize;
            // Cut short, and damaged in the middle.
            staged += check_two_stage("cut.json.gz", &gz[..gz.len() * 2 / 3]) as usize;
            let mut bad = gz.clone();
            let mid = bad.len() / 2;
            bad[mid] ^= 0x55;
            staged += check_two_stage("bad.json.gz", &bad) as usize;
        }
    }
    if let Some(dir) = common::shared_traces() {
        for p in common::trace_files(&dir) {
            let bytes = std::fs::read(&p).unwrap();
            staged += check_two_stage(&p.display().to_string(), &bytes) as usize;
        }
    }
    assert!(staged >= 12, "only {staged} files went through two stages");
}
