// A small, deterministic Kineto-style trace made at test time, so the browser tests run
// without ../shared/traces: GEMM, flash attention and elementwise kernels launched by ops
// inside ProfilerStep#N, linked by correlation / External id as PyTorch writes them.
import fs from 'node:fs';
import zlib from 'node:zlib';

const KERNELS = [
  ['aten::linear', 'aten::mm', 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas', 60],
  ['aten::scaled_dot_product_attention', 'aten::_scaled_dot_product_flash_attention',
    'void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, false, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)', 40],
  ['aten::gelu', 'aten::gelu', 'void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)', 12],
  ['aten::layer_norm', 'aten::native_layer_norm', 'void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)', 9],
];

// The unfused "math" SDPA backend: GEMMs and a softmax launched under the math op.
const MATH = [
  ['aten::scaled_dot_product_attention', 'aten::_scaled_dot_product_attention_math', 'ampere_fp32_s1688gemm_fp32_128x128_ldg4_f2f_stages_32x3_nn', 35],
  ['aten::scaled_dot_product_attention', 'aten::_scaled_dot_product_attention_math', 'void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)', 20],
];

/** Writes events for `steps` ProfilerSteps; returns the JSON text. `layersPerStep` scales size;
 *  `attention: 'math'` swaps the flash kernel for the unfused math backend. */
export function makeTrace({ steps = 3, layersPerStep = 4, attention = 'flash', rank = 0, worldSize = 1 } = {}) {
  const kernels = attention === 'math' ? [KERNELS[0], ...MATH, KERNELS[2], KERNELS[3]] : KERNELS;
  const pid = 4242, tid = 4242, gpuPid = 0, stream = 7;
  const ev = [];
  let ts = 1_700_000_000_000_000; // microseconds since the epoch, like Kineto
  let corr = 1, ext = 1;
  for (let s = 0; s < steps; s++) {
    const stepStart = ts;
    const stepEvents = [];
    let gpuTs = ts + 50;
    for (let l = 0; l < layersPerStep; l++) {
      for (const [op, inner, kernel, dur] of kernels) {
        const e = ext++, c = corr++;
        const opStart = ts + 2;
        stepEvents.push({ ph: 'X', cat: 'cpu_op', name: op, pid, tid, ts: opStart, dur: 20, args: { 'External id': e, 'Sequence number': e } });
        stepEvents.push({ ph: 'X', cat: 'cpu_op', name: inner === op ? `${op}_impl` : inner, pid, tid, ts: opStart + 2, dur: 15, args: { 'External id': e + 100000 } });
        stepEvents.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid, tid, ts: opStart + 5, dur: 6, args: { 'External id': e + 100000, correlation: c, cbid: 211 } });
        gpuTs = Math.max(gpuTs, opStart + 12) + 3;
        stepEvents.push({ ph: 'X', cat: 'kernel', name: kernel, pid: gpuPid, tid: stream, ts: gpuTs, dur, args: {
          'External id': e + 100000, correlation: c, device: 0, stream, grid: [132, 1, 1], block: [128, 1, 1],
          'registers per thread': 128, 'shared memory': 0, 'blocks per SM': 1.0, 'warps per SM': 4.0, 'est. achieved occupancy %': 6 } });
        stepEvents.push({ ph: 's', id: c, pid, tid, ts: opStart + 5, cat: 'ac2g', name: 'ac2g' });
        stepEvents.push({ ph: 'f', id: c, pid: gpuPid, tid: stream, ts: gpuTs, cat: 'ac2g', name: 'ac2g', bp: 'e' });
        gpuTs += dur;
        ts = opStart + 25;
      }
    }
    ts = Math.max(ts, gpuTs) + 30; // the host waits for the GPU at the end of a step
    ev.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${s}`, pid, tid, ts: stepStart, dur: ts - stepStart, args: { 'External id': ext++ } });
    ev.push(...stepEvents);
  }
  ev.push({ name: 'process_name', ph: 'M', ts: 0, pid, tid: 0, args: { name: 'python' } });
  ev.push({ name: 'process_name', ph: 'M', ts: 0, pid: gpuPid, tid: 0, args: { name: 'GPU 0' } });
  const trace = {
    schemaVersion: 1,
    deviceProperties: [{ id: 0, name: 'NVIDIA H100 80GB HBM3', totalGlobalMem: 85031714816, computeMajor: 9, computeMinor: 0,
      maxThreadsPerBlock: 1024, maxThreadsPerMultiprocessor: 2048, regsPerBlock: 65536, warpSize: 32, sharedMemPerBlock: 49152, numSms: 132 }],
    distributedInfo: { backend: 'nccl', rank, world_size: worldSize },
    traceEvents: ev,
    traceName: 'fixture.pt.trace.json',
  };
  return JSON.stringify(trace);
}

const GEMM = 'ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn';
const ADD = 'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>';

/** `steps` copies, 1000 us apart, of tests/critical_path.rs's `sync_step`, whose path is known
 *  by hand: CPU 0-10 (the step) and 10-15 (aten::mm), the launch delay 15-25, the GEMM 25-825
 *  on stream 7, then CPU 830-1000 in five pieces (the step, aten::add, the launch call,
 *  aten::add, the step), the GPU's 825-830 being the cudaDeviceSynchronize that waited. */
export function makeSyncSteps({ steps = 1 } = {}) {
  const pid = 100, tid = 1;
  const ev = [];
  let id = 1;
  const cpu = (cat, name, ts, dur, args = {}) => ev.push({ ph: 'X', cat, name, pid, tid, ts, dur, args });
  const launch = (op, opTs, callTs, kernel, kTs, kDur) => {
    const ext = id++, corr = id++;
    cpu('cpu_op', op, opTs, 20, { 'External id': ext });
    cpu('cuda_runtime', 'cudaLaunchKernel', callTs, 5, { 'External id': ext, correlation: corr });
    ev.push({ ph: 'X', cat: 'kernel', name: kernel, pid: 0, tid: 7, ts: kTs, dur: kDur, args: { correlation: corr, device: 0, stream: 7 } });
  };
  for (let s = 0; s < steps; s++) {
    const t = s * 1000;
    cpu('user_annotation', `ProfilerStep#${s + 1}`, t, 1000);
    launch('aten::mm', t + 10, t + 15, GEMM, t + 25, 800);
    cpu('cuda_runtime', 'cudaDeviceSynchronize', t + 40, 790, { correlation: id++ });
    launch('aten::add', t + 840, t + 845, ADD, t + 855, 10);
  }
  return JSON.stringify({ schemaVersion: 1, traceEvents: ev,
    deviceProperties: [{ id: 0, name: 'NVIDIA A100', computeMajor: 8, computeMinor: 0, numSms: 108 }] });
}

export function writeFixtures(dir) {
  const json = makeTrace();
  const plain = `${dir}/fixture.pt.trace.json`;
  const gz = `${dir}/fixture-gz.pt.trace.json.gz`;
  fs.writeFileSync(plain, json);
  fs.writeFileSync(gz, zlib.gzipSync(json));
  const math = `${dir}/fixture-math.pt.trace.json`;
  fs.writeFileSync(math, makeTrace({ attention: 'math' }));
  return { plain, gz, math };
}

/**
 * A large file (about `mb` MB) for progress / cancel, written in pieces to keep memory low.
 * `trap: { parts, cut }`: the byte that cut number `cut` (from 1) of a reading in `parts` parts
 * aims at falls inside an event name holding `},{},`, which looks like the cut between two
 * events that the reading looks for there.
 */
export function writeBigTrace(path, mb, { rank, worldSize, trap } = {}) {
  const one = makeTrace({ steps: 1, layersPerStep: 200 });
  const events = one.slice(one.indexOf('"traceEvents":[') + 15, one.indexOf('],"traceName"'));
  const fd = fs.openSync(path, 'w');
  const dist = rank === undefined ? '' : `"distributedInfo":{"backend":"nccl","rank":${rank},"world_size":${worldSize}},`;
  const head = `{"schemaVersion":1,${dist}"traceEvents":[`;
  fs.writeSync(fd, head);
  // `count` copies of the events, comma-separated, written one at a time.
  const copies = (count, lead) => {
    for (let k = 0; k < count; k++) fs.writeSync(fd, (k > 0 || lead ? ',' : '') + events);
  };
  const count = Math.ceil(mb * 1e6 / (events.length + 1));
  if (trap) {
    // The name's runs of letters around the `},{},`: the first 30000 bytes, the second sized so
    // that the byte aimed at lies 2000 bytes before the `},{},` (all of it ASCII).
    const { parts, cut } = trap;
    const per = Math.ceil(count / parts);
    const [open, close] = [',{"ph":"X","cat":"cpu_op","name":"', '","pid":1,"tid":1,"ts":1,"dur":1}'];
    const before = head.length + per * cut * (events.length + 1) - 1;
    const after = per * (parts - cut) * (events.length + 1) + 2;
    const first = 30000;
    const aim = before + open.length + first - 2000;
    const second = Math.ceil(aim * parts / cut) - (before + open.length + first + 5 + close.length + after);
    copies(per * cut, false);
    fs.writeSync(fd, `${open}${'a'.repeat(first)}},{},${'a'.repeat(second)}${close}`);
    copies(per * (parts - cut), true);
  } else {
    copies(count, false);
  }
  fs.writeSync(fd, ']}');
  fs.closeSync(fd);
}
