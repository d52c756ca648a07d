//! Helpers shared by the integration tests.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::Read;
use std::path::PathBuf;
use tracesight::report::{Hint, TraceReport};
use tracesight::vocab::HintId;
use tracesight::{analyze_reader, Options, TraceError};

/// The hint `id` in `r`, if it fired.
pub fn find_hint(r: &TraceReport, id: HintId) -> Option<&Hint> {
    r.hints.iter().find(|h| h.id == id)
}

/// The hint `id` in `r`; fails the test, listing the hints that did fire, when it did not.
pub fn hint(r: &TraceReport, id: HintId) -> &Hint {
    find_hint(r, id).unwrap_or_else(|| panic!("{id:?} does not fire: {:?}", r.hints))
}

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// The plain-JSON fixtures, sorted.
pub fn json_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
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
    // Every GPU row is counted once by how it was launched.
    let launched = r.launch_coverage.total_us();
    assert!(
        (launched - r.gpu.kernel_time_us).abs() <= 1e-6 * r.gpu.kernel_time_us.max(1.0),
        "{}: launch coverage {launched} of {} us",
        r.file,
        r.gpu.kernel_time_us
    );
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
    // A step's idle is the device's idle inside its extent, so at most the extent less its own
    // busy time (less where another step's rows run there), and no gap counts for two steps.
    for s in &r.steps {
        assert!(
            s.busy_us <= s.span_us + 1e-9 && s.idle_us >= 0.0 && s.idle_us <= s.span_us - s.busy_us + 1e-6,
            "{}: step {}",
            r.file,
            s.name
        );
    }
    let steps_idle: f64 = r.steps.iter().map(|s| s.idle_us).sum();
    assert!(steps_idle <= g.idle_us + 0.01, "{}: the steps' idle {steps_idle} > the idle {}", r.file, g.idle_us);
    assert_whole_ns(r);
    assert_timeline(r);
}

/// Sums of row time are whole nanoseconds converted once, not sums of microsecond figures
/// (which print float noise such as 4410.474000000002).
pub fn assert_whole_ns(r: &TraceReport) {
    let (c, k, t, e) = (&r.launch_coverage, &r.copies, &r.tensor_cores, &r.bucket_evidence);
    let mut sums = vec![
        c.graph_matched_us,
        c.graph_us,
        c.op_us,
        c.no_op_us,
        c.external_only_us,
        c.no_launch_us,
        k.host_to_device_us,
        k.device_to_host_us,
        k.pageable_us,
        k.device_to_device_us,
        k.peer_to_peer_us,
        k.memset_us,
        t.tensor_core_us,
        t.simt_us,
        t.vector_us,
        t.unknown_us,
        e.op_context_us,
        e.kernel_name_us,
        e.row_kind_us,
        e.user_rule_us,
        e.unmatched_us,
    ];
    for s in r.critical_path.iter().flat_map(|p| &p.steps) {
        sums.extend([s.cpu_us, s.gpu_us, s.launch_us, s.gap_us]);
    }
    sums.extend(r.collective_bandwidth.iter().flat_map(|b| b.kinds.iter().map(|k| k.time_us)));
    sums.extend(r.efficiency.iter().flat_map(|e| e.buckets.iter().map(|b| b.time_us)));
    sums.extend(r.graphs.iter().map(|g| g.replayed_us));
    for (i, x) in sums.into_iter().enumerate() {
        assert_eq!((x * 1e3).round() / 1e3, x, "{}: sum {i} is not whole ns: {x}", r.file);
    }
}

/// The timeline's bins hold exact time: per stream, busy time summed over bins is the stream's
/// busy time; idle by cause summed over every stream is the report's idle causes; its size is
/// bounded whatever the trace.
pub fn assert_timeline(r: &TraceReport) {
    use tracesight::analysis::passes::timeline::{BINS, MAX_LANES};
    let Some(tl) = &r.timeline else {
        assert!(!r.has_gpu || r.gpu.kernel_count == 0, "{}: GPU rows but no timeline", r.file);
        return;
    };
    assert!(tl.lanes.len() <= MAX_LANES, "{}: {} lanes", r.file, tl.lanes.len());
    let mut idle = [0i64; 3];
    for lane in &tl.lanes {
        assert!(lane.bins.len() <= BINS && !lane.bins.is_empty(), "{}: {} bins", r.file, lane.bins.len());
        assert!(tl.bin_ns * lane.bins.len() as i64 >= tl.end_ns - tl.start_ns, "{}: bins do not cover", r.file);
        let busy: i64 = lane.bins.iter().map(|b| b.busy_ns()).sum();
        assert_eq!(busy as f64 / 1000.0, lane.busy_us, "{}: lane {}/{} busy", r.file, lane.device, lane.stream);
        for b in &lane.bins {
            assert!(b.busy_ns() + b.idle_ns() <= tl.bin_ns, "{}: a bin holds more than its width", r.file);
            assert!(b.top.is_none_or(|t| (t as usize) < tl.names.len()));
            idle[0] += b.host_wait;
            idle[1] += b.kernel_wait;
            idle[2] += b.other_wait;
        }
    }
    if tl.hidden_lanes == 0 && r.window.is_none() {
        // The timeline's bins hold each stream's own gaps: their sums are the per-stream figures.
        let s = &r.idle.streams;
        let sum = |f: fn(&tracesight::report::StreamIdle) -> f64| s.iter().map(f).sum::<f64>();
        let (host, kernel, other) = (sum(|x| x.host_wait_us), sum(|x| x.kernel_wait_us), sum(|x| x.other_us));
        let us = |ns: i64| ns as f64 / 1000.0;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
        assert!(
            close(us(idle[0]), host) && close(us(idle[1]), kernel) && close(us(idle[2]), other),
            "{}: timeline idle {idle:?} vs the streams' idle {:?}",
            r.file,
            (host, kernel, other)
        );
    }
    // The idle causes split the GPU's idle: they sum to it, and the steps' waits to at most it.
    let i = &r.idle;
    let causes = i.host_wait_us + i.kernel_wait_us + i.other_us;
    assert!(
        (causes - r.gpu.idle_us).abs() <= 1e-6 * r.gpu.idle_us.max(1.0) + 0.01,
        "{}: idle causes {causes} vs idle {}",
        r.file,
        r.gpu.idle_us
    );
    // A step's waits include the gap before its first row (outside its own span), so they are
    // bounded by the trace's idle, not the step's.
    let waits: f64 = r.steps.iter().map(|s| s.host_wait_us + s.kernel_wait_us + s.other_wait_us).sum();
    assert!(waits <= r.gpu.idle_us + 0.01, "{}: the steps' waits {waits} > the idle {}", r.file, r.gpu.idle_us);
    let host_ops: f64 = i.host_ops.iter().map(|h| h.time_us).sum();
    assert!(host_ops <= i.host_wait_us + 0.01, "{}: CPU during host waits {host_ops} > {}", r.file, i.host_wait_us);
}

/// A trace written event by event: CPU ops nest around launch calls on one thread, kernels run
/// on a GPU stream at the times given.
pub struct Trace {
    pub events: Vec<Value>,
    next_id: i64,
    /// CPU time cursor (us).
    pub cpu: i64,
    device: Value,
    /// (rank, world size) written as distributedInfo.
    pub dist: Option<(i64, i64)>,
}

pub const CPU_TID: i64 = 1;

impl Trace {
    pub fn new(device: &str, cc: (i64, i64)) -> Trace {
        let device = json!([{ "id": 0, "name": device, "computeMajor": cc.0, "computeMinor": cc.1, "numSms": 108 }]);
        Trace { events: Vec::new(), next_id: 1, cpu: 1_000, device, dist: None }
    }

    pub fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn span(&mut self, cat: &str, name: &str, ts: i64, dur: i64, tid: i64, ext: Option<i64>) {
        let mut e = json!({ "ph": "X", "cat": cat, "name": name, "pid": 100, "tid": tid, "ts": ts, "dur": dur });
        if let Some(x) = ext {
            e["args"] = json!({ "External id": x });
        }
        self.events.push(e);
    }

    /// An op chain (outermost first) that launches one kernel with `call`, which takes
    /// `call_dur` us on the CPU; the kernel runs at `gpu_ts` for `dur` us on `stream`.
    pub fn launch_on(&mut self, chain: &[&str], call: &str, call_dur: i64, kernels: &[(&str, i64, i64)], stream: i64) {
        let c = self.cpu;
        let depth = chain.len() as i64;
        let mut leaf_ext = None;
        for (i, op) in chain.iter().enumerate() {
            let ext = self.id();
            let i = i as i64;
            self.span("cpu_op", op, c + i, 20 + call_dur + 2 * (depth - i), CPU_TID, Some(ext));
            leaf_ext = Some(ext);
        }
        let corr = self.id();
        let call_ts = c + depth + 5;
        self.events.push(json!({ "ph": "X", "cat": "cuda_runtime", "name": call, "pid": 100, "tid": CPU_TID, "ts": call_ts, "dur": call_dur, "args": { "correlation": corr, "External id": leaf_ext.unwrap_or(0) } }));
        for (kernel, gpu_ts, dur) in kernels {
            let kind = if kernel.starts_with("Memcpy") { "gpu_memcpy" } else { "kernel" };
            self.events.push(json!({ "ph": "X", "cat": kind, "name": kernel, "pid": 0, "tid": stream, "ts": gpu_ts, "dur": dur, "args": { "correlation": corr, "device": 0, "stream": stream } }));
        }
        self.cpu = c + 40 + call_dur + 2 * depth;
    }

    pub fn launch(&mut self, chain: &[&str], kernel: &str, gpu_ts: i64, dur: i64) {
        self.launch_on(chain, "cudaLaunchKernel", 5, &[(kernel, gpu_ts, dur)], 7);
    }

    pub fn module(&mut self, name: &str, start: i64, end: i64) {
        self.events.push(json!({ "ph": "X", "cat": "python_function", "name": name, "pid": 100, "tid": CPU_TID, "ts": start, "dur": end - start }));
    }

    /// The trace file's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        let mut doc = json!({ "schemaVersion": 1, "deviceProperties": self.device, "traceEvents": self.events });
        if let Some((rank, world)) = self.dist {
            doc["distributedInfo"] = json!({ "backend": "nccl", "rank": rank, "world_size": world });
        }
        serde_json::to_vec(&doc).unwrap()
    }

    /// A kernel at GPU 0-100 us, then `call` blocking the CPU at 100-900 us inside the GPU's gap,
    /// then the next kernel at 1000 us.
    pub fn call_in_gpu_gap(call: &str, kernel: &str) -> Trace {
        Trace::call_in_gpu_gap_for(call, 800, kernel)
    }

    /// The same with the call lasting `dur` us from 100 us.
    pub fn call_in_gpu_gap_for(call: &str, dur: i64, kernel: &str) -> Trace {
        let mut t = Trace::new("NVIDIA A100", (8, 0));
        t.cpu = 0;
        t.launch(&["aten::mm"], kernel, 0, 100);
        t.span("cuda_runtime", call, 100, dur, CPU_TID, None);
        t.cpu = 950;
        t.launch(&["aten::mm"], kernel, 1_000, 100);
        t
    }

    pub fn report(&self) -> TraceReport {
        analyze_bytes("synthetic.json", &self.bytes()).unwrap()
    }
}
