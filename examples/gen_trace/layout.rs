//! The file around the events: header, Python root frame, metadata and trailer.

use crate::*;

pub const BASE_TIME_NS: u64 = 1_700_000_000_000_000_000;
pub const T0_NS: u64 = 1_419_247_332_500_684;

pub fn header(cfg: &Cfg) -> String {
    let ndev = cfg.world.clamp(1, 8);
    let mut s = String::from("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n");
    for d in 0..ndev {
        s += &format!(
            "    {{\n      \"id\": {d}, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85018279936,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, \"sharedMemPerMultiprocessor\": 233472\n    }}{}\n",
            if d + 1 < ndev { "," } else { "" }
        );
    }
    s += "  ],\n";
    let ranks: Vec<String> = (0..cfg.world).map(|r| r.to_string()).collect();
    // Kineto records distributedInfo only when torch.distributed is initialised
    if cfg.world > 1 {
        s += &format!(
        "  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {}, \"pg_count\": 1, \"pg_config\": [{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": {}, \"ranks\": [{}]}}], \"nccl_version\": \"2.21.5\"}},\n",
        cfg.rank,
        cfg.world,
        cfg.world,
        ranks.join(", ")
        );
    }
    let trace_id = format!("{:016X}{:016X}", mix(cfg.seed, 11 + cfg.rank as u64), mix(cfg.seed, 13 + cfg.rank as u64));
    s += &format!(
        "  \"cuda_runtime_version\": 12060,\n  \"with_flops\": 0,\n  \"cupti_version\": 24,\n  \"with_modules\": 1,\n  \"record_shapes\": {},\n  \"cuda_driver_version\": 12080,\n  \"profile_memory\": 0,\n  \"with_stack\": 1,\n  \"trace_id\": \"{trace_id}\",\n  \"traceEvents\": [\n",
        cfg.shapes as u8
    );
    s
}

pub fn t0(cfg: &Cfg) -> u64 {
    T0_NS + cfg.rank as u64 * 37_219
}

/// Python root frame, metadata, profiler span and the closing keys.
pub fn trailer<W: Write>(em: &mut Emitter<W>, cfg: &Cfg, start: u64, end: u64, root_py_idx: Option<u64>) {
    let prof_start = start - 2_103_000;
    if let Some(idx) = root_py_idx {
        emit_root_py(em, cfg, start, end, idx);
    }
    let pid = cfg.pid.to_string();
    let dev = cfg.device.to_string();
    em.meta("process_name", prof_start, &pid, "0", "\"name\": \"python3\"");
    em.meta("process_labels", prof_start, &pid, "0", "\"labels\": \"CPU\"");
    em.meta("process_sort_index", prof_start, &pid, "0", &format!("\"sort_index\": {pid}"));
    em.meta("process_name", prof_start, &dev, "0", "\"name\": \"python3\"");
    em.meta("process_labels", prof_start, &dev, "0", &format!("\"labels\": \"GPU {dev}\""));
    em.meta("process_sort_index", prof_start, &dev, "0", &format!("\"sort_index\": {}", 16_777_216 + cfg.device));
    for stream in [COMPUTE_STREAM, COMM_STREAM] {
        em.meta("thread_name", prof_start, &dev, &stream.to_string(), &format!("\"name\": \"stream {stream} \""));
        em.meta("thread_sort_index", prof_start, &dev, &stream.to_string(), &format!("\"sort_index\": {stream}"));
    }
    for (tid, label) in [(cfg.tid_main, "python3"), (cfg.tid_bwd, "pt_autograd_0")] {
        let t = tid.to_string();
        em.meta("thread_name", prof_start, &pid, &t, &format!("\"name\": \"thread {tid} ({label})\""));
        em.meta("thread_sort_index", prof_start, &pid, &t, &format!("\"sort_index\": {tid}"));
    }
    let b = &mut em.buf;
    b.extend_from_slice(b"  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ");
    em.t(prof_start);
    em.s(b", \"dur\": ");
    em.t(end + 1_250_000 - prof_start);
    em.s(b",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {\n      \"Op count\": 0\n    }\n  },\n");
    em.s(b"  {\n    \"name\": \"process_sort_index\", \"ph\": \"M\", \"ts\": ");
    em.t(prof_start);
    em.s(b",\n    \"pid\": \"Spans\", \"tid\": 0,\n    \"args\": {\n      \"sort_index\": 536870912\n    }\n  },\n");
    em.s(b"  {\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ");
    em.t(prof_start);
    em.s(b"\n  },\n");
    em.s(b"  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n    \"pid\": \"\", \"tid\": \"\", \"ts\": ");
    em.t(end + 1_250_000);
    em.s(b"\n  }\n  ],\n");
    em.events += 4;
    let name = format!(
        "  \"traceName\": \"/tmp/profile/rank{}/node0_{}.{}.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {BASE_TIME_NS}\n}}\n",
        cfg.rank,
        cfg.pid,
        BASE_TIME_NS / 1_000_000 + start / 1_000_000
    );
    em.s(name.as_bytes());
}

pub fn emit_root_py<W: Write>(em: &mut Emitter<W>, cfg: &Cfg, start: u64, end: u64, idx: u64) {
    let _ = write!(
        em.buf,
        "  {{\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"train.py(214): <module>\", \"pid\": {}, \"tid\": {},\n    \"ts\": ",
        cfg.pid, cfg.tid_main
    );
    em.t(start - 1_507_000);
    em.s(b", \"dur\": ");
    em.t(end + 1_100_000 - (start - 1_507_000));
    em.s(b",\n    \"args\": {\n      \"Python parent id\": null, \"Python id\": 1, \"Ev Idx\": ");
    em.u(idx);
    em.s(b"\n    }\n  },\n");
    em.events += 1;
}
