"""Shared timing harness of the torch workloads (issue 7, workloads b and c).

Every workload runs: warm-up steps, then (optionally) torch.profiler starts, a few
settling steps, and the timed steps, closed by torch.cuda.synchronize(). The timed
region therefore excludes the profiler's start (CUPTI initialisation) and its stop
(event post-processing): what is compared across configurations is the steady-state
cost per step, which is what a user pays while collection is running. The profiler's
start and stop times are reported separately.

The result is one line `BENCH {json}` on stdout; the driver greps for the prefix because
`cupmon run` prints its own summary on the same terminal.
"""

import argparse
import json
import os
import time


def parse_args(description, steps, warmup):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--steps", type=int, default=steps, help="timed steps (default %(default)s)")
    p.add_argument("--warmup", type=int, default=warmup, help="untimed steps before (default %(default)s)")
    p.add_argument("--settle", type=int, default=5,
                   help="untimed steps after the profiler starts (run in every configuration)")
    p.add_argument("--torch-profiler", action="store_true",
                   help="run the settle and timed steps under torch.profiler (CPU+CUDA activities)")
    p.add_argument("--device", default="cuda",
                   help="torch device (cpu only to check the script on a machine without a GPU)")
    return p.parse_args()


def sync(device):
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run(name, args, step, extra=None):
    """Time `step()` as described above and print the BENCH line."""
    import torch

    for _ in range(args.warmup):
        step()
    sync(args.device)

    prof = None
    start_s = stop_s = 0.0
    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile

        t = time.perf_counter()
        activities = [ProfilerActivity.CPU]
        if args.device.startswith("cuda"):
            activities.append(ProfilerActivity.CUDA)
        prof = profile(activities=activities)
        prof.__enter__()
        start_s = time.perf_counter() - t
    for _ in range(args.settle):
        step()
    sync(args.device)

    t0 = time.perf_counter()
    for _ in range(args.steps):
        step()
    sync(args.device)
    seconds = time.perf_counter() - t0

    profiler_events = None
    if prof is not None:
        t = time.perf_counter()
        prof.__exit__(None, None, None)
        stop_s = time.perf_counter() - t
        # A sanity count of what Kineto recorded, read without building torch's
        # FunctionEvent tree (which takes longer than the timed region for 1e5 events).
        try:
            profiler_events = len(prof.profiler.kineto_results.events())
        except (AttributeError, TypeError):
            profiler_events = None

    result = {
        "workload": name,
        "pid": os.getpid(),
        "steps": args.steps,
        "warmup": args.warmup,
        "settle": args.settle,
        "seconds": round(seconds, 6),
        "ms_per_step": round(seconds * 1e3 / args.steps, 6),
        "torch_profiler": bool(args.torch_profiler),
        "profiler_start_s": round(start_s, 4),
        "profiler_stop_s": round(stop_s, 4),
        "profiler_events": profiler_events,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device,
    }
    result.update(extra or {})
    print("BENCH " + json.dumps(result), flush=True)
