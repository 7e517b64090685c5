#!/usr/bin/env python3
"""One rank of the straggler check (tests/gpu/straggler.sh): training-like steps of
matmuls and elementwise kernels on cuda:0 for SECONDS; EXTRA_CYCLES > 0 adds one
`torch.cuda._sleep` spin kernel per step (the slow rank).

usage: straggler_train.py SECONDS EXTRA_CYCLES
       straggler_train.py --calibrate   (alone on the GPU: prints the step's GPU ms and
                                         the spin kernel's cycles per ms, as JSON)"""
import json
import sys
import time

import torch

N = 2048


def make():
    torch.manual_seed(0)
    a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    ws = [torch.randn(N, N, device="cuda", dtype=torch.bfloat16) for _ in range(6)]
    return a, ws


def step(a, ws):
    x = a
    for w in ws:
        x = torch.relu(x @ w)
        x = x * 0.5 + 0.1
    return x.sum()


def gpu_ms(fn, repeat):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    start.record()
    for _ in range(repeat):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeat


def calibrate():
    a, ws = make()
    step_ms = gpu_ms(lambda: step(a, ws), 200)
    cycles = 10_000_000
    sleep_ms = gpu_ms(lambda: torch.cuda._sleep(cycles), 5)
    print(json.dumps({"step_ms": step_ms, "cycles_per_ms": cycles / sleep_ms}))


def main():
    if sys.argv[1] == "--calibrate":
        return calibrate()
    seconds, extra = float(sys.argv[1]), int(sys.argv[2])
    a, ws = make()
    steps = 0
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        step(a, ws)
        if extra > 0:
            torch.cuda._sleep(extra)
        steps += 1
        if steps % 10 == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    print(f"steps {steps}")


if __name__ == "__main__":
    main()
