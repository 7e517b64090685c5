"""What noting the Python stack adds per launch, without a GPU: a Python loop "launches"
through cupmon's fake libcupti (one cudaLaunchKernel per ctypes call, GIL released as
torch does) at a chosen stack depth, under `cupmon run`.

usage: launch_cost.py LAUNCHES DEPTH
         the whole loop timed once: run it with CUPMON_PYTHON_STACKS=0 and =1 and compare
       launch_cost.py paired STEPS PAIRS DEPTH
         blocks of STEPS launches with stacks on and off in turn, in this one process
         (paired.py: the method and its figures); bench/stacks/run.sh runs this
       launch_cost.py paired-graph STEPS PAIRS DEPTH
         the same with replays (cudaGraphLaunch) of a graph of 20 kernel nodes captured
         first: what stacks add per replay (the kernels carry their nodes' stacks, so a
         replay reads none; a graph with a node captured without one, e.g. before the
         session, has each replay's own stack read)
Prints one JSON line.
"""
import ctypes
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paired  # noqa: E402

inject = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
assert inject.InitializeInjection() == 1
fake = ctypes.CDLL(os.environ["CUPMON_LIBCUPTI"])
launch = fake.cupmonFakeLaunchKernels
launch.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p]
name = b"bench_kernel"


def step():
    launch(1, 7, name)


def loop(k, count):
    if k > 0:
        return loop(k - 1, count)
    for _ in range(count):
        launch(1, 7, name)


if sys.argv[1] in ("paired", "paired-graph"):
    steps, pairs, depth = (int(a) for a in sys.argv[2:5])
    switch = paired.abi_switch()
    one = step
    if sys.argv[1] == "paired-graph":
        exec_handle = ctypes.c_uint64(0)
        assert fake.cupmonFakeCaptureKernels(20, 7) == 0
        assert fake.cupmonFakeGraphInstantiateCaptured(ctypes.byref(exec_handle)) == 0
        replay = fake.cupmonFakeGraphLaunch
        replay.argtypes = [ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p]

        def one():
            replay(exec_handle.value, 1, 7, name)

    out = paired.nested(depth, lambda: paired.run(one, 1, steps, pairs, switch))
    out["depth"] = depth
    out["workload"] = sys.argv[1]
    print(json.dumps(out))
    sys.exit(0 if "error" not in out else 1)

n, depth = int(sys.argv[1]), int(sys.argv[2])
loop(depth, 20_000)  # warm: the thread's stacks interned
t0 = time.perf_counter()
loop(depth, n)
seconds = time.perf_counter() - t0
print(json.dumps({"launches": n, "depth": depth, "seconds": seconds, "ns_per_launch": seconds / n * 1e9}))
