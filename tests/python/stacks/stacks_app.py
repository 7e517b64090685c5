"""A Python program whose "CUDA launches" go through cupmon's fake libcupti from known
lines, for the test of source attribution (crates/cupmon-cli/tests/python_stacks.rs).

Each launching line carries a `# LAUNCH name` marker: the test reads the markers and
expects every kernel `name` attributed to that line. ctypes.CDLL releases the GIL
around the call, as torch does before it launches.

It loads the injection library as the CUDA driver would (CUDA_INJECTION64_PATH), then
launches through the fake (CUPMON_LIBCUPTI).
"""

import ctypes
import importlib.util
import os
import sys
import threading
import time

inject = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
assert inject.InitializeInjection() == 1
fake = ctypes.CDLL(os.environ["CUPMON_LIBCUPTI"])

spec = importlib.util.spec_from_file_location(
    "fake_ops", os.path.join(os.path.dirname(__file__), "lib", "torch", "fake_ops.py")
)
fake_ops = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fake_ops)


def attention(n):
    fake.cupmonFakeLaunchKernels(n, 7, b"attn_kernel")  # LAUNCH attn_kernel


class Mlp:
    def __call__(self, n):
        fake_ops.linear(fake, n)  # LAUNCH fake_gemm_kernel
        fake.cupmonFakeMemset(n, 256, 0, 7)  # LAUNCH memset


def step(mlp):
    attention(3)
    mlp(2)


def in_a_thread():
    fake.cupmonFakeLaunchKernels(4, 9, b"thread_kernel")  # LAUNCH thread_kernel


def deep(k):
    if k == 0:
        fake.cupmonFakeLaunchKernels(1, 7, b"deep_kernel")  # LAUNCH deep_kernel
        return
    deep(k - 1)


# argv: steps (default 5), then seconds to wait before the first launch (a trace
# window opened at the start of the run then holds every launch).
time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0)
def capture_graph():
    fake.cupmonFakeCaptureKernels(2, 7)  # LAUNCH graph_kernel
    graph = ctypes.c_uint64()
    assert fake.cupmonFakeGraphInstantiateCaptured(ctypes.byref(graph)) == 0
    return graph


def replay(graph):
    # Replays run the captured nodes: their kernels name the capture's line.
    fake.cupmonFakeGraphLaunch(graph, 1, 7, b"graph_kernel")


fake.cupmonFakeGraphLaunch.argtypes = [
    ctypes.c_uint64,
    ctypes.c_uint32,
    ctypes.c_uint32,
    ctypes.c_char_p,
]
mlp = Mlp()
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
    step(mlp)
t = threading.Thread(target=in_a_thread)
t.start()
t.join()
deep(150)
gen = (fake.cupmonFakeLaunchKernels(1, 7, b"gen_kernel") for _ in range(2))  # LAUNCH gen_kernel
list(gen)
graph = capture_graph()
for _ in range(int(os.environ.get("STACKS_APP_REPLAYS", "4"))):
    replay(graph)
