//! A made-up trace read at start so the optimising compiler has run before the user's trace.

/// Reads a made-up trace of about 1.7 MB; returns how many kernels it read and the report's compact
/// JSON (which the page draws once out of sight, for a like reason: see `app::draw_out_of_sight`).
/// V8 first runs wasm on its baseline compiler and recompiles a function with its optimising one,
/// in the background, only once that function has run a while: without this, the user's first trace
/// would be read by the slower code for its first second or so, with the recompiling beside it on
/// the other core (V8 keeps one compiled module per process, so a worker started later for a part
/// should find the optimised code too).
pub(super) fn warm_up() -> (u32, Vec<u8>) {
    use std::fmt::Write;
    const KERNELS: [&str; 4] = [
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t> >(flash::Flash_fwd_params)",
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    ];
    const OPS: [&str; 4] = ["aten::linear", "aten::add", "aten::_flash_attention_forward", "nccl:all_reduce"];
    let mut text = String::with_capacity(3 << 20);
    text.push_str(r#"{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0}],"traceEvents":["#);
    for i in 0..2000u64 {
        let (k, ts) = ((i % 4) as usize, 1_000_000 + i * 20);
        if i % 1000 == 0 {
            let _ = write!(
                text,
                r#"{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{ts},"dur":20000}},"#,
                i / 1000
            );
        }
        let _ = write!(
            text,
            r#"{{"ph":"X","cat":"cpu_op","name":"{}","pid":1,"tid":1,"ts":{ts}.5,"dur":10,"args":{{"External id":{i},"Sequence number":{i},"Fwd thread id":0,"Input Dims":[[4096,4096],[4096]],"Input type":["c10::BFloat16","c10::BFloat16"]}}}},"#,
            OPS[k]
        );
        let _ = write!(
            text,
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{},"dur":4,"args":{{"External id":{i},"cbid":211,"correlation":{i}}}}},"#,
            ts + 2
        );
        let _ = write!(
            text,
            r#"{{"ph":"X","cat":"kernel","name":"{}","pid":0,"tid":7,"ts":{},"dur":12.25,"args":{{"External id":{i},"queued":0,"device":0,"context":1,"stream":7,"correlation":{i},"registers per thread":128,"shared memory":0,"blocks per SM":1.5,"warps per SM":8,"grid":[132,1,1],"block":[384,1,1],"est. achieved occupancy %":12}}}},"#,
            KERNELS[k],
            ts + 8
        );
    }
    text.push_str(r#"{"ph":"i","cat":"global","name":"end","pid":1,"tid":1,"ts":1000000,"s":"g"}]}"#);
    let mut analysis = crate::analysis::Analysis::new("warm-up", crate::analysis::Options::default());
    for piece in text.as_bytes().chunks(1 << 20) {
        analysis.feed(piece);
    }
    let Ok(reports) = analysis.finish(None) else { return (0, Vec::new()) };
    let kernels = reports.iter().map(|r| r.launch.launched_kernels).sum::<u64>();
    let json = serde_json::to_vec(&crate::combine_all(vec![Ok(reports)])).unwrap_or_default();
    (kernels as u32, json)
}
