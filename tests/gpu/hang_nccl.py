"""A rank of an NCCL job (one rank per GPU) for tests/gpu/hang_nccl.sh: 20 matched steps (compute and an
all-reduce), then rank 1 makes the hang MODE names and every rank waits:

  compute: rank 1 runs a kernel that does not end (torch.cuda._sleep), then all-reduces;
  stop:    rank 1's host stops (time.sleep) before the all-reduce the others launched;
  missing: rank 1 skips an all-reduce the others launch, then all ranks all-gather;
  extra:   rank 1 launches an all-reduce the others do not, then all ranks all-gather;
  sizes:   rank 1 all-reduces 16 M floats where the others all-reduce 1 K.

usage: torchrun --nproc-per-node N hang_nccl.py MODE
"""

import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

mode = sys.argv[1]
rank = int(os.environ["RANK"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
# Longer than the test: PyTorch's watchdog must not end the job before the diagnosis.
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=900))
x = torch.ones(1 << 20, device="cuda")
for _ in range(20):
    y = x * 2
    dist.all_reduce(y)
    torch.cuda.synchronize()
    time.sleep(0.05)
print(f"rank {rank}: warm, making {mode}", flush=True)
culprit = rank == 1
gathered = torch.empty(dist.get_world_size() * x.numel(), device="cuda")
if mode == "compute":
    if culprit:
        torch.cuda._sleep(1 << 60)
    dist.all_reduce(x)
elif mode == "stop":
    if culprit:
        time.sleep(900)
    dist.all_reduce(x)
elif mode == "missing":
    if not culprit:
        dist.all_reduce(x)
    dist.all_gather_into_tensor(gathered, x)
elif mode == "extra":
    if culprit:
        dist.all_reduce(x)
    dist.all_gather_into_tensor(gathered, x)
elif mode == "sizes":
    z = torch.ones((1 << 24) if culprit else (1 << 10), device="cuda")
    dist.all_reduce(z)
else:
    sys.exit(f"unknown mode {mode}")
torch.cuda.synchronize()
print(f"rank {rank}: the job did not hang", flush=True)
time.sleep(900)
