"""A training run that takes a torch.profiler (CPU+CUDA) trace of a few steps
in the middle, as users do; for cupmon's coexistence check.

usage: torch_profiler_run.py TRACE_OUT [STEPS] [PROFILE_FROM] [PROFILE_STEPS]
Prints one JSON line: steps run, the profiled steps and the wall times (Unix ns)
of the profiled region."""
import json
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

out = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 60
first = int(sys.argv[3]) if len(sys.argv) > 3 else 20
count = int(sys.argv[4]) if len(sys.argv) > 4 else 5
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 256, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")


def step():
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()


region = {}
for s in range(steps):
    if s == first:
        torch.cuda.synchronize()
        region["start_ns"] = time.time_ns()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(count):
                step()
            torch.cuda.synchronize()
        region["end_ns"] = time.time_ns()
        prof.export_chrome_trace(out)
    elif not (first < s < first + count):
        step()
torch.cuda.synchronize()
print(json.dumps({"steps": steps, "profiled": [first, first + count], **region}))
