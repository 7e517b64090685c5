"""A small training loop for cupmon's GPU tests: an MLP with SGD, a fixed
number of steps, optionally with pauses so that a scheduled window falls in
the middle. Prints one JSON line with the step count and the main thread id."""
import json
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
for step in range(steps):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if pause:
        torch.cuda.synchronize()
        time.sleep(pause)
torch.cuda.synchronize()
print(json.dumps({"steps": steps, "loss": float(loss), "main_tid": threading.get_native_id()}))
