"""What noting the Python stack adds per launch, without a GPU: a Python loop "launches"
through cupmon's fake libcupti (one cudaLaunchKernel per ctypes call, GIL released as
torch does) at a chosen stack depth, under `cupmon run`; run it with
CUPMON_PYTHON_STACKS=0 and =1 and compare (bench/stacks/run.sh does).

usage: launch_cost.py LAUNCHES DEPTH
Prints one JSON line: launches, depth, seconds, ns per launch.
"""
import ctypes
import json
import os
import sys
import time

inject = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
assert inject.InitializeInjection() == 1
fake = ctypes.CDLL(os.environ["CUPMON_LIBCUPTI"])
launch = fake.cupmonFakeLaunchKernels
launch.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p]
n, depth = int(sys.argv[1]), int(sys.argv[2])
name = b"bench_kernel"


def loop(k, count):
    if k > 0:
        return loop(k - 1, count)
    for _ in range(count):
        launch(1, 7, name)


loop(depth, 20_000)  # warm: the thread's stacks interned
t0 = time.perf_counter()
loop(depth, n)
seconds = time.perf_counter() - t0
print(json.dumps({"launches": n, "depth": depth, "seconds": seconds, "ns_per_launch": seconds / n * 1e9}))
