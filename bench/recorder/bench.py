#!/usr/bin/env python3
"""The flight recorder's figures on the GPU machine (issue 13, point 6), in one run:

  launch    empty_kernel --launches 200000 under `cupmon run` (compressed segments)
            and `cupmon run --raw` (PyTorch's raw file), interleaved: time per launch,
            bytes per kernel, the writer's CPU per million records
  train     bench/gpu/torch_train.py the same way
  burst     8 threads x graphs of 512 empty kernels for 10 s, compressed: kernels/s
            and dropped records (must be 0)
  budget    a burst at a steady rate for --budget-s seconds with --keep 1GiB: the
            dump's size sampled every 2 s (never above the budget plus one segment),
            its size at the end, what was retired, `cupmon stats --last 2m`,
            `cupmon decode --last 1s` and `stats --timeline 1m` of it, timed

Results: one JSON line per measurement on stdout (prefix RESULT) and a summary table.

usage: bench.py [--parts launch,train,burst,budget] [--reps N] [--budget-s S] SCRATCH"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
cupmon = os.environ.get("CUPMON_BIN", os.path.join(root, ".gpu", "cupmon"))


def meta_of(dump):
    raw = open(os.path.join(dump, "cupti_monitor_meta.bin"), "rb").read()
    return json.loads(raw[16:])


def dump_bytes(dump):
    total = 0
    for dirpath, _, files in os.walk(dump):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(dirpath, f))
            except OSError:
                pass
    return total


def buffer_file_bytes(dump):
    segs = glob.glob(os.path.join(dump, "segments", "seg-*.cupmr"))
    raw = os.path.join(dump, "cupti_monitor_raw_buffers.bin")
    return sum(os.path.getsize(s) for s in segs) + (os.path.getsize(raw) if os.path.exists(raw) else 0)


def run_one(scratch, name, cmd, extra=()):
    out = os.path.join(scratch, name)
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.time()
    r = subprocess.run([cupmon, "run", *extra, "-o", out, "--", *cmd], capture_output=True, text=True)
    wall = time.time() - t0
    dumps = sorted(glob.glob(os.path.join(out, "*/")))
    bench = [json.loads(l[6:]) for l in r.stdout.splitlines() if l.startswith("BENCH ")]
    if r.returncode != 0 or not dumps:
        return {"name": name, "error": r.stderr[-500:], "exit": r.returncode}
    d = dumps[0].rstrip("/")
    m = meta_of(d)
    kinds = m.get("records_by_kind") or {}
    records = m.get("records", 0)
    kernels = None
    stats = subprocess.run([cupmon, "stats", d], capture_output=True, text=True).stdout
    for line in stats.splitlines():
        if "CONCURRENT_KERNEL" in line:
            digits = [t.replace(",", "") for t in line.split() if t.replace(",", "").isdigit()]
            kernels = int(digits[0]) if digits else None
    w = m.get("worker", {})
    res = {
        "name": name, "wall_s": round(wall, 3), "records": records, "kernels": kernels,
        "buffer_file_bytes": buffer_file_bytes(d), "raw_buffer_bytes": m.get("buffer_bytes"),
        "dropped": m.get("dropped_records"), "frames_stored": m.get("frames_stored"),
        "writer_cpu_ms": w.get("write_on_cpu_ms"), "writer_ms": w.get("write_ms"),
        "read_ms": w.get("read_ms"), "bench": bench[-1] if bench else None,
    }
    if kernels:
        res["bytes_per_kernel"] = round(res["buffer_file_bytes"] / kernels, 2)
    if records and res["writer_cpu_ms"] is not None:
        res["writer_cpu_s_per_M_records"] = round(res["writer_cpu_ms"] / 1000 / records * 1e6, 4)
    shutil.rmtree(out, ignore_errors=True)
    return res


def interleaved(scratch, label, cmd, reps):
    rows = []
    for rep in range(reps):
        order = [("compressed", ()), ("raw", ("--raw",))]
        if rep % 2:
            order.reverse()
        for mode, extra in order:
            r = run_one(scratch, f"{label}-{mode}-{rep}", cmd, extra)
            r.update(part=label, mode=mode, rep=rep)
            print("RESULT " + json.dumps(r), flush=True)
            rows.append(r)
    return rows


def summary(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    if not vals:
        return "n/a"
    return f"{statistics.median(vals):.4g} [{min(vals):.4g}..{max(vals):.4g}] (n={len(vals)})"


def budget_run(scratch, seconds, rate, keep, vary=False):
    out = os.path.join(scratch, "budget")
    shutil.rmtree(out, ignore_errors=True)
    ek = os.path.join(scratch, "empty_kernel")
    cmd = [cupmon, "run", "--keep", keep, "-o", out, "--", ek, "--burst", str(seconds),
           "--threads", "8", "--graph", "512", "--rate", str(rate)] + (["--vary"] if vary else [])
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []
    # The longest wait between two samples (meant to be 2 s): a longer one means this
    # driver, and likely the workload beside it, was not run for that long (the
    # machine or its processes paused), which explains a burst that ends early.
    last_tick, max_gap = time.monotonic(), 0.0
    while p.poll() is None:
        time.sleep(2)
        now = time.monotonic()
        max_gap, last_tick = max(max_gap, now - last_tick), now
        for d in glob.glob(os.path.join(out, "*/")):
            samples.append((time.time(), dump_bytes(d)))
    so, se = p.communicate()
    dumps = glob.glob(os.path.join(out, "*/"))
    res = {"part": "budget", "seconds": seconds, "exit": p.returncode, "err": se[-400:],
           "max_sample_gap_s": round(max_gap, 2), "end_unix_s": round(time.time(), 3)}
    # The workload's own count of what it launched, to set against what was recorded.
    bench_lines = [l for l in so.splitlines() if l.startswith("BENCH ")]
    if bench_lines:
        res["workload"] = json.loads(bench_lines[-1][len("BENCH "):])
    if dumps:
        d = dumps[0].rstrip("/")
        m = meta_of(d)
        res.update(final_bytes=dump_bytes(d), max_sampled_bytes=max((b for _, b in samples), default=0),
                   retired=m.get("retired"), records=m.get("records"), dropped=m.get("dropped_records"),
                   keep_bytes=m.get("keep_bytes"), starvation_flushes=m.get("starvation_flushes"))
        # Kernels the workload launched (warm-up included) that the monitor neither
        # counted (the meta's `records`: every record of the session, retired ones
        # too; the workload makes no others) nor counts as dropped: 0 when none went missing.
        w = res.get("workload")
        if w and isinstance(res.get("records"), int):
            res["unaccounted_kernels"] = w["total_kernels"] - res["records"] - (res.get("dropped") or 0)
        # The last minutes: stats of the last 2 minutes (every record of them read),
        # a trace of the last second (1.2 M kernels at full rate), the timeline.
        t0 = time.time()
        r = subprocess.run([cupmon, "stats", d, "--last", "2m"], capture_output=True, text=True)
        res["stats_last_2m_s"] = round(time.time() - t0, 2)
        res["stats_last_2m_exit"] = r.returncode
        res["stats_last_2m_head"] = r.stdout[:600] + r.stderr[-300:]
        t0 = time.time()
        last1s = os.path.join(scratch, "last1s.json")
        r = subprocess.run([cupmon, "decode", d, "--last", "1s", "-o", last1s], capture_output=True, text=True)
        res["slice_last_1s_s"] = round(time.time() - t0, 2)
        res["slice_exit"] = r.returncode
        res["slice_err"] = r.stderr[-300:]
        if r.returncode == 0:
            ev = json.load(open(last1s))["events"]
            ks = [e for e in ev if e["kind"] == "kernel"]
            res["slice_kernels"] = len(ks)
            if ks:
                res["slice_span_s"] = round((max(e["end_ns"] for e in ks) - min(e["start_ns"] for e in ks)) / 1e9, 3)
            os.unlink(last1s)
        r = subprocess.run([cupmon, "stats", d, "--timeline", "1m"], capture_output=True, text=True)
        res["timeline"] = (r.stdout + r.stderr)[-1500:]
        t0 = time.time()
        st = subprocess.run([cupmon, "stats", d], capture_output=True, text=True)
        res["stats_all_s"] = round(time.time() - t0, 2)
        res["stats_tail"] = st.stdout[-800:]
        # The report of the whole dump: the closed segments' digests, the active one's
        # records (issue 16: a report reads bins, not every record).
        t0 = time.time()
        rp = subprocess.run([cupmon, "report", d, "-o", os.path.join(scratch, "budget.html")],
                            capture_output=True, text=True)
        res["report_s"] = round(time.time() - t0, 2)
        res["report_exit"] = rp.returncode
        res["report_err"] = rp.stderr[-300:]
        seg = os.path.join(d, "segments")
        res["digests"] = len(glob.glob(os.path.join(seg, "*.digest")))
        res["digest_bytes"] = sum(os.path.getsize(f) for f in glob.glob(os.path.join(seg, "*.digest")))
        res["segments"] = len(glob.glob(os.path.join(seg, "*.cupmr")))
    print("RESULT " + json.dumps(res), flush=True)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scratch")
    ap.add_argument("--parts", default="launch,train,burst")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--budget-s", type=int, default=600)
    ap.add_argument("--budget-rate", type=int, default=1_200_000)
    # 1 GiB holds about 10 minutes of this burst compressed (1.4 B/kernel at 1.2 M
    # kernels/s, 1.7 MB/s): a 10-minute slot retires nothing at 1 GiB.
    ap.add_argument("--budget-keep", default="1GiB")
    # Launch configurations that vary per graph node: about 2x the bytes per kernel, so
    # that a 10-minute run at full rate goes well past a 1 GiB budget.
    ap.add_argument("--budget-vary", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.scratch, exist_ok=True)
    parts = a.parts.split(",")
    ek = os.path.join(a.scratch, "empty_kernel")
    if not os.path.exists(ek):
        subprocess.run(["nvcc", "-O2", "-arch=sm_90", "-std=c++17", "-o", ek,
                        os.path.join(root, "bench", "gpu", "empty_kernel.cu")], check=True)
    print(f"INFO {subprocess.run(['nvidia-smi', '--query-gpu=name,driver_version', '--format=csv,noheader'], capture_output=True, text=True).stdout.strip()}; load {os.getloadavg()}")
    table = []
    if "launch" in parts:
        rows = interleaved(a.scratch, "launch", [ek, "--launches", "200000"], a.reps)
        for mode in ("compressed", "raw"):
            sel = [r for r in rows if r["mode"] == mode and "error" not in r]
            for r in sel:
                b = r.get("bench") or {}
                if b.get("ns_per_launch") is None and b.get("seconds") and b.get("launches"):
                    b["ns_per_launch"] = b["seconds"] / b["launches"] * 1e9
                r["ns_per_launch"] = b.get("ns_per_launch")
            table.append((f"launch loop, {mode}", summary(sel, "ns_per_launch"), summary(sel, "bytes_per_kernel"),
                          summary(sel, "writer_cpu_s_per_M_records"), summary(sel, "dropped")))
    if "train" in parts:
        rows = interleaved(a.scratch, "train", ["python3", os.path.join(root, "bench", "gpu", "torch_train.py")], a.reps)
        for mode in ("compressed", "raw"):
            sel = [r for r in rows if r["mode"] == mode and "error" not in r]
            for r in sel:
                b = r.get("bench") or {}
                r["ms_per_step"] = b.get("ms_per_step")
            table.append((f"training, {mode}", summary(sel, "ms_per_step"), summary(sel, "bytes_per_kernel"),
                          summary(sel, "writer_cpu_s_per_M_records"), summary(sel, "dropped")))
    if "burst" in parts:
        r = run_one(a.scratch, "burst", [ek, "--burst", "10", "--threads", "8", "--graph", "512"])
        r.update(part="burst")
        print("RESULT " + json.dumps(r), flush=True)
        b = r.get("bench") or {}
        table.append(("burst 8x512 graphs, 10 s, compressed", f"{b.get('rate', 'n/a')} kernels/s",
                      str(r.get("bytes_per_kernel")), str(r.get("writer_cpu_s_per_M_records")),
                      f"dropped {r.get('dropped')}, stored {r.get('frames_stored')}"))
    if "budget" in parts:
        budget_run(a.scratch, a.budget_s, a.budget_rate, a.budget_keep, a.budget_vary)
    print("\n| run | time per launch (ns) / step (ms) or rate | bytes per kernel | writer CPU s per M records | dropped |")
    print("|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
