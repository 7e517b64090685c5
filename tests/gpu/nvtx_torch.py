"""NVTX ranges from torch (torch.cuda.nvtx.range) and, when importable, the `nvtx`
package, for tests/gpu/nvtx.sh: GPU work in "forward", "backward" and "layer 7"
(nvtx package, domain "mylib", category "io", color), and nothing in "empty"; marks
"step" (torch.cuda.nvtx.mark) and "nvtx step" (the nvtx package, domain "mylib")."""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
try:
    import nvtx  # the pip package, when carried in
except ImportError:
    nvtx = None
print("INFO nvtx package:", getattr(nvtx, "__version__", None) if nvtx else "absent")
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 512, device="cuda")
for _ in range(steps):
    with torch.cuda.nvtx.range("forward"):
        loss = model(x).square().mean()
    with torch.cuda.nvtx.range("backward"):
        loss.backward()
    if nvtx is not None:
        with nvtx.annotate("layer 7", domain="mylib", category="io", color="blue"):
            y = x @ x.T
        nvtx.mark("nvtx step", domain="mylib")
    with torch.cuda.nvtx.range("empty"):
        pass
    opt.step()
    opt.zero_grad()
    torch.cuda.nvtx.mark("step")
torch.cuda.synchronize()
print("done", steps)
