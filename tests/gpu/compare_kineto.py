#!/usr/bin/env python3
"""Compare two torch.profiler traces of the same steps (plain vs under cupmon
run) and check cupmon's dump of the cupmon run. Prints PASS/FAIL lines.

usage: compare_kineto.py PLAIN_TRACE CUPMON_TRACE CUPMON_BIN DUMP_DIR PROGRAM_OUTPUT"""
import collections
import json
import subprocess
import sys

from checks import check, exit_code


def summary(path):
    t = json.load(open(path))
    ev = t["traceEvents"]
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    runtime = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"]
    flows = [e for e in ev if e.get("cat") == "ac2g"]
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    base = t.get("baseTimeNanoseconds", 0)
    return {
        "kernels": collections.Counter(
            (e["name"], str(e["args"].get("grid")), str(e["args"].get("block"))) for e in kernels),
        "runtime": collections.Counter(e["name"] for e in runtime),
        "flows_s": sum(1 for e in flows if e["ph"] == "s"),
        "flows_f": sum(1 for e in flows if e["ph"] == "f"),
        "gpu_ops": len(gpu),
        "gpu_span_ns": (min((e["ts"] for e in gpu), default=0) * 1000 + base,
                        max((e["ts"] + e["dur"] for e in gpu), default=0) * 1000 + base),
    }


def main():
    plain_path, ours_path, cupmon, dump, program_output = sys.argv[1:6]
    region = json.loads([l for l in open(program_output) if l.startswith("{")][-1])
    plain, ours = summary(plain_path), summary(ours_path)
    check("coexist: same kernels (name, grid, block) in both profiler traces",
          plain["kernels"] == ours["kernels"],
          f"{sum(plain['kernels'].values())} plain vs {sum(ours['kernels'].values())} under cupmon; "
          f"only plain {list((plain['kernels'] - ours['kernels']).items())[:3]}, "
          f"only cupmon {list((ours['kernels'] - plain['kernels']).items())[:3]}")
    check("coexist: same cuda_runtime events", plain["runtime"] == ours["runtime"],
          f"{sum(plain['runtime'].values())} vs {sum(ours['runtime'].values())}")
    check("coexist: same ac2g arrows", (plain["flows_s"], plain["flows_f"]) == (ours["flows_s"], ours["flows_f"]),
          f"plain s/f {plain['flows_s']}/{plain['flows_f']}, cupmon {ours['flows_s']}/{ours['flows_f']}")
    lo, hi = ours["gpu_span_ns"]
    check("coexist: GPU events under cupmon sit inside the profiled wall-clock region",
          region["start_ns"] - 1e9 <= lo and hi <= region["end_ns"] + 1e9,
          f"GPU {lo:.0f}..{hi:.0f}, region {region['start_ns']}..{region['end_ns']}")
    stats = subprocess.run([cupmon, "stats", dump], capture_output=True, text=True)
    check("coexist: cupmon's dump reads, zero dropped", "dropped records: 0" in stats.stdout,
          stats.stdout[-400:] + stats.stderr[-300:])
    subprocess.run([cupmon, "decode", dump, "-o", dump + ".window.json"], check=True, capture_output=True)
    w = json.load(open(dump + ".window.json"))
    starts = sorted(e["start_ns"] for e in w["events"] if e["kind"] == "kernel" and e["start_ns"] > 0)
    inside = [s for s in starts if region["start_ns"] <= s <= region["end_ns"]]
    check("coexist: cupmon recorded the profiled steps' kernels too (no gap)",
          len(inside) >= sum(ours["kernels"].values()),
          f"{len(inside)} kernels in cupmon's dump during the profiled region, "
          f"{sum(ours['kernels'].values())} in the profiler trace; {len(starts)} in the whole run")
    # The same kernels, by correlation id, at the same times: torch.profiler's clock
    # (Kineto's cycle counter, converted by Kineto) against cupmon's (CUPTI's Unix ns).
    t = json.load(open(ours_path))
    base = t.get("baseTimeNanoseconds", 0)
    torch_start = {e["args"]["correlation"]: e["ts"] * 1000 + base for e in t["traceEvents"]
                   if e.get("cat") == "kernel" and "correlation" in e.get("args", {})}
    ours_start = {e["correlation_id"]: e["start_ns"] for e in w["events"] if e["kind"] == "kernel"}
    diffs = sorted(abs(ours_start[c] - ts) for c, ts in torch_start.items() if c in ours_start)
    check("coexist: each kernel of torch.profiler's trace is in cupmon's dump by correlation id",
          len(diffs) == len(torch_start) > 0, f"{len(diffs)} of {len(torch_start)}")
    check("coexist: same kernel, same start: cupmon within 50 us of torch.profiler",
          bool(diffs) and diffs[-1] <= 50_000,
          f"{len(diffs)} kernels, |difference| median {diffs[len(diffs) // 2] / 1e3 if diffs else 0:.2f} us, "
          f"max {diffs[-1] / 1e3 if diffs else 0:.2f} us")
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    check("coexist: no long gap in cupmon's kernels around the profiled region",
          bool(gaps) and max(gaps) < 2e9, f"largest gap {max(gaps) / 1e6 if gaps else 0:.1f} ms")


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
