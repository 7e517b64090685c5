"""Which step of cupmon.torch.profile with a repeating torch.profiler schedule
crashes in torch.profiler's stop (a segfault in torch/autograd/profiler.py
__exit__, seen on torch 2.11 with schedule(wait=0, warmup=1, active=2, repeat=0)
when the profiler stops in the second cycle's warm-up).

usage: diag_schedule.py VARIANT STEPS
  cupmon       cupmon.torch.profile as is
  rearm-once   cupmon.rearm only at the first prepare_trace
  no-rearm     no cupmon.rearm at all
  idle-stop    no cupmon window for a recording span opened by stop() itself
  plain-rearm  plain torch.profiler + cupmon.start_collection, rearm after each prepare
  plain-coll   plain torch.profiler + cupmon.start_collection, no rearm"""
import sys
import tempfile

import torch
import torch.profiler as tp

import cupmon
import cupmon._monitor as mon
import cupmon.torch

variant, steps = sys.argv[1], int(sys.argv[2])
x = torch.randn(512, 512, device="cuda")
sched = tp.schedule(wait=0, warmup=1, active=2, repeat=0)
out = tempfile.mkdtemp()

if variant in ("rearm-once", "no-rearm"):
    real, calls = mon.rearm, []

    def rearm():
        calls.append(1)
        if variant == "rearm-once" and len(calls) == 1:
            return real()
        return 0

    mon.rearm = rearm
if variant.startswith("plain"):
    cupmon.start_collection(out + "/dump")
    if variant == "plain-rearm":
        orig = tp.profile.prepare_trace

        def prepare(self):
            orig(self)
            mon.rearm()

        tp.profile.prepare_trace = prepare
    prof = tp.profile(activities=[tp.ProfilerActivity.CPU], schedule=sched, on_trace_ready=lambda p: None)
else:
    prof = cupmon.torch.profile(out + "/merged.json", cupmon_output_dir=out + "/dump", schedule=sched)
    if variant == "idle-stop":
        cls = type(prof)
        real_stop = cls.stop

        def stop(self):
            # torch.profiler's stop in warm-up runs start_trace then stop_trace:
            # leave cupmon's window closed for that empty span.
            cls.start_trace = lambda self: tp.profile.start_trace(self)
            return real_stop(self)

        cls.stop = stop
with prof:
    for _ in range(steps):
        y = x @ x
        prof.step()
torch.cuda.synchronize()
print(f"OK {variant} {steps} traces={getattr(prof, 'cupmon_traces', None)}")
