"""A training job shaped like a real one, for measuring dump sizes: a 4-layer
transformer (bf16 autocast, AdamW, fused kernels where torch has them) for a fixed
number of steps. Prints one JSON line with the steps and the wall time."""
import json
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
torch.manual_seed(0)
model = torch.nn.TransformerEncoder(
    torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True), 4
).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(16, 128, 512, device="cuda")
t0 = time.time()
for _ in range(steps):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
torch.cuda.synchronize()
print(json.dumps({"steps": steps, "seconds": time.time() - t0}))
