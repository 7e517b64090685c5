#!/usr/bin/env python3
"""Pathological inputs of the merge's JSON reading: time, peak RSS, outcome.

Two object-parsing cases (issue: object parsing must be linear), each run with
`cupmon merge` and with PyTorch's `merge_trace_window_into_chrome_trace`
(../shared/reference/seed_merge.py), outputs compared with trace_compare.py:
  annotations  a window with 200,000 user annotations (--annotations)
  topkeys      a CPU trace with 100,000 top-level keys (--top-keys)
Three memory cases (issue: memory stays bounded), cupmon only:
  huge_cpu_gz     an ~8 MB .gz CPU trace whose one event is --huge-gib GiB of text
  huge_window_gz  the same for the window
  dev_zero        --window /dev/zero, stopped after --zero-seconds
And, on request (--cases merge_1m), the 1M-event merge of bench/merge_bench.py with
--cupmon and --baseline (another cupmon build), interleaved, outputs compared.
Each memory case runs under an address-space cap (--cap-gib, via prlimit) so that
a build without the limit cannot take the machine's memory; its peak RSS and
its first error line are printed.

usage: bench/json_cases.py [--cupmon target/release/cupmon] [--repeat 3]
       [--cases annotations,topkeys,huge_cpu_gz,huge_window_gz,dev_zero,merge_1m]
       [--baseline OTHER_CUPMON] [--out bench/out]
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from merge_bench import BASE_NS, T0_NS, write_cpu_trace  # noqa: E402

ALL_CASES = ["annotations", "topkeys", "huge_cpu_gz", "huge_window_gz", "dev_zero"]
# Not in the default list (minutes): cupmon against --baseline on merge_bench.py's inputs.
EXTRA_CASES = ["merge_1m"]


def kernel(corr, t):
    return {"kind": "kernel", "device_id": 0, "context_id": 1, "stream_id": 7,
            "correlation_id": corr, "graph_node_id": 0, "graph_id": 0,
            "start_ns": t, "end_ns": t + 5000, "annotation": None, "name": f"k{corr % 13}"}


def write_annotation_window(path, n_annotations):
    """A small window whose user_annotations object has n_annotations keys; every
    tenth annotation is used by a CUSTOM1 external correlation of one kernel."""
    events = []
    t = T0_NS
    for corr in range(1, n_annotations // 10 + 1):
        t += 3000
        events.append({"kind": "external_correlation", "external_kind": 4,
                       "external_id": corr * 10, "correlation_id": corr})
        events.append(kernel(corr, t))
    annotations = {str(i): f"annotation {i}" for i in range(n_annotations)}
    with open(path, "w") as f:
        json.dump({"events": events, "user_annotations": annotations,
                   "thread_resource_map": {}, "start_ns": 0}, f)


def write_small_window(path, n):
    events = [kernel(c, T0_NS + c * 3000) for c in range(1, n + 1)]
    with open(path, "w") as f:
        json.dump({"events": events, "user_annotations": {}, "thread_resource_map": {}}, f)


def write_top_keys_cpu(path, n_keys, n_events):
    """A CPU trace with n_keys top-level members besides traceEvents (one of them
    repeated at the end, so the last value wins in its first place)."""
    write_cpu_trace(path + ".events", n_events)
    with open(path + ".events") as f:
        text = f.read()
    os.remove(path + ".events")
    inner = text.strip()[1:-1]
    with open(path, "w") as f:
        f.write("{\n")
        for i in range(n_keys):
            f.write(f'  "key{i}": {{"index": {i}, "text": "value {i}"}},\n')
        f.write(inner)
        f.write(',\n  "key0": "last value wins"\n}\n')


def write_huge_gz(path, prefix, suffix, gib):
    """A multi-member .gz whose text is prefix + gib GiB of 'A' + suffix, built
    from one compressed 64 MiB member repeated (a few MB on disk)."""
    block = gzip.compress(b"A" * (64 << 20), compresslevel=9)
    with open(path, "wb") as f:
        f.write(gzip.compress(prefix))
        for _ in range(gib * 16):
            f.write(block)
        f.write(gzip.compress(suffix))


def run_measured(cmd, timeout=None, cap_bytes=None):
    """(wall s, peak RSS MiB, exit code, stderr) of one child process."""
    if cap_bytes:
        cmd = ["prlimit", f"--as={cap_bytes}", "--"] + cmd
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    timer = None
    if timeout:
        import threading
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    if timer:
        timer.cancel()
    wall = time.perf_counter() - t0
    proc.stderr.close()
    return wall, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status), err


def timed_pair(a, name, cpu, win, out_dir):
    """cupmon and the reference on one input, repeated; outputs compared."""
    ours_out = os.path.join(out_dir, f"{name}_cupmon.json")
    ref_out = os.path.join(out_dir, f"{name}_pytorch.json")
    ours = [a.cupmon, "merge", "--cpu", cpu, "--window", win, "-o", ours_out,
            "--trace-name", "bench"]
    ref = [sys.executable, os.path.join(a.reference, "seed_merge.py"), "--cpu", cpu,
           "--window", win, "--out", ref_out, "--trace-name", "bench"]
    rows = {"cupmon": [], "pytorch": []}
    for _ in range(a.repeat):
        for who, cmd in (("cupmon", ours), ("pytorch", ref)):
            wall, rss, code, err = run_measured(cmd)
            if code != 0:
                sys.exit(f"{who} failed on {name}: {err.strip()}")
            rows[who].append((wall, rss))
    same = subprocess.run([sys.executable, os.path.join(a.reference, "trace_compare.py"),
                           ref_out, ours_out], capture_output=True, text=True)
    for who, runs in rows.items():
        walls = [w for w, _ in runs]
        print(f"{name:12} {who:8} median {statistics.median(walls):8.3f} s  "
              f"min..max {min(walls):.3f}..{max(walls):.3f} s  "
              f"peak RSS {max(r for _, r in runs):7.0f} MiB  ({a.repeat} runs)")
    print(f"{name:12} outputs {'equal' if same.returncode == 0 else 'DIFFER'}: "
          f"{(same.stdout.strip() or same.stderr.strip()).splitlines()[-1:]}")
    return same.returncode == 0


def memory_case(a, name, cmd, timeout=None):
    wall, rss, code, err = run_measured(cmd, timeout=timeout, cap_bytes=a.cap_gib << 30)
    first = (err.strip().splitlines() or [""])[0][:300]
    print(f"{name:14} exit {code:4}  {wall:7.2f} s  peak RSS {rss:7.0f} MiB  "
          f"(cap {a.cap_gib} GiB)  {first}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cupmon", default=os.path.join(ROOT, "target", "release", "cupmon"))
    ap.add_argument("--reference", default=os.path.join(ROOT, "..", "shared", "reference"))
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default=",".join(ALL_CASES))
    ap.add_argument("--annotations", type=int, default=200_000)
    ap.add_argument("--top-keys", type=int, default=100_000)
    ap.add_argument("--huge-gib", type=int, default=8)
    ap.add_argument("--cap-gib", type=int, default=6)
    ap.add_argument("--zero-seconds", type=float, default=20.0)
    ap.add_argument("--baseline", help="another cupmon binary for merge_1m")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--window", type=int, default=600_000)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cases = a.cases.split(",")
    ok = True
    small_cpu = os.path.join(a.out, "jc_cpu_1000.json")
    small_win = os.path.join(a.out, "jc_window_1000.json")
    if not os.path.exists(small_cpu):
        write_cpu_trace(small_cpu, 1000)
    if not os.path.exists(small_win):
        write_small_window(small_win, 1000)
    if "annotations" in cases:
        win = os.path.join(a.out, f"jc_window_annotations_{a.annotations}.json")
        if not os.path.exists(win):
            write_annotation_window(win, a.annotations)
        ok &= timed_pair(a, "annotations", small_cpu, win, a.out)
    if "topkeys" in cases:
        cpu = os.path.join(a.out, f"jc_cpu_topkeys_{a.top_keys}.json")
        if not os.path.exists(cpu):
            write_top_keys_cpu(cpu, a.top_keys, 1000)
        ok &= timed_pair(a, "topkeys", cpu, small_win, a.out)
    out = os.path.join(a.out, "jc_memory_out.json")
    if "huge_cpu_gz" in cases:
        cpu = os.path.join(a.out, f"jc_huge_cpu_{a.huge_gib}g.json.gz")
        if not os.path.exists(cpu):
            write_huge_gz(cpu, b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "',
                          b'", "ts": 1, "dur": 1}]}', a.huge_gib)
        print(f"huge_cpu_gz: {os.path.getsize(cpu) / 1e6:.1f} MB .gz, {a.huge_gib} GiB of text")
        memory_case(a, "huge_cpu_gz", [a.cupmon, "merge", "--cpu", cpu, "--window",
                                       small_win, "-o", out])
    if "huge_window_gz" in cases:
        win = os.path.join(a.out, f"jc_huge_window_{a.huge_gib}g.json.gz")
        if not os.path.exists(win):
            write_huge_gz(win, b'{"events": [{"kind": "kernel", "name": "',
                          b'"}], "user_annotations": {}}', a.huge_gib)
        print(f"huge_window_gz: {os.path.getsize(win) / 1e6:.1f} MB .gz, {a.huge_gib} GiB of text")
        memory_case(a, "huge_window_gz", [a.cupmon, "merge", "--cpu", small_cpu, "--window",
                                          win, "-o", out])
    if "dev_zero" in cases:
        memory_case(a, "dev_zero", [a.cupmon, "merge", "--cpu", small_cpu, "--window",
                                    "/dev/zero", "-o", out], timeout=a.zero_seconds)
    if "merge_1m" in cases:
        ok &= merge_1m(a)
    return 0 if ok else 1


def merge_1m(a):
    from merge_bench import write_window
    cpu = os.path.join(a.out, f"cpu_{a.events}.json")
    win = os.path.join(a.out, f"window_{a.window}.json")
    if not os.path.exists(cpu):
        write_cpu_trace(cpu, a.events)
    if not os.path.exists(win):
        write_window(win, a.window, a.events)
    builds = [("cupmon", a.cupmon)] + ([("baseline", a.baseline)] if a.baseline else [])
    rows = {name: [] for name, _ in builds}
    for _ in range(a.repeat):
        for name, binary in builds:
            out = os.path.join(a.out, f"merge_1m_{name}.json")
            cmd = [binary, "merge", "--cpu", cpu, "--window", win, "-o", out, "--trace-name", "bench"]
            wall, rss, code, err = run_measured(cmd)
            if code != 0:
                sys.exit(f"{name} failed: {err.strip()}")
            rows[name].append((wall, rss))
    for name, runs in rows.items():
        walls = [w for w, _ in runs]
        print(f"merge_1m     {name:8} median {statistics.median(walls):8.3f} s  "
              f"min..max {min(walls):.3f}..{max(walls):.3f} s  "
              f"peak RSS {max(r for _, r in runs):7.0f} MiB  ({a.repeat} runs)")
    if not a.baseline:
        return True
    same = subprocess.run([sys.executable, os.path.join(a.reference, "trace_compare.py"),
                           os.path.join(a.out, "merge_1m_baseline.json"),
                           os.path.join(a.out, "merge_1m_cupmon.json")],
                          capture_output=True, text=True)
    print(f"merge_1m     outputs {'equal' if same.returncode == 0 else 'DIFFER'}: "
          f"{(same.stdout.strip() or same.stderr.strip()).splitlines()[-1:]}")
    return same.returncode == 0


if __name__ == "__main__":
    sys.exit(main())
