"""Realistic training step (issue 7, workload c): a small transformer, forward, backward
and AdamW.

An embedding, two nn.TransformerEncoderLayer blocks (d_model 512, 8 heads, FFN 2048,
batch 32, sequence 128) and an LM head with cross-entropy; a few hundred kernels per
step with real GPU work, so the collector's cost is diluted the way it is in training.

usage: python3 torch_train.py [--steps N] [--warmup W] [--torch-profiler]
"""

import torch
from torch import nn

from torch_common import parse_args, run

VOCAB, D_MODEL, HEADS, FFN, LAYERS, BATCH, SEQ = 8192, 512, 8, 2048, 2, 32, 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D_MODEL, VOCAB)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)))


def main():
    args = parse_args(__doc__.splitlines()[0], steps=300, warmup=20)
    torch.manual_seed(0)
    torch.set_float32_matmul_precision("high")  # TF32 matmuls, as training code sets
    model = Model().to(args.device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, VOCAB, (BATCH, SEQ), device=args.device)
    targets = torch.randint(0, VOCAB, (BATCH, SEQ), device=args.device)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(tokens).view(-1, VOCAB), targets.view(-1))
        loss.backward()
        opt.step()

    run("torch_train", args, step,
        {"d_model": D_MODEL, "layers": LAYERS, "batch": BATCH, "seq": SEQ})


if __name__ == "__main__":
    main()
