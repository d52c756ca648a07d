//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;
use tracesight::report::TraceReport;
use tracesight::{analyze_reader, Options, TraceError};

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

pub fn read_fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

/// The shared real traces, or None (with a message) when the folder is absent.
pub fn shared_traces() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/traces");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIP: ../shared/traces is absent; real-trace tests skipped");
        None
    }
}

/// Every trace file under `dir` (recursively), sorted.
pub fn trace_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let n = p.to_string_lossy();
                if n.ends_with(".json") || n.ends_with(".json.gz") {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

pub fn analyze_bytes(name: &str, bytes: &[u8]) -> Result<TraceReport, TraceError> {
    analyze_reader(name, bytes, &Options::default(), &mut |_| true)
}

pub fn analyze_with<R: Read>(name: &str, r: R, chunk: usize) -> Result<TraceReport, TraceError> {
    analyze_reader(name, r, &Options { chunk_size: chunk, ..Options::default() }, &mut |_| true)
}

/// A reader that hands out at most `n` bytes per call.
pub struct Trickle<'a> {
    pub data: &'a [u8],
    pub n: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.n.min(buf.len()).min(self.data.len());
        buf[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use flate2::write::GzEncoder;
    use std::io::Write;
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The invariants every report must satisfy.
pub fn assert_invariants(r: &TraceReport) {
    let sum: f64 = r.buckets.iter().map(|b| b.pct).sum();
    if r.gpu.kernel_time_us > 0.0 {
        assert!((sum - 100.0).abs() <= 0.1, "{}: bucket shares sum to {sum}", r.file);
    } else {
        assert!(r.buckets.is_empty(), "{}: buckets without GPU time", r.file);
    }
    for b in &r.buckets {
        assert!(b.pct <= 100.0 + 1e-9 && b.pct >= 0.0, "{}: bucket {} at {}%", r.file, b.name, b.pct);
    }
    let bucket_time: f64 = r.buckets.iter().map(|b| b.time_us).sum();
    assert!(
        (bucket_time - r.gpu.kernel_time_us).abs() <= 1e-6 * r.gpu.kernel_time_us.max(1.0),
        "{}: buckets {bucket_time} vs kernel time {}",
        r.file,
        r.gpu.kernel_time_us
    );
    for k in r.top_kernels.iter().chain(&r.top_ops) {
        assert!(k.pct <= 100.0 + 1e-9, "{}: {} at {}%", r.file, k.name, k.pct);
    }
    let g = &r.gpu;
    assert!(g.busy_us <= g.span_us + 1e-9, "{}: busy {} > span {}", r.file, g.busy_us, g.span_us);
    assert!((g.idle_us - (g.span_us - g.busy_us)).abs() < 1e-6, "{}: idle != span - busy", r.file);
    assert!(g.busy_us <= g.kernel_time_us + 1e-6, "{}: busy > summed kernel time", r.file);
    assert!(g.exposed_comm_us <= g.comm_us + 1e-9 && g.overlap_pct <= 100.0 + 1e-9);
    for s in &r.steps {
        assert!(
            s.busy_us <= s.span_us + 1e-9 && (s.idle_us - (s.span_us - s.busy_us)).abs() < 1e-6,
            "{}: step {}",
            r.file,
            s.name
        );
    }
}
