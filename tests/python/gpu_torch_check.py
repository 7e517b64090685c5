#!/usr/bin/env python3
"""GPU check of cupmon.torch.profile against torch.profiler's own CUDA trace
(issue 6, point 3). Run on the GPU machine with torch and the cupmon wheel:

    python3 tests/python/gpu_torch_check.py [--out DIR] [--steps N]

Each variant runs the same eager training loop (an MLP with SGD; warm-up
steps, then N profiled steps) in a process of its own:

  torch        torch.profiler, CPU + CUDA (the reference)
  cupmon-run   cupmon.torch.profile under `cupmon run` (CUPTI shared with torch.profiler)
  cupmon-py    cupmon.torch.profile from plain Python (cupmon started by the
               module; it takes CUPTI's callbacks back with rearm after
               torch.profiler registered its own)
  torch-sched / cupmon-run-sched   the same with schedule(wait=1, warmup=1, active=2)

and each cupmon trace is compared with its torch reference: the same set of
aten ops; the same kernels (count, names, grid/block; grid/block from the
window, since PyTorch's trace-window format has no launch configuration); one
`ac2g` arrow into each GPU op; each cuda_runtime call once and the same
runtime calls as torch.profiler. Prints PASS/FAIL/INFO lines, timings, and
`N passed, M failed`; exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time

GPU_OPS = ("kernel", "gpu_memcpy", "gpu_memset")


# ---------------------------------------------------------------- child side
def workload(steps_before: int, dry_run: bool):
    import torch

    device = "cpu" if dry_run else "cuda"
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)
    ).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 256, device=device)
    y = torch.randint(0, 10, (64,), device=device)
    launch = _fake_gpu() if dry_run else None

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if launch:
            launch(3, 7, b"_Z4stepv")

    for _ in range(steps_before):  # cuBLAS handles, allocator, lazy init
        step()
    torch.cuda.synchronize()
    return step


def _fake_gpu():
    """Dry run: stand in for the CUDA driver (cuInit calls InitializeInjection
    under `cupmon run`) and make "kernels" with the fake libcupti."""
    import ctypes

    if os.environ.get("CUDA_INJECTION64_PATH"):
        ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection()
    return ctypes.CDLL(os.environ["CUPMON_LIBCUPTI"]).cupmonFakeLaunchKernels


def child(mode: str, trace: str, steps: int, dry_run: bool) -> None:
    import torch
    import torch.profiler as tp

    if dry_run:
        torch.cuda.synchronize = lambda *a: None
    step = workload(5, dry_run)
    sched = tp.schedule(wait=1, warmup=1, active=2) if mode.endswith("sched") else None
    n = 4 if sched else steps
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    bare = time.perf_counter() - t0
    info = {"mode": mode, "bare_steps_s": bare}
    if mode.startswith("torch"):
        gpu = [] if dry_run else [tp.ProfilerActivity.CUDA]
        prof = tp.profile(activities=[tp.ProfilerActivity.CPU, *gpu], schedule=sched)
    else:
        import cupmon.torch

        prof = cupmon.torch.profile(trace, schedule=sched)
    t0 = time.perf_counter()
    prof.__enter__()
    for _ in range(n):
        step()
        if sched:
            prof.step()
    torch.cuda.synchronize()
    info["profiled_steps_s"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    prof.__exit__(None, None, None)
    info["exit_s"] = time.perf_counter() - t1
    if mode.startswith("torch"):
        t2 = time.perf_counter()
        prof.export_chrome_trace(trace)
        info["export_s"] = time.perf_counter() - t2
    else:
        info["export_and_merge_s"] = prof.cupmon_merge_seconds
        info["traces"] = prof.cupmon_traces
        with open(trace + ".window.json", "w") as f:
            json.dump(prof.cupmon_window, f)
    print("TIMING " + json.dumps(info), flush=True)


# --------------------------------------------------------------- parent side
def load(path):
    with open(path) as f:
        return json.load(f)["traceEvents"]


def kernels_of_trace(events):
    return collections.Counter(
        (e["name"], tuple(e["args"].get("grid", ())), tuple(e["args"].get("block", ())))
        for e in events
        if e.get("cat") == "kernel"
    )


def kernels_of_window(window):
    return collections.Counter(
        (e["name"], tuple(e.get("grid", ())), tuple(e.get("block", ())))
        for e in window["events"]
        if e["kind"] == "kernel"
    )


def arrows_into_gpu_ops(events):
    """Per GPU-op category: (ops, ops with exactly one ac2g arrow in)."""
    ends = collections.Counter(
        e.get("id") for e in events if e.get("cat") == "ac2g" and e.get("ph") == "f"
    )
    starts = collections.Counter(
        e.get("id") for e in events if e.get("cat") == "ac2g" and e.get("ph") == "s"
    )
    out = {}
    for cat in GPU_OPS:
        ops = [e for e in events if e.get("cat") == cat and e.get("ph") == "X"]
        one = sum(
            ends[e["args"].get("correlation")] == 1 and starts[e["args"].get("correlation")] == 1
            for e in ops
        )
        out[cat] = (len(ops), one)
    return out


def aten_ops(events):
    return {
        e["name"] for e in events if e.get("cat") == "cpu_op" and e["name"].startswith("aten::")
    }


def runtime_calls(events):
    return collections.Counter(e["name"] for e in events if e.get("cat") == "cuda_runtime")


def differences(ref, got):
    """'' when equal, else a short note of what only one side has."""
    if ref == got:
        return ""
    if isinstance(ref, collections.Counter):
        only_ref, only_got = list((ref - got).items())[:3], list((got - ref).items())[:3]
    else:
        only_ref, only_got = sorted(ref - got)[:5], sorted(got - ref)[:5]
    return f"; only torch.profiler: {only_ref}; only here: {only_got}"


def compare(name, ref_path, got_path, results, counted=True):
    def check(ok, what):
        if counted:
            results.append(ok)
        tag = ("PASS" if ok else "FAIL") if counted else ("info-pass" if ok else "info-fail")
        print(f"{tag} {name}: {what}", flush=True)

    ref, got = load(ref_path), load(got_path)
    with open(got_path + ".window.json") as f:
        window = json.load(f)
    a_ref, a_got = aten_ops(ref), aten_ops(got)
    check(
        a_ref == a_got,
        f"aten ops: {len(a_ref)} in torch.profiler, {len(a_got)} here" + differences(a_ref, a_got),
    )
    k_ref, k_win = kernels_of_trace(ref), kernels_of_window(window)
    names_got = collections.Counter(e["name"] for e in got if e.get("cat") == "kernel")
    names_win = collections.Counter(n for (n, _, _) in k_win.elements())
    check(
        k_ref == k_win and names_got == names_win,
        f"kernels (name, grid, block): {sum(k_ref.values())} in torch.profiler, "
        f"{sum(k_win.values())} in the window, {sum(names_got.values())} in the merged trace"
        + differences(k_ref, k_win),
    )
    for cat in ("gpu_memcpy", "gpu_memset"):
        n_ref = sum(e.get("cat") == cat for e in ref)
        n_got = sum(e.get("cat") == cat for e in got)
        check(n_ref == n_got, f"{cat}: {n_ref} in torch.profiler, {n_got} here")
    arrows, arrows_ref = arrows_into_gpu_ops(got), arrows_into_gpu_ops(ref)
    check(
        all(n == one for n, one in arrows.values()),
        "one ac2g arrow into each GPU op: "
        + ", ".join(
            f"{cat} {one}/{n} (torch.profiler {arrows_ref[cat][1]}/{arrows_ref[cat][0]})"
            for cat, (n, one) in arrows.items()
        ),
    )
    corr = collections.Counter(
        e["args"].get("correlation") for e in got if e.get("cat") == "cuda_runtime"
    )
    twice = [c for c, n in corr.items() if n > 1]
    check(
        not twice,
        f"each cuda_runtime call once: {sum(corr.values())} events, "
        f"{len(twice)} correlation ids repeated",
    )
    r_ref, r_got = runtime_calls(ref), runtime_calls(got)
    check(
        r_ref == r_got,
        f"cuda_runtime calls: {sum(r_ref.values())} in torch.profiler, {sum(r_got.values())} here"
        + differences(r_ref, r_got),
    )


def run(cmd, log, counted=True):
    t0 = time.perf_counter()
    with open(log, "w") as f:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=f, text=True)
    timing = [json.loads(x[7:]) for x in proc.stdout.splitlines() if x.startswith("TIMING ")]
    ok = proc.returncode == 0 and timing
    tag = ("PASS" if ok else "FAIL") if counted else ("info-pass" if ok else "info-fail")
    print(
        f"{tag} run {' '.join(cmd[-4:])}: exit {proc.returncode}, "
        f"{time.perf_counter() - t0:.1f} s wall (log {log})",
        flush=True,
    )
    if not ok:
        print(open(log).read()[-2000:])
    return timing[0] if timing else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-torch-check"))
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument(
        "--dry-run",
        action="store_true",
        help="no GPU: CPU tensors and the fake libcupti ($CUPMON_LIBCUPTI); "
        "exercises this script, not cupmon (kernel checks fail)",
    )
    ap.add_argument(
        "--info-py",
        action="store_true",
        help="report the plain-Python variant (cupmon-py) without counting it",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--trace", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.trace, a.steps, a.dry_run)
    import torch
    import cupmon

    if not torch.cuda.is_available() and not a.dry_run:
        print("SKIP: no CUDA device")
        return 2
    os.makedirs(a.out, exist_ok=True)
    print(
        f"INFO torch {torch.__version__} (CUDA {torch.version.cuda}), cupmon {cupmon.__version__}, "
        f"{'dry run' if a.dry_run else torch.cuda.get_device_name()}",
        flush=True,
    )
    me = [sys.executable, os.path.abspath(__file__), "--steps", str(a.steps)]
    me += ["--dry-run"] if a.dry_run else []
    cupmon_cmd = [sys.executable, "-m", "cupmon"]

    def path(mode):
        return os.path.join(a.out, f"{mode}.json")

    results, timings = [], {}
    for mode in ("torch", "cupmon-run", "cupmon-py", "torch-sched", "cupmon-run-sched"):
        cmd = me + ["--child", mode, "--trace", path(mode)]
        if mode.startswith("cupmon-run"):
            cmd = cupmon_cmd + ["run", "-o", os.path.join(a.out, f"{mode}-dump"), "--"] + cmd
        counted = mode != "cupmon-py" or not a.info_py
        t = run(cmd, os.path.join(a.out, f"{mode}.log"), counted)
        if counted:
            results.append(t is not None)
        timings[mode] = t
    # --info-py: report the plain-Python variant without counting it.
    for mode, ref, counted in (
        ("cupmon-run", "torch", True),
        ("cupmon-run-sched", "torch-sched", True),
        ("cupmon-py", "torch", not a.info_py),
    ):
        if timings.get(mode) and timings.get(ref):
            compare(mode, path(ref), path(mode), results, counted)
    for t in filter(None, timings.values()):
        rounded = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in t.items()}
        print("INFO timing " + json.dumps(rounded))
    passed, failed = sum(results), len(results) - sum(results)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
