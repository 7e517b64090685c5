"""What a numbered NVTX range (torch's emit_nvtx names: "<op>, seq = N, op_id = M") costs
on a Python thread under `cupmon run`, against the same names without the number: each
op is a push and a pop from Python through the test library
crates/cupmon-cli/tests/nvtx/nvtx_autograd.c (NVTX's calling side; no kernels), at a
stack depth of DEPTH frames. Both names are unique per op (as emit_nvtx's are), so both
pay the name's interning; the difference is the number's work (a Python stack read and
a ring store). Prints JSON: ns per op for each.

usage: python3 bench/nvtx/seq_cost.py LIBNVTX_AUTOGRAD.so [OPS] [DEPTH]
  (under cupmon run, with CUDA_INJECTION64_PATH and CUPMON_LIBCUPTI set as
  bench/nvtx/seq_cost.sh does)
"""
import ctypes
import json
import os
import sys
import time

inject = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
assert inject.InitializeInjection() == 1
lib = ctypes.CDLL(sys.argv[1])
assert lib.autograd_nvtx_init() == 0
ops = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
depth = int(sys.argv[3]) if len(sys.argv) > 3 else 20
op = lib.forward_op


def timed(numbered):
    names = [
        (f"aten::mm, seq = {i}, op_id = {i}" if numbered else f"aten::mm, op_id = {i}").encode()
        for i in range(ops)
    ]
    t0 = time.perf_counter()
    for n in names:
        op(n, 0, None)
    return (time.perf_counter() - t0) / ops * 1e9


def at_depth(k, f):
    return f() if k == 0 else at_depth(k - 1, f)


out = {"ops": ops, "depth": depth}
for rep in range(3):
    out[f"plain_ns_{rep}"] = round(at_depth(depth, lambda: timed(False)), 1)
    out[f"numbered_ns_{rep}"] = round(at_depth(depth, lambda: timed(True)), 1)
print(json.dumps(out))
