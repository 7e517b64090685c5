#!/usr/bin/env python3
"""Where CUPTI's stall starts: bench/recorder/accounting.sh over several configurations
(rates, graphs or eager launches, cupmon or the minimal CUPTI consumer, settings), its
ACCOUNT lines gathered into one table: kernels launched (the workload's own count),
recorded, dropped and unaccounted per run.

Issue 27, item 1. Runs on the GPU machine (the device tool carries .gpu: see
scripts/gpu-bundle.sh). Each run is accounting.sh's, with its own work folder, so runs
can share the GPU.

usage: python3 bench/recorder/sweep.py [--seconds S] [--parallel P] [--out DIR] CONFIG...
  CONFIG = name:consumer:mode:rate[:ENV=V[,ENV=V...]]
    consumer  floor (bench/gpu/minimal_consumer.c) or cupmon
    mode      graph (8 threads replaying their own graph of 512 varied kernels) or
              eager (8 threads, plain launches)
    rate      kernels/s over all threads; 0 = as fast as the workload goes
    ENV=V     extra environment for that run (MINCON_FLUSH_MS=1000,
              CUPMON_MAX_OUTSTANDING=4GiB, SWEEP_KEEP=1GiB for cupmon's --keep, ...)
  --parallel P runs P configurations at once (they share the GPU: say so with the figures)
Prints each run's ACCOUNT line and writes sweep.md and sweep.json to --out (default $OUT);
each run's files (meta, stats, memory samples) go to --out/NAME.
"""
import argparse
import json
import os
import subprocess
import sys
import threading

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ACCOUNTING = os.environ.get("SWEEP_ACCOUNTING", os.path.join(ROOT, "bench/recorder/accounting.sh"))


def parse_config(text):
    parts = text.split(":", 4)
    if len(parts) < 4:
        sys.exit(f"sweep: bad config {text!r}: want name:consumer:mode:rate[:ENV=V,...]")
    name, consumer, mode, rate = parts[:4]
    env = dict(kv.partition("=")[::2] for kv in parts[4].split(",")) if len(parts) == 5 and parts[4] else {}
    if consumer not in ("floor", "cupmon") or mode not in ("graph", "eager"):
        sys.exit(f"sweep: bad config {text!r}: consumer floor|cupmon, mode graph|eager")
    return {"name": name, "consumer": consumer, "mode": mode, "rate": float(rate), "env": env}


def parse_account(line):
    """`ACCOUNT label k=v ...` as a dict (numbers as ints where they are)."""
    fields = {}
    for word in line.split()[2:]:
        k, _, v = word.partition("=")
        fields[k] = int(v) if v.lstrip("-").isdigit() else v
    return fields


def run_one(cfg, seconds, out):
    env = dict(os.environ, CONSUMER=cfg["consumer"], OUT=os.path.join(out, cfg["name"]),
               ACCOUNTING_WORK=f"/tmp/sweep/{cfg['name']}", **cfg["env"])
    keep = cfg["env"].get("SWEEP_KEEP", "256MiB")
    done = subprocess.run(["bash", ACCOUNTING, str(int(cfg["rate"])), cfg["mode"], str(seconds), keep],
                          env=env, capture_output=True, text=True)
    lines = [l for l in done.stdout.splitlines() if l.startswith("ACCOUNT ")]
    row = {"name": cfg["name"], "consumer": cfg["consumer"], "mode": cfg["mode"],
           "target_rate": cfg["rate"], "env": cfg["env"], "exit": done.returncode}
    if lines:
        row.update(parse_account(lines[-1]))
    else:
        row["error"] = (done.stderr or done.stdout)[-1500:]
    return row


def table(rows, seconds, parallel):
    def n(v):
        return f"{v:,}" if isinstance(v, int) else ("-" if v is None else str(v))

    lines = [f"{seconds} s per run, {parallel} run(s) at a time on one GPU; launched = the "
             "workload's own count (warm-up included)", "",
             "| run | consumer | mode | target/s | reached/s | launched | recorded | dropped | "
             "unaccounted | longest flush ms | RSS MB (first, last, max) | settings |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        unacc = r.get("unaccounted")
        rss = [r.get(k) for k in ("rss_first_kb", "rss_last_kb", "rss_max_kb")]
        lines.append("| " + " | ".join([
            r["name"], r["consumer"], r["mode"], n(int(r["target_rate"])), n(r.get("rate")),
            n(r.get("workload_launched")), n(r.get("recorded")), n(r.get("dropped")),
            f"**{unacc:,}**" if isinstance(unacc, int) and unacc else n(unacc),
            n(r.get("flush_longest_ms")),
            ", ".join(str(round(v / 1024)) for v in rss) if all(isinstance(v, int) for v in rss) else "-",
            ",".join(f"{k}={v}" for k, v in r["env"].items()) or "defaults",
        ]) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=240)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/sweep-out"))
    ap.add_argument("configs", nargs="+")
    a = ap.parse_args()
    configs = [parse_config(c) for c in a.configs]
    seconds = int(a.seconds)
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for i in range(0, len(configs), a.parallel):
        batch = configs[i:i + a.parallel]
        results = [None] * len(batch)
        threads = [threading.Thread(target=lambda j=j, c=c: results.__setitem__(j, run_one(c, seconds, a.out)))
                   for j, c in enumerate(batch)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            rows.append(r)
            print("SWEEP " + json.dumps(r), flush=True)
        json.dump(rows, open(os.path.join(a.out, "sweep.json"), "w"), indent=1)
        open(os.path.join(a.out, "sweep.md"), "w").write(table(rows, seconds, a.parallel))
    print(table(rows, seconds, a.parallel))
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
