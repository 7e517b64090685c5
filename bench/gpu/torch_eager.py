"""Python-bound workload (issue 7, workload b): a torch eager loop of small elementwise ops.

The tensors are tiny, so each op costs the Python interpreter, the dispatcher and one
kernel launch; the GPU is idle most of the time. A collector's per-kernel cost shows up
here as a fraction of a few-microsecond op, the case that matters for eager code.

usage: python3 torch_eager.py [--steps N] [--warmup W] [--torch-profiler]
"""

import torch

from torch_common import parse_args, run

# Each step launches exactly this many kernels (one per op, no fusion in eager mode).
OPS_PER_STEP = 10


def main():
    args = parse_args(__doc__.splitlines()[0], steps=8000, warmup=500)
    x = torch.randn(4096, device=args.device)
    y = torch.empty_like(x)

    def step():
        torch.mul(x, 1.0001, out=y)
        y.add_(0.5)
        y.relu_()
        y.sigmoid_()
        y.mul_(y)
        y.sub_(0.25)
        y.abs_()
        y.sqrt_()
        y.tanh_()
        x.add_(y, alpha=1e-6)

    run("torch_eager", args, step, {"kernels_per_step": OPS_PER_STEP})


if __name__ == "__main__":
    main()
