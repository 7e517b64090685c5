"""A training step as torch runs it under `torch.autograd.profiler.emit_nvtx()`, for the
test of backward attribution (crates/cupmon-cli/tests/autograd_seq.rs), without torch
or a GPU: each forward op pushes its NVTX range named with its autograd sequence number
from a known line (marked FORWARD and its number), and the backward pass runs on a thread without
Python frames whose ops' ranges carry their forward op's number (the C library
tests/nvtx/nvtx_autograd.c, argv[1], plays NVTX and the autograd engine). The backward
kernel `bwd_<seq>` must then be attributed to the line marked with that number, as a
backward; `bwd_555` (a number no forward op carried) stays without Python frames.
"""

import ctypes
import os
import sys

inject = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
assert inject.InitializeInjection() == 1
ops = ctypes.CDLL(sys.argv[1])
rc = ops.autograd_nvtx_init()
assert rc == 0, f"autograd_nvtx_init: {rc}"


class Model:
    def forward(self):
        # An op without autograd (no number), then one that keeps seq 100 but makes no
        # backward node (as a no-grad op does), then the op that makes node 100.
        ops.forward_op(b"aten::empty, op_id = 1", 1, b"fwd_empty")
        ops.forward_op(b"aten::detach, seq = 100, op_id = 2", 1, b"fwd_detach")
        ops.forward_op(b"aten::linear, seq = 100, op_id = 3", 2, b"fwd_linear")  # FORWARD 100
        self.act()

    def act(self):
        ops.forward_op(b"aten::relu, seq = 101, op_id = 4", 1, b"fwd_relu")  # FORWARD 101


steps = int(sys.argv[2]) if len(sys.argv) > 2 else 2
for _ in range(steps):
    Model().forward()
    seqs = (ctypes.c_uint64 * 3)(101, 100, 555)
    names = (ctypes.c_char_p * 3)(b"bwd_101", b"bwd_100", b"bwd_555")
    assert ops.backward_pass(3, seqs, names) == 0
