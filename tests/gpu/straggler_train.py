#!/usr/bin/env python3
"""One rank of the straggler check (tests/gpu/straggler.sh): training-like steps of
matmuls and elementwise kernels on cuda:0 for SECONDS; EXTRA_CYCLES > 0 adds one
`torch.cuda._sleep` spin kernel per step (the slow rank).

With STRAGGLER_TURNS set to a file path, the ranks sharing the one GPU take turns on
it (a burst of 10 steps each, then the GPU synchronised and the turn passed on), so
that one rank's kernels never run beside the other's: on one GPU shared at once, each
rank's GEMMs slow down by whatever the other runs beside them (up to +/-35 % per
minute on the H200), which drowns a 5 % straggler; ranks on GPUs of their own, which
the check stands for, do not share SMs.

usage: straggler_train.py SECONDS EXTRA_CYCLES
       straggler_train.py --calibrate   (alone on the GPU: prints the step's GPU ms and
                                         the spin kernel's cycles per ms, as JSON)"""
import fcntl
import json
import os
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


class Turns:
    """Whose turn it is on the GPU, in a file both ranks lock to read or write: a rank
    number, or "free" once a rank has finished (the other goes on alone)."""

    def __init__(self, path, rank, world):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        self.rank, self.world = rank, world

    def _locked(self, change=None):
        """The turn now; `change(turn)`, when given, gives the new one, written under
        the same lock (a rank leaving between a read and a write is not overwritten)."""
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            turn = os.pread(self.fd, 16, 0).decode() or "0"
            if change is not None:
                turn = change(turn)
                os.ftruncate(self.fd, 0)
                os.pwrite(self.fd, turn.encode(), 0)
            return turn
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def wait(self, until):
        """True once it is this rank's turn; False when `until` passed first."""
        while time.monotonic() < until:
            if self._locked() in (str(self.rank), "free"):
                return True
            time.sleep(0.0002)
        return False

    def pass_on(self):
        following = str((self.rank + 1) % self.world)
        self._locked(lambda turn: turn if turn == "free" else following)

    def leave(self):
        self._locked(lambda _: "free")


def main():
    if sys.argv[1] == "--calibrate":
        return calibrate()
    seconds, extra = float(sys.argv[1]), int(sys.argv[2])
    a, ws = make()
    torch.cuda.synchronize()
    path = os.environ.get("STRAGGLER_TURNS")
    turns = path and Turns(path, int(os.environ.get("RANK", "0")),
                           int(os.environ.get("WORLD_SIZE", "1")))
    steps = 0
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if turns and not turns.wait(until):
            break
        for _ in range(10):
            step(a, ws)
            if extra > 0:
                torch.cuda._sleep(extra)
            steps += 1
        torch.cuda.synchronize()
        if turns:
            turns.pass_on()
    if turns:
        turns.leave()
    torch.cuda.synchronize()
    print(f"steps {steps}")


if __name__ == "__main__":
    main()
