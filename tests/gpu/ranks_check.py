#!/usr/bin/env python3
"""The multi-rank check: `cupmon run -- torchrun --nproc-per-node 2 ddp_train.py`
windowed from another shell with `cupmon window`; both ranks' traces and the
combined one.

usage: ranks_check.py CUPMON RUN_DIR WINDOW_OUTPUT STEPS_WINDOW_OUTPUT"""
import glob
import gzip
import json
import os
import sys

from checks import check, exit_code

cupmon, run_dir, window_out, steps_out = sys.argv[1:5]
dumps = sorted(glob.glob(os.path.join(run_dir, "rank*")))
check("ranks: one dump per rank", len(dumps) == 2, str(dumps))
text = open(window_out).read()
for rank, d in enumerate(dumps):
    # The window `cupmon window --for` took: the first one of each rank.
    w = os.path.join(d, "window-0.json")
    if not os.path.isfile(w):
        check(f"ranks: rank {rank} wrote a window", False, text[-500:])
        continue
    events = json.load(open(w))["events"]
    kernels = sum(e["kind"] == "kernel" for e in events)
    check(f"ranks: rank {rank}'s window holds kernels and launches", kernels > 0 and any(
        e["kind"] == "cuda_runtime" for e in events), f"{kernels} kernels")
    t = json.load(gzip.open(os.path.join(d, "window-0.trace.json.gz")))
    info = t.get("distributedInfo", {})
    check(f"ranks: rank {rank}'s trace carries distributedInfo", info.get("rank") == rank
          and info.get("world_size") == 2, json.dumps(info))
    flows = [e for e in t["traceEvents"] if e.get("cat") == "ac2g"]
    check(f"ranks: rank {rank}'s trace has launch arrows", len(flows) > 0, f"{len(flows)} ends")
# One combined trace per `cupmon window` (--for, then --steps): the first is --for's.
combined = sorted(glob.glob(os.path.join(run_dir, "window-*.combined.trace.json.gz")))
check("ranks: each cupmon window wrote one combined trace", len(combined) == 2, str(combined))
if combined:
    t = json.load(gzip.open(combined[0]))
    names = sorted({e["args"]["name"] for e in t["traceEvents"]
                    if e.get("ph") == "M" and e.get("name") == "process_name"
                    and str(e["args"].get("name", "")).startswith("rank ")})
    check("ranks: the combined trace has one process per rank", names == ["rank 0", "rank 1"], str(names))
    kernels = {}
    for e in t["traceEvents"]:
        if e.get("cat") == "kernel":
            kernels[e["pid"]] = kernels.get(e["pid"], 0) + 1
    check("ranks: both ranks' kernels are in the combined trace", sorted(kernels) == [0, 1], str(kernels))
    streams = {e["args"]["name"] for e in t["traceEvents"] if e.get("name") == "thread_name"
               and str(e["args"].get("name", "")).startswith("GPU ")}
    check("ranks: GPU streams under each rank", len(streams) >= 1, str(sorted(streams))[:200])
steps_text = open(steps_out).read()
check("ranks: cupmon window --steps 3 closes after 3 steps on both ranks",
      steps_text.count("events:") == 2 and "did not come" not in steps_text, steps_text[-400:])
sys.exit(exit_code())
