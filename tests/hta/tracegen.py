"""Trace directories for HTA, each written by the cupmon binary from the real
H200 recordings in tests/fixtures/h200-cupti13.0.

Three sets, one directory each (HTA takes a directory and finds the ranks in
the files):
- merged: `cupmon decode DUMP -o window.json` then `cupmon merge --cpu CPU
  --window window.json`, both ranks from torch_transformer (the demo's
  recording, made by cupmon.torch.profile; the older torch_mlp recording holds
  48 kernels whose CUPTI timestamps are 0).
  The CPU traces are the fixtures' torch.profiler traces with the
  `distributedInfo` that torch.profiler writes in a 2-rank job added (the
  input, as a distributed job would hand it to cupmon; cupmon's output is
  never edited).
- standalone: `cupmon export --window window.json`, torch_transformer as rank 0
  and cuda_workload as rank 1,
  no CPU trace: the rank has to come from cupmon itself (rank_request()).
- decoded: each rank's dump decoded alone (`cupmon decode DUMP --format chrome`),
  the dumps named as `cupmon run` names them under torchrun (`rank<R>-<pid>-<start>`)
  and nothing else said: the rank has to come from the dump (torch_transformer as
  rank 0, the PyTorch-format cuda_workload as rank 1); no world size is known.
- demo: `cupmon demo`, one rank, no distributedInfo expected.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Dict, List, Tuple

WORLD_SIZE = 2
# (rank, fixture, its dump directory, CPU trace of that fixture)
RANK_FIXTURES = (
    (0, "torch_transformer", "torch_transformer/dump", "kineto_cpu_trace.json"),
    (1, "cuda_workload", "cuda_workload", "cpu_trace_empty.json"),
)
# The merged set: two ranks of a training job, each with its torch.profiler trace.
# Only torch_transformer has one of real training steps, so both ranks are made of
# it (HTA's temporal breakdown needs CPU ops on every rank: with cuda_workload's
# empty CPU trace as rank 1 it raises IndexError).
MERGED_FIXTURES = (
    (0, "torch_transformer", "torch_transformer/dump", "kineto_cpu_trace.json"),
    (1, "torch_transformer", "torch_transformer/dump", "kineto_cpu_trace.json"),
)


class TraceGenError(Exception):
    pass


@dataclass
class TraceSet:
    name: str
    directory: str
    files: Dict[int, str]  # the rank each file is meant to be -> path
    needs_distributed_info: bool
    how: str  # one line: which cupmon commands wrote it
    world_size: int | None = WORLD_SIZE  # the distributedInfo.world_size expected


def _run(cmd: List[str], env_extra: Dict[str, str] | None = None) -> str:
    env = dict(os.environ)
    env.update(env_extra or {})
    shown = " ".join(f"{k}={v}" for k, v in (env_extra or {}).items())
    print(f"  $ {shown + ' ' if shown else ''}{' '.join(cmd)}", file=sys.stderr)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise TraceGenError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def rank_request(cupmon: str, subcommand: str, rank: int) -> Tuple[List[str], Dict[str, str]]:
    """How this check asks cupmon for a rank when there is no CPU trace: the
    environment torchrun gives every rank, plus `--rank R --world-size W`
    when `cupmon SUBCOMMAND --help` offers `--rank`. Change this one place
    when cupmon settles on its interface."""
    env = {
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(WORLD_SIZE),
        "LOCAL_WORLD_SIZE": str(WORLD_SIZE),
    }
    help_text = _run([cupmon, subcommand, "--help"])
    args: List[str] = []
    if "--rank" in help_text:
        args += ["--rank", str(rank)]
        if "--world-size" in help_text:
            args += ["--world-size", str(WORLD_SIZE)]
    return args, env


def _cpu_trace_with_rank(src: str, dst: str, rank: int) -> None:
    """The fixture's CPU trace with the distributedInfo torch.profiler adds in
    a distributed job (torch/profiler/profiler.py _get_distributed_info,
    written through json.dumps, so `"rank": 0` with a space), placed where
    Kineto writes metadata: after deviceProperties, before traceEvents."""
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    info = {
        "backend": "nccl",
        "rank": rank,
        "world_size": WORLD_SIZE,
        "pg_count": 1,
        "pg_config": [
            {
                "pg_name": "0",
                "pg_desc": "default_pg",
                "backend_config": "cuda:nccl",
                "pg_size": WORLD_SIZE,
                "ranks": list(range(WORLD_SIZE)),
            }
        ],
        "nccl_version": "2.21.5",
    }
    out: Dict[str, object] = {}
    for key, value in doc.items():
        if key == "traceEvents" and "distributedInfo" not in out:
            out["distributedInfo"] = info
        out[key] = value
    with open(dst, "w", encoding="utf-8") as f:
        json.dump(out, f)


def _window(cupmon: str, fixtures: str, fixture: str, dump: str, work: str) -> str:
    window = os.path.join(work, f"window-{fixture}.json")
    if not os.path.exists(window):
        _run([cupmon, "decode", os.path.join(fixtures, dump), "-o", window])
    return window


def build_sets(cupmon: str, fixtures: str, work: str) -> List[TraceSet]:
    os.makedirs(work, exist_ok=True)
    sets: List[TraceSet] = []

    merged_dir = os.path.join(work, "merged")
    os.makedirs(merged_dir, exist_ok=True)
    files = {}
    for rank, fixture, dump, cpu in MERGED_FIXTURES:
        window = _window(cupmon, fixtures, fixture, dump, work)
        cpu_in = os.path.join(work, f"cpu-rank{rank}-{fixture}.json")
        _cpu_trace_with_rank(os.path.join(fixtures, fixture, cpu), cpu_in, rank)
        out = os.path.join(merged_dir, f"rank{rank}-{fixture}.trace.json")
        _run([cupmon, "merge", "--cpu", cpu_in, "--window", window, "-o", out])
        files[rank] = out
    sets.append(
        TraceSet(
            "merged",
            merged_dir,
            files,
            True,
            "cupmon decode + cupmon merge, CPU traces carrying distributedInfo",
        )
    )

    standalone_dir = os.path.join(work, "standalone")
    os.makedirs(standalone_dir, exist_ok=True)
    files = {}
    for rank, fixture, dump, _cpu in RANK_FIXTURES:
        window = _window(cupmon, fixtures, fixture, dump, work)
        out = os.path.join(standalone_dir, f"rank{rank}-{fixture}.trace.json")
        args, env = rank_request(cupmon, "export", rank)
        _run([cupmon, "export", "--window", window, "-o", out] + args, env)
        files[rank] = out
    sets.append(
        TraceSet(
            "standalone",
            standalone_dir,
            files,
            True,
            "cupmon decode + cupmon export, rank asked of cupmon (rank_request)",
        )
    )

    decoded_dir = os.path.join(work, "decoded")
    os.makedirs(decoded_dir, exist_ok=True)
    files = {}
    for rank, fixture, dump, _cpu in RANK_FIXTURES:
        named = os.path.join(work, "dumps", f"rank{rank}-{4000 + rank}-20261201T093005Z")
        if not os.path.exists(named):
            shutil.copytree(os.path.join(fixtures, dump), named)
        out = os.path.join(decoded_dir, f"rank{rank}-{fixture}.trace.json")
        _run([cupmon, "decode", named, "--format", "chrome", "-o", out])
        files[rank] = out
    sets.append(
        TraceSet(
            "decoded",
            decoded_dir,
            files,
            True,
            "cupmon decode --format chrome of each rank's dump alone (rank from its name)",
            world_size=None,
        )
    )

    demo_dir = os.path.join(work, "demo")
    os.makedirs(demo_dir, exist_ok=True)
    out = os.path.join(demo_dir, "demo.trace.json")
    _run([cupmon, "demo", "-o", out])
    sets.append(TraceSet("demo", demo_dir, {0: out}, False, "cupmon demo"))
    return sets
