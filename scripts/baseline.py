#!/usr/bin/env python3
"""Python baseline for the benchmark: the seed analyser (analyze_profile.py), unchanged in cost.

    python3 scripts/baseline.py TRACE.json[.gz]

It does exactly what the seed does, in the same way: `json.load` of the whole file (through
`gzip.open(..., 'rt')` for .gz), one Python loop over every event, per-name sums, bucket sums
by substring rules, and the same printed report. Its bugs are kept too (see
../shared/seed/README.md): this file exists only to time the seed side by side with
tracesight (scripts/bench.sh), not to be correct. Do not optimise it.

Peak memory is roughly 5x the JSON size: the file text plus one dict per event.
"""
import argparse
import glob
import gzip
import json
import os
import sys
from collections import defaultdict

# op name -> bucket, by substring match in this order (the seed's rules, verbatim)
BUCKET_RULES = [
    ('matmul (GEMM)', ['aten::mm', 'aten::bmm', 'aten::addmm', 'aten::linear']),
    ('attention (SDPA/FA)', ['flash', 'scaled_dot_product', 'sdpa', 'attention', 'aten::_scaled_dot_product',
                             'FlashAttn', 'mem_efficient', 'triton_flash', 'ampere_fp16_s16816gemm_bf16']),
    ('elementwise (norm/act)', ['rms_norm', 'RMSNorm', 'aten::silu', 'aten::mul', 'aten::add', 'aten::div',
                                'aten::rsqrt', 'aten::sub', 'element_wise']),
    ('softmax', ['softmax', 'log_softmax', 'cross_entropy']),
    ('rope', ['rope', 'rotary', 'cos', 'sin']),
    ('embedding', ['embedding', 'aten::embedding']),
    ('dropout', ['dropout']),
    ('reduce (all-reduce/gather)', ['nccl', 'ncclAllReduce', 'ncclAllGather', 'ncclReduceScatter', 'allreduce',
                                    'AllReduce', 'ProcessGroupNCCL']),
    ('memory (copy/permute/view)', ['aten::to', 'aten::_to_copy', 'aten::contiguous', 'aten::permute', 'aten::view',
                                    'aten::reshape', 'aten::transpose', 'aten::clone', 'Memcpy']),
    ('optimizer', ['adam', 'AdamW', 'optim', 'clip_grad']),
]

# attention backend signatures (chrome trace event names), as in the seed
SDPA_BACKENDS = {
    'flash': ['FlashAttn', 'flash_attn', 'triton_flash', 'ampere_fp16_s16816gemm'],
    'mem_efficient': ['mem_efficient', 'MemEfficient', 'cutlassF'],
    'math': ['aten::baddbmm', 'aten::softmax'],  # naive fallback
}


def bucket_op(name: str) -> str:
    ln = name.lower()
    for bucket, patterns in BUCKET_RULES:
        for p in patterns:
            if p.lower() in ln:
                return bucket
    return 'other'


def load_trace(path):
    """.json and .json.gz: the whole file is parsed into Python objects at once."""
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        data = json.load(f)
    return data.get('traceEvents', data)


def analyze(events):
    stats = defaultdict(lambda: {'time_us': 0, 'count': 0})
    total_cuda_us = 0
    sdpa_backend_hits = defaultdict(int)
    for e in events:
        if e.get('ph') != 'X':
            continue
        cat = e.get('cat', '')
        name = e.get('name', '')
        dur = e.get('dur', 0)
        # only GPU kernels, collectives and runtime calls; Python-level rows are skipped
        if cat not in ('kernel', 'cuda_runtime', 'user_annotation', 'gpu_memcpy', 'gpu_memset', 'cpu_op'):
            continue
        if cat == 'cpu_op' and 'ncclAllReduce' not in name and 'sync' not in name.lower():
            # CPU ops are mostly dispatch overhead, except NCCL / sync
            continue
        stats[name]['time_us'] += dur
        stats[name]['count'] += 1
        if cat in ('kernel', 'gpu_memcpy', 'gpu_memset'):
            total_cuda_us += dur
        # attention backend detection
        for backend, patterns in SDPA_BACKENDS.items():
            for p in patterns:
                if p in name:
                    sdpa_backend_hits[backend] += dur
    return stats, total_cuda_us, sdpa_backend_hits


def format_us(us):
    if us > 1e6:
        return f'{us/1e6:.2f} s'
    if us > 1e3:
        return f'{us/1e3:.2f} ms'
    return f'{us:.0f} us'


def report(stats, total_cuda_us, sdpa_backend_hits, top_n=25):
    print(f'\n{"=" * 80}')
    print(f' Total CUDA time in trace: {format_us(total_cuda_us)}')
    print(f'{"=" * 80}')
    # bucket sums
    bucket_time = defaultdict(int)
    bucket_count = defaultdict(int)
    for name, s in stats.items():
        b = bucket_op(name)
        bucket_time[b] += s['time_us']
        bucket_count[b] += s['count']
    print('\n Time by bucket (% of total CUDA):')
    print(f' {"bucket":40s} {"time":>12s} {"% total":>8s} {"# calls":>8s}')
    for bucket, t in sorted(bucket_time.items(), key=lambda kv: -kv[1]):
        pct = t / max(total_cuda_us, 1) * 100
        print(f' {bucket:40s} {format_us(t):>12s} {pct:>7.1f}% {bucket_count[bucket]:>8d}')
    # attention backend
    print('\n Attention backend detection:')
    if sdpa_backend_hits:
        winner = max(sdpa_backend_hits.items(), key=lambda kv: kv[1])
        for backend, t in sorted(sdpa_backend_hits.items(), key=lambda kv: -kv[1]):
            marker = ' <- DOMINANT' if backend == winner[0] else ''
            print(f' {backend:20s}: {format_us(t):>12s}{marker}')
        if winner[0] != 'flash':
            print(' Not using FlashAttention. Expected FA2 on A100 for hidden 128/heads 16 -> suboptimal.')
            print(' Fix: use the `torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)` context in training')
    else:
        print(' (no attention kernel recognised: kernel names encoded, or SDPA not used)')
    # top ops
    print(f'\n Top {top_n} CUDA ops:')
    print(f' {"rank":>4s} {"time":>12s} {"% total":>8s} {"# calls":>8s} {"name":s}')
    sorted_ops = sorted(stats.items(), key=lambda kv: -kv[1]['time_us'])
    for i, (name, s) in enumerate(sorted_ops[:top_n], 1):
        pct = s['time_us'] / max(total_cuda_us, 1) * 100
        display_name = name if len(name) < 80 else name[:77] + '...'
        print(f' {i:>4d} {format_us(s["time_us"]):>12s} {pct:>7.1f}% {s["count"]:>8d} {display_name}')
    # hints by bucket share
    print(f'\n{"=" * 80}')
    print(' Optimisation hints (by bucket share):')
    print(f'{"=" * 80}')
    total = total_cuda_us
    reduce_pct = bucket_time.get('reduce (all-reduce/gather)', 0) / max(total, 1) * 100
    if reduce_pct > 15:
        print(f' reduce/collective is {reduce_pct:.1f}% (>15% is high) -> consider:')
        print(' - wrap gradient accumulation in `no_sync()` to avoid redundant all-reduces')
        print(' - FSDP: ZeRO-2/3 to shard optimizer state and cut the data synced per step')
    elem_pct = bucket_time.get('elementwise (norm/act)', 0) / max(total, 1) * 100
    if elem_pct > 15:
        print(f' elementwise is {elem_pct:.1f}% (>15% is high) -> memory bandwidth bound')
        print(' - a fused RMSNorm + SiLU + Add kernel (apex or triton) saves 50%+')
    mem_pct = bucket_time.get('memory (copy/permute/view)', 0) / max(total, 1) * 100
    if mem_pct > 8:
        print(f' memory movement is {mem_pct:.1f}% (>8% is high) -> layout problem')
        print(' - check how often permute/transpose/contiguous run: repeated layout changes')
    attn_pct = bucket_time.get('attention (SDPA/FA)', 0) / max(total, 1) * 100
    matmul_pct = bucket_time.get('matmul (GEMM)', 0) / max(total, 1) * 100
    print(f'\n Matmul + Attention (core compute): {matmul_pct + attn_pct:.1f}%')
    print(' Below 50% most time goes to non-core ops -> large room for optimisation')
    print(' In Llama 3 training this is typically 60-75%')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('trace', nargs='?', help='trace file (.json or .json.gz)')
    parser.add_argument('--trace_file', type=str, default=None)
    parser.add_argument('--trace_dir', type=str, default=None)
    parser.add_argument('--top_n', type=int, default=25)
    args = parser.parse_args()
    if args.trace or args.trace_file:
        files = [args.trace or args.trace_file]
    else:
        # one file per rank; like the seed, analyse only the first
        trace_dir = args.trace_dir or '.'
        files = sorted(glob.glob(os.path.join(trace_dir, '*.pt.trace.json*')))[:1]
        if not files:
            print(f'no trace file found in {trace_dir}', file=sys.stderr)
            return 1
    for f in files:
        print(f'\n[loading] {f} ({os.path.getsize(f)/1e6:.1f} MB)')
        events = load_trace(f)
        print(f'[loaded] {len(events):,} events')
        stats, total, sdpa_hits = analyze(events)
        report(stats, total, sdpa_hits, top_n=args.top_n)
    return 0


if __name__ == '__main__':
    sys.exit(main())
