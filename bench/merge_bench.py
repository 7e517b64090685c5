#!/usr/bin/env python3
"""Merge benchmark: `cupmon merge` against PyTorch's Python merge_trace_window_into_chrome_trace, same inputs, same run.

Builds a synthetic Kineto-style CPU trace (pretty-printed like torch.profiler's
export, N cpu_op events with External ids) and a trace window (kernels, runtime
launches, external correlations, copies, overhead) correlated with it, then runs
each merger REPEAT times, alternating, and reports the median wall time and the
peak RSS of each, and the ratios. Checks that the two outputs are equal.

usage: bench/merge_bench.py [--events 1000000] [--window 600000] [--repeat 3]
       [--reference ../shared/reference] [--cupmon target/release/cupmon] [--out bench/out]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BASE_NS = 1790857026000000000
T0_NS = BASE_NS + 5_122_246_000_000_000


def cpu_event(i, ts_us):
    # The shape of a torch.profiler cpu_op event (see the torch_mlp fixture).
    return (
        '  {\n'
        f'    "ph": "X", "cat": "cpu_op", "name": "aten::op_{i % 97}", "pid": 466, "tid": 498,\n'
        f'    "ts": {ts_us:.3f}, "dur": {1 + (i % 50) * 0.731:.3f},\n'
        '    "args": {\n'
        f'      "External id": {i + 1},"Record function id": 0, "Concrete Inputs": ["", ""], '
        f'"Input type": ["float", "Scalar"], "Input Strides": [[10, 1], []], '
        f'"Input Dims": [[64, 10], []], "Ev Idx": {i}\n'
        '    }\n'
        '  }'
    )


def write_cpu_trace(path, n):
    with open(path, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],\n')
        f.write(f'  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": {BASE_NS},\n  "traceEvents": [\n')
        f.write('  {"ph": "M", "name": "process_name", "pid": 466, "tid": 0, "args": {"name": "python"}},\n')
        base_us = (T0_NS - BASE_NS) / 1000.0
        for i in range(n):
            f.write(cpu_event(i, base_us + i * 2.5))
            f.write(",\n")
        f.write('  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", '
                '"tid": "PyTorch Profiler", "ts": %.3f, "dur": 10, "args": {"Op count": 0}}\n' % base_us)
        f.write('  ],\n  "traceName": "bench"\n}\n')


def write_window(path, n, n_cpu):
    rng = random.Random(7)
    events = []
    corr = 1
    t = T0_NS
    while len(events) < n:
        ext = rng.randrange(1, n_cpu + 1)
        t += rng.randrange(500, 3000)
        events.append({"kind": "cuda_runtime", "cbid": 211, "start_ns": t, "end_ns": t + 4000,
                       "process_id": 466, "thread_id": 2206639808, "correlation_id": corr,
                       "return_value": 0, "name": "cbid_211"})
        events.append({"kind": "external_correlation", "external_kind": 3, "external_id": ext,
                       "correlation_id": corr, "name": "external_correlation"})
        if corr % 10 == 0:
            events.append({"kind": "gpu_memcpy", "device_id": 0, "context_id": 1, "stream_id": 7,
                           "correlation_id": corr, "graph_node_id": 0, "graph_id": 0,
                           "runtime_correlation_id": 0, "start_ns": t + 9000, "end_ns": t + 12000,
                           "bytes": 4096, "copy_kind": 1, "src_kind": 2, "dst_kind": 3, "flags": 0,
                           "annotation": None, "name": "Memcpy"})
        else:
            events.append({"kind": "kernel", "device_id": 0, "context_id": 1, "stream_id": 7,
                           "correlation_id": corr, "graph_node_id": 0, "graph_id": 0,
                           "start_ns": t + 9000, "end_ns": t + 9000 + rng.randrange(2000, 40000),
                           "annotation": None,
                           "name": "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)"})
        corr += 1
    with open(path, "w") as f:
        json.dump({"events": events[:n], "extra_activities": [], "user_annotations": {},
                   "thread_resource_map": {}, "start_ns": 0}, f)


def run_measured(cmd):
    """Wall time (s) and peak RSS (MiB) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--window", type=int, default=600_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reference", default=os.path.join(ROOT, "..", "shared", "reference"))
    ap.add_argument("--cupmon", default=os.path.join(ROOT, "target", "release", "cupmon"))
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--gz", action="store_true", help="also time .gz input and output")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cpu = os.path.join(a.out, f"cpu_{a.events}.json")
    win = os.path.join(a.out, f"window_{a.window}.json")
    if not os.path.exists(cpu):
        print(f"generating {cpu} ...", file=sys.stderr)
        write_cpu_trace(cpu, a.events)
    if not os.path.exists(win):
        print(f"generating {win} ...", file=sys.stderr)
        write_window(win, a.window, a.events)
    print(f"CPU trace: {os.path.getsize(cpu) / 1e6:.0f} MB, {a.events} cpu_op events; "
          f"window: {os.path.getsize(win) / 1e6:.0f} MB, {a.window} events")
    pytorch_out = os.path.join(a.out, "pytorch_merged.json")
    ours_out = os.path.join(a.out, "cupmon_merged.json")
    pytorch_cmd = [sys.executable, os.path.join(a.reference, "seed_merge.py"), "--cpu", cpu,
                "--window", win, "--out", pytorch_out, "--trace-name", "bench"]
    ours_cmd = [a.cupmon, "merge", "--cpu", cpu, "--window", win, "-o", ours_out,
                "--trace-name", "bench"]
    results = {"pytorch": [], "cupmon": []}
    for _ in range(a.repeat):
        results["cupmon"].append(run_measured(ours_cmd))
        results["pytorch"].append(run_measured(pytorch_cmd))
    same = subprocess.run([sys.executable, os.path.join(a.reference, "trace_compare.py"), pytorch_out, ours_out],
                          capture_output=True, text=True)
    rows = {}
    for name, runs in results.items():
        rows[name] = (statistics.median(w for w, _ in runs), max(m for _, m in runs),
                      min(w for w, _ in runs), max(w for w, _ in runs))
    print(f"{'merger':8} {'median s':>9} {'min..max s':>14} {'peak RSS MiB':>13}")
    for name, (med, rss, lo, hi) in rows.items():
        print(f"{name:8} {med:9.2f} {lo:6.2f}..{hi:<6.2f} {rss:13.0f}")
    speedup = rows["pytorch"][0] / rows["cupmon"][0]
    mem = rows["pytorch"][1] / rows["cupmon"][1]
    print(f"cupmon is {speedup:.1f}x faster and peaks at 1/{mem:.1f} of PyTorch's merge's memory "
          f"(goals: >= 25x, <= 1/4); outputs {'equal' if same.returncode == 0 else 'DIFFER'}: "
          f"{same.stdout.strip() or same.stderr.strip()}")
    if a.gz:
        gz_out = ours_out + ".gz"
        wall, rss = run_measured([a.cupmon, "merge", "--cpu", cpu, "--window", win, "-o", gz_out])
        print(f"cupmon with .gz output: {wall:.2f} s, {rss:.0f} MiB, {os.path.getsize(gz_out) / 1e6:.0f} MB")
    return 0 if same.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
