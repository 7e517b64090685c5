#!/usr/bin/env python3
"""Where CUPTI's stall starts: the empty_kernel workload at given rates, under the minimal
CUPTI consumer (bench/gpu/minimal_consumer.c) and under `cupmon run`, each run's kernels
launched (the workload's own count), recorded, dropped and unaccounted in one table.

Issue 27, item 1. Runs on the GPU machine (the device tool carries .gpu: see
scripts/gpu-bundle.sh); builds empty_kernel and the consumer itself.

usage: python3 bench/recorder/sweep.py [--seconds S] [--parallel P] [--out DIR] CONFIG...
  CONFIG = name:consumer:mode:rate[:ENV=V[,ENV=V...]]
    consumer  floor (the minimal consumer, MINCON_COUNT=1 always) or cupmon
    mode      graph (8 threads replaying their own graph of 512 varied kernels) or
              eager (8 threads, plain launches)
    rate      kernels/s over all threads; 0 = as fast as the workload goes
    ENV=V     extra environment for that run (e.g. MINCON_FLUSH_MS=1000,
              CUPMON_... settings; ';' is not needed, commas separate)
  --parallel P runs P configurations at once (they share the GPU: say so with the figures)
Prints one line per run and writes sweep.md and sweep.json to --out (default $OUT).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GPU = os.path.join(ROOT, ".gpu")


def build(work):
    ek = os.path.join(work, "empty_kernel")
    subprocess.run(["nvcc", "-O2", "-arch=sm_90", "-std=c++17", "-o", ek,
                    os.path.join(ROOT, "bench/gpu/empty_kernel.cu")], check=True)
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    # The toolkit's layout differs between installs (as bench/gpu/run.sh finds them).
    inc = next((d for d in (f"{cuda}/targets/x86_64-linux/include", f"{cuda}/extras/CUPTI/include",
                            f"{cuda}/include") if os.path.exists(f"{d}/cupti.h")), None)
    lib = next((d for d in (os.environ.get("CUPTI_LIB", ""), f"{cuda}/targets/x86_64-linux/lib",
                            f"{cuda}/lib64", f"{cuda}/extras/CUPTI/lib64") if d and os.path.isdir(d)
                and any(n.startswith("libcupti.so") for n in os.listdir(d))), None)
    if not inc or not lib:
        sys.exit(f"sweep: CUPTI not found under {cuda} (include {inc}, lib {lib}): set CUDA_HOME or CUPTI_LIB")
    so = os.path.join(work, "libminimal_consumer.so")
    subprocess.run(["gcc", "-O2", "-Wall", "-shared", "-fPIC", "-o", so,
                    os.path.join(ROOT, "bench/gpu/minimal_consumer.c"),
                    "-I" + inc, "-I" + os.path.join(cuda, "include"), "-L" + lib, "-lcupti",
                    "-Wl,-rpath," + lib, "-lpthread"], check=True)
    return ek, so


def parse_config(text):
    parts = text.split(":", 4)
    if len(parts) < 4:
        sys.exit(f"sweep: bad config {text!r}: want name:consumer:mode:rate[:ENV=V,...]")
    name, consumer, mode, rate = parts[:4]
    env = {}
    if len(parts) == 5 and parts[4]:
        for kv in parts[4].split(","):
            k, _, v = kv.partition("=")
            env[k] = v
    if consumer not in ("floor", "cupmon") or mode not in ("graph", "eager"):
        sys.exit(f"sweep: bad config {text!r}: consumer floor|cupmon, mode graph|eager")
    return {"name": name, "consumer": consumer, "mode": mode, "rate": float(rate), "env": env}


def rss_sampler(pid_file, samples, stop):
    """The traced process's RSS every 5 s (memory flat over the run?)."""
    while not stop.is_set():
        try:
            pid = int(open(pid_file).read().split()[0])
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    samples.append((time.time(), int(line.split()[1])))
        except (OSError, ValueError, IndexError):
            pass
        stop.wait(5)


def cupmon_counts(run_dir):
    dumps = [os.path.join(run_dir, d) for d in os.listdir(run_dir)
             if os.path.isdir(os.path.join(run_dir, d))]
    dumps = [d for d in dumps if os.path.exists(os.path.join(d, "cupti_monitor_meta.bin"))]
    if not dumps:
        return {"error": "no dump"}
    raw = open(os.path.join(dumps[0], "cupti_monitor_meta.bin"), "rb").read()
    meta = json.loads(raw[16:])
    out = {"dump": dumps[0], "meta_keys": sorted(meta)}
    for k in ("records", "dropped_records", "kernels_launched", "kernels_recorded",
              "kernels_unaccounted", "launches_counted", "recoveries", "starvation_flushes",
              "flush_longest_ms", "buffer_requests_refused", "retired"):
        if k in meta:
            out[k] = meta[k]
    return out


def run_one(cfg, seconds, ek, so, work):
    name = cfg["name"]
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    graph = 512 if cfg["mode"] == "graph" else 0
    wl = [ek, "--burst", str(seconds), "--threads", "8", "--graph", str(graph),
          "--rate", str(int(cfg["rate"]))] + (["--vary"] if graph else [])
    env = dict(os.environ)
    for k in ("CUDA_INJECTION64_PATH", "LD_PRELOAD", "MINCON_INFO"):
        env.pop(k, None)
    env.update(cfg["env"])
    info = os.path.join(d, "mincon.json")
    if cfg["consumer"] == "floor":
        env.update({"CUDA_INJECTION64_PATH": so, "MINCON_INFO": info, "MINCON_COUNT": "1"})
        cmd = wl
    else:
        env["CUPMON_INJECT_LIBRARY"] = os.path.join(GPU, "libcupmon_inject.so")
        cmd = [os.path.join(GPU, "cupmon"), "run", "--keep", env.get("SWEEP_KEEP", "256MiB"),
               "-o", os.path.join(d, "run"), "--"] + wl
    t0 = time.time()
    out = open(os.path.join(d, "stdout"), "w")
    err = open(os.path.join(d, "stderr"), "w")
    p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
    samples, stop = [], threading.Event()
    pid_file = os.path.join(d, "pid")
    # The traced process: the workload itself (floor) or cupmon's child (cupmon run).
    def find_pid():
        for _ in range(50):
            try:
                kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
            except OSError:
                kids = []
            pid = kids[0] if (kids and cfg["consumer"] == "cupmon") else str(p.pid)
            if cfg["consumer"] == "floor" or kids:
                open(pid_file, "w").write(pid)
                return
            time.sleep(0.2)
    find_pid()
    th = threading.Thread(target=rss_sampler, args=(pid_file, samples, stop), daemon=True)
    th.start()
    rc = p.wait()
    stop.set()
    wall = time.time() - t0
    bench = None
    for line in open(os.path.join(d, "stdout")):
        if line.startswith("BENCH "):
            bench = json.loads(line[6:])
    row = {"name": name, "consumer": cfg["consumer"], "mode": cfg["mode"],
           "target_rate": cfg["rate"], "env": cfg["env"], "exit": rc, "wall_s": round(wall, 1)}
    if bench:
        row.update(launched=bench["total_kernels"], rate=round(bench["rate"]),
                   max_launch_call_s=bench.get("max_launch_call_s"))
    if cfg["consumer"] == "floor":
        try:
            m = json.load(open(info))
            row.update(recorded=m["kernel_records"], dropped=m["dropped_records"],
                       flush_longest_ms=m["flush_longest_ms"],
                       last_kernel_buffer_s=m["last_kernel_buffer_s"],
                       buffers=m["buffers_completed"], failures=m["failures"])
        except (OSError, ValueError, KeyError) as e:
            row["error"] = f"no consumer info: {e}"
    else:
        c = cupmon_counts(os.path.join(d, "run"))
        row["cupmon"] = c
        if "kernels_recorded" in c:
            row["recorded"] = c["kernels_recorded"]
        elif "records" in c:
            row["recorded"] = c["records"]
        row["dropped"] = c.get("dropped_records")
        row["flush_longest_ms"] = c.get("flush_longest_ms")
        try:
            row["stderr_tail"] = open(os.path.join(d, "stderr")).read()[-1500:]
        except OSError:
            pass
    if samples:
        kb = [s[1] for s in samples]
        row["rss_mb_first_last_max"] = [round(kb[min(2, len(kb) - 1)] / 1024), round(kb[-1] / 1024),
                                        round(max(kb) / 1024)]
    if row.get("launched") is not None and row.get("recorded") is not None:
        row["unaccounted"] = row["launched"] - row["recorded"] - (row.get("dropped") or 0)
    return row


def table(rows, seconds, parallel):
    lines = [f"{seconds} s per run, {parallel} run(s) at a time on one H200; launched = the "
             "workload's own count (warm-up included)", "",
             "| run | consumer | mode | target/s | reached/s | launched | recorded | dropped | "
             "unaccounted | longest flush ms | RSS MB (start, end, max) | settings |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| {} | {} | {} | {:,} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            r["name"], r["consumer"], r["mode"], int(r["target_rate"]),
            f"{r['rate']:,}" if "rate" in r else "-",
            f"{r['launched']:,}" if "launched" in r else "-",
            f"{r['recorded']:,}" if r.get("recorded") is not None else "-",
            f"{r['dropped']:,}" if r.get("dropped") is not None else "-",
            f"**{r['unaccounted']:,}**" if r.get("unaccounted") else r.get("unaccounted", "-"),
            r.get("flush_longest_ms", "-"), r.get("rss_mb_first_last_max", "-"),
            ",".join(f"{k}={v}" for k, v in r["env"].items()) or "defaults"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=240)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/sweep-out"))
    ap.add_argument("configs", nargs="+")
    a = ap.parse_args()
    configs = [parse_config(c) for c in a.configs]
    work = "/tmp/sweep"
    os.makedirs(work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    ek, so = build(work)
    rows = []
    for i in range(0, len(configs), a.parallel):
        batch = configs[i:i + a.parallel]
        print(f"sweep: starting {[c['name'] for c in batch]} at {time.strftime('%H:%M:%S')}", flush=True)
        results = [None] * len(batch)
        ths = [threading.Thread(target=lambda j=j, c=c: results.__setitem__(j, run_one(c, a.seconds, ek, so, work)))
               for j, c in enumerate(batch)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        for r in results:
            rows.append(r)
            print("SWEEP " + json.dumps(r), flush=True)
        json.dump(rows, open(os.path.join(a.out, "sweep.json"), "w"), indent=1)
        open(os.path.join(a.out, "sweep.md"), "w").write(table(rows, a.seconds, a.parallel))
    print(table(rows, a.seconds, a.parallel))


if __name__ == "__main__":
    main()
