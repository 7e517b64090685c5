"""A small training loop for cupmon's GPU tests: an MLP with SGD, a fixed
number of steps, optionally with pauses. With WINDOW_STEPS=A,B it sends itself
SIGUSR2 before steps A and B (a trace window in the middle of training, under
`cupmon run --window-on-signal`). Prints one JSON line with the step count and
the main thread id."""
import json
import os
import signal
import sys
import threading
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
pause = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 256, device="cuda")
y = torch.randint(0, 10, (64,), device="cuda")
window_steps = [int(s) for s in os.environ.get("WINDOW_STEPS", "").split(",") if s]
for step in range(steps):
    if step in window_steps:
        torch.cuda.synchronize()
        os.kill(os.getpid(), signal.SIGUSR2)
        time.sleep(0.2)  # the window opens (or closes) on cupmon's thread
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if pause:
        torch.cuda.synchronize()
        time.sleep(pause)
torch.cuda.synchronize()
cupti = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libcupti" in line})
print(json.dumps({"steps": steps, "loss": float(loss.detach()), "main_tid": threading.get_native_id(),
                  "libcupti_mapped": cupti}))
