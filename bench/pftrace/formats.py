#!/usr/bin/env python3
"""Size and write time of the trace formats, end to end through `cupmon`:
`.json`, `.json.gz`, `.pftrace` and `.pftrace.gz` outputs of

  merge   the 1M-event merge of bench/merge_bench.py: a 1,000,000-event
          torch.profiler-style CPU trace and a 600,000-event window
          (`cupmon merge`; the .pftrace holds both sides);
  export  a 10,000,000-event window (5M launches on one thread, 5M kernels
          and copies on 8 streams, 200 kernel names) as a standalone trace
          (`cupmon export`).

Each (case, format) runs REPEAT times in its own process, formats in a
rotating order so that drift in the machine's load spreads over all of them.
Per run: wall time, CPU time (user + system, from wait4: the machine is
shared, so wall includes waiting for a core), peak RSS and output size. The
outputs are removed after measuring (the disk is shared too). Prints one line
per run and a summary (median, min-max); --check compares each .pftrace with
the JSON trace of the same run (tests/python/pftrace_compare.py, needs the
perfetto package).

usage: bench/pftrace/formats.py [--cases merge,export] [--repeat 5] [--repeat-export 3]
       [--formats json,json.gz,pftrace,pftrace.gz] [--window-events 10000000]
       [--cupmon target/release/cupmon] [--out bench/out] [--check [--python PY]]
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import merge_bench  # noqa: E402  (the 1M-event merge's inputs)

T0 = merge_bench.T0_NS
STREAMS = [7] + [13 + i for i in range(7)]


def kernel_names():
    ops = ["elementwise_kernel", "reduce_kernel", "vectorized_elementwise_kernel", "sgemm_128x64_nn",
           "softmax_warp_forward", "layer_norm_kernel", "index_elementwise_kernel", "cat_batched_copy"]
    fns = ["FillFunctor<float>", "AddFunctor<c10::Half>", "MulFunctor<float>", "GeluCUDAKernelImpl",
           "CUDAFunctor_add<float>", "ReduceOp<float, MeanOps<float, float>, unsigned int, float, 4>"]
    names = []
    for i in range(200):
        op, fn = ops[i % len(ops)], fns[(i // len(ops)) % len(fns)]
        names.append([f"ampere_{op}_{i}",
                      f"void at::native::{op}<{128 << (i % 3)}, at::native::{fn}>(int, {i})",
                      f"void at::native::(anonymous namespace)::{op}<at::native::{fn}, "
                      f"at::detail::Array<char*, {i % 5 + 1}>, {i}>(int, at::native::{fn})"][i % 3])
    return names


def write_big_window(path, n):
    """A window of `n` events, streamed to the file (a list of 10M dicts
    would not fit): launches on one thread, each followed by its kernel (a
    copy every 10th) on one of 8 streams; no overlap on a stream."""
    rng = random.Random(11)
    names = kernel_names()
    free = {s: T0 for s in STREAMS}
    t = T0
    with open(path, "w") as f:
        f.write('{"events": [\n')
        corr = 0
        written = 0
        while written < n:
            corr += 1
            t += rng.randrange(500, 3000)
            if written:
                f.write(",\n")
            f.write('{"kind": "cuda_runtime", "cbid": 211, "start_ns": %d, "end_ns": %d, '
                    '"process_id": 466, "thread_id": 2206639808, "correlation_id": %d, '
                    '"return_value": 0, "name": "cbid_211"}' % (t, t + 4000, corr))
            written += 1
            if written == n:
                break
            s = STREAMS[corr % len(STREAMS)]
            start = max(free[s], t + 9000)
            end = start + rng.randrange(2000, 40000)
            free[s] = end
            if corr % 10 == 0:
                f.write(',\n{"kind": "gpu_memcpy", "device_id": 0, "context_id": 1, "stream_id": %d, '
                        '"correlation_id": %d, "graph_node_id": 0, "graph_id": 0, '
                        '"runtime_correlation_id": 0, "start_ns": %d, "end_ns": %d, "bytes": 4096, '
                        '"copy_kind": 1, "src_kind": 2, "dst_kind": 3, "flags": 0, "annotation": null, '
                        '"name": "Memcpy"}' % (s, corr, start, end))
            else:
                f.write(',\n{"kind": "kernel", "device_id": 0, "context_id": 1, "stream_id": %d, '
                        '"correlation_id": %d, "graph_node_id": 0, "graph_id": 0, "start_ns": %d, '
                        '"end_ns": %d, "annotation": null, "name": "%s"}'
                        % (s, corr, start, end, names[rng.randrange(len(names))]))
            written += 1
        f.write('\n], "extra_activities": [], "user_annotations": {}, "thread_resource_map": {}, '
                '"start_ns": 0}\n')


def run_measured(cmd):
    """Wall s, CPU s, peak RSS MiB of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def summary(rows, key):
    vals = [r[key] for r in rows]
    return statistics.median(vals), min(vals), max(vals)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="merge,export")
    ap.add_argument("--formats", default="json,json.gz,pftrace,pftrace.gz")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each format, merge")
    ap.add_argument("--repeat-export", type=int, default=3, help="runs of each format, export")
    ap.add_argument("--events", type=int, default=1_000_000, help="CPU events of the merge")
    ap.add_argument("--window", type=int, default=600_000, help="window events of the merge")
    ap.add_argument("--window-events", type=int, default=10_000_000, help="events of the exported window")
    ap.add_argument("--cupmon", default=os.path.join(ROOT, "target", "release", "cupmon"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out"))
    ap.add_argument("--check", action="store_true", help="compare each .pftrace with the JSON (slow)")
    venv = os.path.join(ROOT, "target", "python-venv", "bin", "python")
    ap.add_argument("--python", default=venv if os.path.exists(venv) else sys.executable,
                    help="interpreter with the perfetto package, for --check")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    formats = a.formats.split(",")
    load = lambda: " ".join(open("/proc/loadavg").read().split()[:3])  # noqa: E731
    print(f"# {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.uname().machine} "
          f"{os.cpu_count()} cores, load {load()}; {a.cupmon}", flush=True)
    cases = []
    if "merge" in a.cases.split(","):
        cpu = os.path.join(a.out, f"cpu_{a.events}.json")
        win = os.path.join(a.out, f"window_{a.window}.json")
        if not os.path.exists(cpu):
            merge_bench.write_cpu_trace(cpu, a.events)
        if not os.path.exists(win):
            merge_bench.write_window(win, a.window, a.events)
        cases.append(("merge", a.repeat,
                      lambda out: [a.cupmon, "merge", "--cpu", cpu, "--window", win, "-o", out,
                                   "--trace-name", "bench"]))
    if "export" in a.cases.split(","):
        big = os.path.join(a.out, f"window_big_{a.window_events}.json")
        if not os.path.exists(big):
            print(f"# generating {big} ...", file=sys.stderr, flush=True)
            write_big_window(big, a.window_events)
        cases.append(("export", a.repeat_export,
                      lambda out: [a.cupmon, "export", "--window", big, "-o", out,
                                   "--trace-name", "bench"]))
    results = {}
    for case, repeat, cmd in cases:
        for r in range(repeat):
            for i in range(len(formats)):
                fmt = formats[(i + r) % len(formats)]
                out = os.path.join(a.out, f"{case}.{fmt}")
                wall, cpu_s, rss = run_measured(cmd(out))
                size = os.path.getsize(out)
                row = {"wall": wall, "cpu": cpu_s, "rss": rss, "bytes": size}
                results.setdefault((case, fmt), []).append(row)
                print(f"case={case} format={fmt} run={r + 1} wall_s={wall:.2f} cpu_s={cpu_s:.2f} "
                      f"peak_rss_mib={rss:.0f} bytes={size} load={load()}", flush=True)
                if a.check and fmt.startswith("pftrace") and r == 0:
                    ref = os.path.join(a.out, f"{case}.check.json")
                    run_measured(cmd(ref))
                    c = subprocess.run([a.python, os.path.join(ROOT, "tests", "python", "pftrace_compare.py"),
                                        ref, out], capture_output=True, text=True)
                    print(f"# check {case}.{fmt}: {'same as the JSON' if c.returncode == 0 else 'DIFFERS'} "
                          f"{c.stdout[-400:] if c.returncode else ''}{c.stderr[-400:]}", flush=True)
                    os.remove(ref)
                os.remove(out)
    print("#")
    print(f"# {'case':7} {'format':11} {'wall s (median, min-max)':26} {'CPU s':22} "
          f"{'MB':>8} {'x json':>7} {'peak RSS MiB':>12}")
    for (case, fmt), rows in results.items():
        w, c = summary(rows, "wall"), summary(rows, "cpu")
        size = statistics.median(r["bytes"] for r in rows)
        ratio = statistics.median(r["bytes"] for r in results[(case, "json")]) / size \
            if (case, "json") in results else float("nan")
        print(f"# {case:7} {fmt:11} {w[0]:7.2f} ({w[1]:.2f}-{w[2]:.2f}){'':8} "
              f"{c[0]:7.2f} ({c[1]:.2f}-{c[2]:.2f}) {size / 1e6:8.1f} {ratio:7.2f} "
              f"{max(r['rss'] for r in rows):12.0f}")
    print(f"# done, load {load()}")


if __name__ == "__main__":
    main()
