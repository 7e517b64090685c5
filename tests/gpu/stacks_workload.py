"""Workloads for issue 33's GPU check (tests/gpu/stacks.sh): which line of Python
launched each kernel.

usage: stacks_workload.py MODE [STEPS] [ARG]
  eager   a small model's forward and backward, STEPS steps; ARG: a torch.profiler
          trace path: the last 3 steps are profiled with with_stack=True (the reference
          kernel -> line mapping)
  graph   a decode-like step captured once in a torch.cuda.CUDAGraph, replayed STEPS times
  compile torch.compile(mode="reduce-overhead") of the same step, STEPS calls
  loop    STEPS steps of 10 tiny elementwise ops (launch-bound); prints launches and
          seconds as JSON, for the cost per launch
  paired  the same steps in blocks of STEPS with stacks on and off in turn, in this one
          process (bench/stacks/paired.py; rounds: $STACKS_PAIRS, 40); ARG: the loop
          runs that many Python frames deeper (a model's module nesting), default 0
  paired_model  the same with blocks of STEPS training steps of the model (its kernels
          per step counted by cupmon)
  paired_graph  the same with blocks of STEPS replays of a CUDA graph of one kernel (what
          stacks add per replay); ARG: frames deeper, default 0
  backward  STEPS training steps under torch.autograd.profiler.emit_nvtx(): the
          autograd engine's backward kernels must name their forward op's line
Prints one JSON line with what it ran.
"""
import contextlib
import json
import re
import sys
import time

import torch

mode = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
arg = sys.argv[3] if len(sys.argv) > 3 else None
torch.manual_seed(0)
dev = "cuda"


# The profiled eager steps wrap each marked line in torch.profiler.record_function, on
# the line itself, so the line keeps its number: torch's trace then says which line's
# code launched each kernel. (torch.profiler's own stacks name a frame by its function's
# first line, not the line executing: they can check the function, not the line.)
label = torch.profiler.record_function if mode == "eager" else contextlib.nullcontext
LABELS = ("norm", "up", "down", "loss", "backward", "optimizer")


class Block(torch.nn.Module):
    def __init__(self, d=512):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        with label("norm"): h = self.norm(x)  # line: norm
        with label("up"): h = torch.nn.functional.gelu(self.up(h))  # line: up
        with label("down"): return x + self.down(h)  # line: down


model = torch.nn.Sequential(Block(), Block()).to(dev)
x = torch.randn(32, 512, device=dev)


def train_step(opt):
    opt.zero_grad(set_to_none=True)
    with label("loss"): loss = model(x).square().mean()  # line: loss
    with label("backward"): loss.backward()  # line: backward
    with label("optimizer"): opt.step()  # line: optimizer


def decode_step(inp):
    with torch.no_grad():
        return model(inp).softmax(-1)  # line: decode


out = {"mode": mode, "steps": steps}
if mode == "eager":
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(max(steps - 3, 0)):
        train_step(opt)
    torch.cuda.synchronize()
    if arg:
        from torch.profiler import ProfilerActivity, profile

        # torch >= 2.x fills an op's stack in prof.events() (FunctionEvent.stack) only
        # in verbose mode; without it every op's stack is empty (torch 2.11 on the H200).
        verbose = {}
        if hasattr(torch._C._profiler, "_ExperimentalConfig"):
            verbose["experimental_config"] = torch._C._profiler._ExperimentalConfig(verbose=True)
        with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True, **verbose
        ) as prof:
            for _ in range(3):
                train_step(opt)
            torch.cuda.synchronize()
        prof.export_chrome_trace(arg)
        out["profile"] = arg
        # torch.profiler's own kernel -> line mapping: each CPU op's Python stack (its
        # innermost frame that is not torch's) and the kernels it launched.
        lines = []
        for evt in prof.events():
            # Every op, kernels or not: a kernel's External id can name an op whose
            # kernels torch files under another one.
            kernels = [k.name for k in getattr(evt, "kernels", [])]
            # An op called by another op (aten::native_layer_norm under
            # aten::layer_norm) has no stack of its own: its caller's is the one.
            owner, chain = evt, []
            while owner is not None and not getattr(owner, "stack", None):
                chain.append(owner.name)
                owner = getattr(owner, "cpu_parent", None)
            # The innermost record_function label over the op: the line that ran it.
            marked = evt
            while marked is not None and marked.name not in LABELS:
                marked = getattr(marked, "cpu_parent", None)
            stack = list(owner.stack) if owner is not None else []
            library = ("/torch/", "/functorch/", "/triton/", "/cupmon/")
            # "file(line): function" frames only: not "<built-in ...>" nor the
            # "nn.Module: Linear_0" entries torch puts between them.
            user = next(
                (f for f in stack
                 if re.match(r"^[^<].*\(\d+\): ", f)
                 and not any(p in "/" + f for p in library)),
                None,
            )
            # evt.id is the op's id, which the trace's kernels name as "External id".
            lines.append({"op": evt.name, "id": evt.id, "line": user, "stack": stack,
                          "kernels": kernels, "chain": chain,
                          "label": marked.name if marked is not None else None,
                          "thread": evt.thread, "start_us": evt.time_range.start})
        with open(arg + ".lines.json", "w") as f:
            json.dump(lines, f)
        out["ops_with_kernels"] = len(lines)
elif mode == "graph":
    static = torch.randn(8, 512, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            decode_step(static)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        result = decode_step(static)  # line: capture
    for _ in range(steps):
        graph.replay()  # line: replay
    torch.cuda.synchronize()
elif mode == "compile":
    compiled = torch.compile(decode_step, mode="reduce-overhead")
    static = torch.randn(8, 512, device=dev)
    for _ in range(steps):
        compiled(static)  # line: compiled
    torch.cuda.synchronize()
elif mode in ("loop", "paired"):
    a = torch.randn(4096, device=dev)
    b = torch.empty_like(a)

    def ten_launches():
        torch.mul(a, 1.0001, out=b)
        b.add_(0.5)
        b.relu_()
        b.sigmoid_()
        b.mul_(b)
        b.sub_(0.25)
        b.abs_()
        b.sqrt_()
        b.tanh_()
        a.add_(b, alpha=1e-6)

    for _ in range(200):
        torch.mul(a, 1.0001, out=b)
    torch.cuda.synchronize()
    if mode == "loop":
        t0 = time.perf_counter()
        for _ in range(steps):
            ten_launches()
        torch.cuda.synchronize()
        out["seconds"] = time.perf_counter() - t0
        out["launches"] = 10 * steps
    else:
        import os

        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "..", "..", "bench", "stacks"))
        import paired

        depth = int(arg or 0)
        pairs = int(os.environ.get("STACKS_PAIRS", "40"))
        result = paired.nested(depth, lambda: paired.run(
            ten_launches, 10, steps, pairs, paired.abi_switch(),
            before_block=torch.cuda.synchronize))
        out.update(result, depth=depth)
        out["stack_depth_setting"] = os.environ.get("CUPMON_PYTHON_STACK_DEPTH")
        if "error" not in result:
            out["summary"] = paired.describe(paired.summarize(result))
elif mode == "paired_model":
    # The cost per kernel launch in a real model's training step (forward from ~20
    # frames of nn.Module calls, backward on the engine's thread, the optimizer),
    # paired as above: blocks of STEPS steps with stacks on and off in turn.
    import os

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "bench", "stacks"))
    import paired

    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    launches = paired.kernels_per_step(lambda: train_step(opt), 20,
                                       sync=torch.cuda.synchronize)
    pairs = int(os.environ.get("STACKS_PAIRS", "40"))
    result = paired.run(lambda: train_step(opt), max(round(launches), 1), steps, pairs,
                        paired.abi_switch(), before_block=torch.cuda.synchronize,
                        warm_steps=5)
    out.update(result, workload="model", kernels_per_step=launches)
    if "error" not in result:
        out["summary"] = paired.describe(paired.summarize(result))
elif mode == "paired_graph":
    # What stacks add per CUDA-graph replay: blocks of STEPS replays with stacks on and
    # off in turn. The graph is one tiny kernel so that a replay is bound by its launch
    # call, not by the GPU (a replay's kernels carry their nodes' stacks, taken at
    # capture; the replay call's own stack is the one read per replay).
    import os

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "bench", "stacks"))
    import paired

    a = torch.randn(4096, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            a.mul_(1.0001)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        a.mul_(1.0001)
    pairs = int(os.environ.get("STACKS_PAIRS", "40"))
    result = paired.nested(int(arg or 0), lambda: paired.run(
        graph.replay, 1, steps, pairs, paired.abi_switch(),
        before_block=torch.cuda.synchronize))
    out.update(result, workload="graph", depth=int(arg or 0))
    if "error" not in result:
        out["summary"] = paired.describe(paired.summarize(result))
elif mode == "backward":
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    with torch.autograd.profiler.emit_nvtx():
        for _ in range(steps):
            train_step(opt)
    torch.cuda.synchronize()
else:
    sys.exit(f"unknown mode {mode}")
print(json.dumps(out))
