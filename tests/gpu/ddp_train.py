"""A two-rank data-parallel training loop for cupmon's multi-rank check, run by
`torchrun --nproc-per-node 2`: DDP over gloo (two ranks may share one GPU, which NCCL
refuses), a small transformer layer, cupmon.step() after each step so that
`cupmon window --steps N` can count them. Prints one JSON line per rank at the end."""
import json
import os
import sys
import time

import torch
import torch.distributed as dist

import cupmon

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
pause = float(sys.argv[2]) if len(sys.argv) > 2 else 0.02
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
torch.manual_seed(rank)
layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=512, batch_first=True).cuda()
model = torch.nn.parallel.DistributedDataParallel(layer)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(8, 64, 256, device="cuda")
for s in range(steps):
    opt.zero_grad()
    model(x).square().mean().backward()
    opt.step()
    torch.cuda.synchronize()
    cupmon.step()
    time.sleep(pause)
dist.barrier()
print(json.dumps({"rank": rank, "steps": steps, "pid": os.getpid()}))
dist.destroy_process_group()
