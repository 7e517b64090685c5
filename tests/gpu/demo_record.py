"""Records the recording built into `cupmon demo`: a few steps of a small
transformer training loop (bf16 autocast, AdamW) through cupmon.torch.profile from
plain Python, with torch.profiler's record_function annotations, a cupmon
annotation and a CUDA graph replayed each step. Writes DIR/dump (cupmon's dump)
and DIR/cpu_trace.json (torch.profiler's CPU trace of the same steps).

usage: demo_record.py DIR"""
import contextlib
import os
import sys

import torch
from torch.profiler import record_function, schedule

import cupmon
import cupmon.torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, batch_first=True).cuda()
head = torch.nn.Linear(256, 16).cuda()
opt = torch.optim.AdamW(list(layer.parameters()) + list(head.parameters()), lr=1e-3)
x = torch.randn(8, 32, 256, device="cuda")
y = torch.randint(0, 16, (8,), device="cuda")
# A CUDA graph of a small preprocessing step, captured once and replayed each step.
static_in = torch.randn(8, 32, 256, device="cuda")
static_out = torch.empty_like(static_in)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        static_out.copy_(torch.nn.functional.layer_norm(static_in * 0.5, (256,)))
torch.cuda.current_stream().wait_stream(s)
# Diagnostics switches (tests/gpu/diag_demo.sh): DEMO_NO_GRAPH, DEMO_PLAIN (torch.profiler
# alone), DEMO_NO_SCHEDULE.
use_graph = not os.environ.get("DEMO_NO_GRAPH")
if use_graph:
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out.copy_(torch.nn.functional.layer_norm(static_in * 0.5, (256,)))


plain = bool(os.environ.get("DEMO_PLAIN"))


def step(annotate=True):
    annotate = annotate and not plain
    with cupmon.annotate("data") if annotate else contextlib.nullcontext():
        static_in.copy_(x)
        if use_graph:
            graph.replay()
        else:
            static_out.copy_(torch.nn.functional.layer_norm(static_in * 0.5, (256,)))
    with record_function("forward"):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(head(layer(static_out)).mean(1), y)
    with record_function("backward"):
        loss.backward()
    with record_function("optimizer"):
        opt.step()
        opt.zero_grad()


for _ in range(3):
    step(annotate=False)  # cupmon starts with the profiler below
torch.cuda.synchronize()
cpu_trace = os.path.join(out, "cpu_trace.json")
repeat = int(os.environ.get("DEMO_REPEAT", "1"))
kw = {} if os.environ.get("DEMO_NO_SCHEDULE") else dict(
    schedule=schedule(wait=0, warmup=1, active=2, repeat=repeat),
    on_trace_ready=lambda p: p.export_chrome_trace(cpu_trace))
if os.environ.get("DEMO_PLAIN"):
    profiler = torch.profiler.profile(**kw)
else:
    profiler = cupmon.torch.profile(os.path.join(out, "merged.json"), cupmon_output_dir=os.path.join(out, "dump"),
                                    **kw)
with profiler as prof:
    for _ in range(3):
        step()
        prof.step()
if os.environ.get("DEMO_NO_SCHEDULE"):
    prof.export_chrome_trace(cpu_trace)
print("recorded", os.listdir(os.path.join(out, "dump")))
