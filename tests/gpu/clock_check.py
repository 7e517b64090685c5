#!/usr/bin/env python3
"""cupmon.torch.profile from plain Python (not under `cupmon run`), where
torch.profiler's Kineto replaces CUPTI's clock with a cycle counter for every
record, cupmon's too: the merged trace must still put each GPU op at its real
time. Checked against independent sources in the same trace: each kernel starts
after its launching runtime call (the ac2g arrow's two ends), inside the profiled
span (torch.profiler's ProfilerStep ops, its own clock), and the launching runtime
call lies inside an aten op of torch.profiler on the same thread.

usage: clock_check.py OUT_DIR [STEPS]
Also a dry check with a torch.profiler running beside plain cupmon windows
(`cupmon.window()`) and plain `start_collection` without one."""
import json
import os
import sys

import torch

import cupmon
import cupmon.torch
from checks import check, exit_code

out = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 256, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")


def step():
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()


for _ in range(3):
    step()
torch.cuda.synchronize()
trace_path = os.path.join(out, "plain.json")
with cupmon.torch.profile(trace_path, cupmon_output_dir=os.path.join(out, "plain-dump"),
                          schedule=torch.profiler.schedule(wait=0, warmup=1, active=steps)) as prof:
    for _ in range(steps + 1):
        step()
        prof.step()
t = json.load(open(trace_path))
ev = t["traceEvents"]
info = t.get("cupmon", {})
check("plain python: the records were on another clock and were converted",
      info.get("clock_converted", 0) > 0 and info.get("off_clock_records", 0) == 0,
      json.dumps(info))
gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
check("plain python: no GPU op at ts 0", bool(gpu) and all(e["ts"] > 0 for e in gpu),
      f"{sum(e['ts'] <= 0 for e in gpu)} of {len(gpu)} at 0")
arrows = [e for e in ev if e.get("cat") == "ac2g"]
launch = {e["id"]: e for e in arrows if e["ph"] == "s"}
finish = [e for e in arrows if e["ph"] == "f"]
late = [f for f in finish if f["id"] in launch and f["ts"] < launch[f["id"]]["ts"]]
delays = sorted(f["ts"] - launch[f["id"]]["ts"] for f in finish if f["id"] in launch) or [0]
check("plain python: every GPU op starts after its launching call starts",
      len(finish) > 0 and not late,
      f"{len(finish)} arrows, {len(late)} GPU ops before their launch; "
      f"launch-to-start median {delays[len(delays) // 2]:.1f} us, max {delays[-1]:.1f} us")
spans = [e for e in ev if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
lo = min((e["ts"] for e in spans), default=0)
hi = max((e["ts"] + e["dur"] for e in spans), default=0)
outside = [e for e in gpu if not (lo <= e["ts"] <= hi + 50_000)]
check("plain python: every GPU op lies inside the profiled span (torch.profiler's ProfilerStep ops)",
      bool(spans) and not outside,
      f"{len(gpu)} GPU ops, {len(outside)} outside {lo:.1f}..{hi:.1f} us (+50 ms for the last kernels)")
ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
by_tid = {}
for o in ops:
    by_tid.setdefault(o["tid"], []).append((o["ts"], o["ts"] + o["dur"]))
runtime = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_runtime"
           and e["name"] in ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync")]
inside = [r for r in runtime if any(a <= r["ts"] <= b for a, b in by_tid.get(r["tid"], []))]
check("plain python: each launching runtime call lies inside an aten op on its thread",
      bool(runtime) and len(inside) == len(runtime), f"{len(inside)} of {len(runtime)}")

# A plain cupmon window beside a running torch.profiler (CPU only), without cupmon.torch.
cupmon.start_collection(os.path.join(out, "window-dump"))
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
    cupmon.rearm()
    with cupmon.window() as w:
        step()
        torch.cuda.synchronize()
kernels = [e for e in w.trace_window["events"] if e["kind"] == "kernel"]
apis = {e["correlation_id"]: e for e in w.trace_window["events"] if e["kind"] == "cuda_runtime"}
ok = bool(kernels) and all(k["start_ns"] > 10**18 and k["start_ns"] >= apis[k["correlation_id"]]["start_ns"]
                           for k in kernels if k["correlation_id"] in apis)
check("cupmon.window() beside torch.profiler: Unix-ns kernels after their launches", ok,
      f"{len(kernels)} kernels, {w.trace_window.get('cupmon', {})}")
stats = cupmon.stop_collection()
check("cupmon.window() beside torch.profiler: nothing dropped", stats["dropped_records"] == 0,
      f"{stats['records']} records")
sys.exit(exit_code())
