"""Checks of the trace files themselves (plain Python, no HTA): what HTA
needs to find ranks, the clock GPU activity is on, and the args Kineto
writes. Each returns (ok, detail)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Dict, List, Tuple

from tracefacts import (
    GPU_CATS,
    KINETO_COPY_ARGS,
    KINETO_KERNEL_ARGS,
    OCCUPANCY_ARGS,
    TraceFile,
    duration_ns_range,
)
from tracegen import TraceSet

Result = Tuple[bool, str]


def check_ranks(tset: TraceSet, hta_files: Dict[int, str]) -> Result:
    problems: List[str] = []
    for rank, path in sorted(tset.files.items()):
        f = TraceFile(path)
        info = f.top.get("distributedInfo")
        name = f"rank {rank} ({path.rsplit('/', 1)[-1]})"
        if not isinstance(info, dict):
            problems.append(f'{name}: no top-level "distributedInfo"')
            continue
        if info.get("rank") != rank:
            problems.append(f"{name}: distributedInfo.rank is {info.get('rank')!r}")
        if info.get("world_size") != tset.world_size:
            problems.append(
                f"{name}: distributedInfo.world_size is {info.get('world_size')!r}, "
                f"expected {tset.world_size!r}"
            )
        order = f.key_order
        if "traceEvents" in order and order.index("distributedInfo") > order.index("traceEvents"):
            problems.append(
                f"{name}: distributedInfo comes after traceEvents (HTA's ijson "
                "metadata reader stops at traceEvents)"
            )
        if f.hta_rank_text() != rank:
            problems.append(
                f'{name}: the first match of HTA\'s regex "rank":\\s+(\\d+) gives '
                f"{f.hta_rank_text()!r} (HTA needs whitespace after the colon)"
            )
    found = sorted(hta_files)
    if found != sorted(tset.files):
        problems.append(
            f"HTA found ranks {found} (files {[p.rsplit('/', 1)[-1] for _, p in sorted(hta_files.items())]}), "
            f"expected {sorted(tset.files)}"
        )
    if problems:
        return False, "; ".join(problems)
    return True, f"HTA ranks {found}, each the file's distributedInfo.rank"


def check_gpu_clock(f: TraceFile) -> Result:
    """GPU activity must sit on the CPU events' clock: not at ts 0, not
    before the call that launched it began, not overlapping its neighbour
    on one stream (one stream runs one thing at a time)."""
    gpu = [a for a in f.activities if a.cat in GPU_CATS]
    if not gpu:
        return False, "no kernel/gpu_memcpy/gpu_memset events"
    calls = {
        a.correlation: a
        for a in f.activities
        if a.cat in ("cuda_runtime", "cuda_driver") and a.correlation != -1
    }
    at_zero = [a for a in gpu if a.ts <= 0]
    early = [a for a in gpu if a.correlation in calls and a.ts < calls[a.correlation].ts]
    streams: Dict[tuple, list] = defaultdict(list)
    for a in gpu:
        streams[(a.pid, a.stream)].append(a)
    overlaps = 0
    for acts in streams.values():
        acts.sort(key=lambda a: a.ts)
        overlaps += sum(1 for p, n in zip(acts, acts[1:]) if n.ts < p.end - 0.001)
    # One clock: a trace of one run spans minutes, not days (torch-tb-profiler
    # uses the same 24 h bound for its Record Window End marker).
    timed = [
        a.ts
        for a in f.activities
        if a.ts > 0 and a.cat in GPU_CATS + ("cuda_runtime", "cuda_driver")
    ]
    span_days = (max(timed) - min(timed)) / 86400e6 if timed else 0.0
    problems = []
    if span_days > 1:
        problems.append(
            f"GPU and runtime events span {span_days:.0f} days (ts {min(timed):.0f} .. "
            f"{max(timed):.0f} us): two clocks in one trace"
        )
    if at_zero:
        problems.append(f"{len(at_zero)}/{len(gpu)} GPU activities at ts <= 0")
    if early:
        e = early[0]
        problems.append(
            f"{len(early)}/{len(gpu)} start before their launch call "
            f"(e.g. {e.name[:40]!r} ts {e.ts} < {calls[e.correlation].name} ts "
            f"{calls[e.correlation].ts})"
        )
    if overlaps:
        problems.append(f"{overlaps} overlap the previous activity on their stream")
    if problems:
        return False, "; ".join(problems)
    return True, f"{len(gpu)} GPU activities after their launch calls, none overlapping on a stream"


def check_kineto_args(f: TraceFile) -> Result:
    kernels = f.by_cat("kernel")
    copies = f.by_cat("gpu_memcpy", "gpu_memset")
    has_ops = bool(f.by_cat("cpu_op"))
    missing: Counter = Counter()
    # Kineto's occupancy args need the device's SM count: without the device in
    # deviceProperties (a PyTorch-format dump has none) cupmon leaves them out
    # (Kineto would write the string "inf", which torch-tb-profiler cannot
    # compare); where they are written they are numbers.
    known = {d.get("id") for d in f.top.get("deviceProperties") or [] if isinstance(d, dict)}
    not_numbers: Counter = Counter()
    for a in kernels:
        for key in KINETO_KERNEL_ARGS:
            optional = key == "External id" or (
                key in OCCUPANCY_ARGS and a.args.get("device") not in known
            )
            if not optional and key not in a.args:
                missing[key] += 1
        for key in OCCUPANCY_ARGS:
            value = a.args.get(key)
            if value is not None and not isinstance(value, (int, float)):
                not_numbers[key] += 1
    # Kineto writes "External id" only on kernels linked to a CPU op, so with
    # CPU ops in the trace some kernel must carry it; without, none need to.
    if has_ops and kernels and not any("External id" in a.args for a in kernels):
        missing["External id"] = len(kernels)
    for a in copies:
        for key in KINETO_COPY_ARGS:
            if key not in a.args:
                missing[f"{a.cat}: {key}"] += 1
    wrong_bw = []
    for a in copies:
        bw = a.args.get("memory bandwidth (GB/s)")
        if not isinstance(bw, (int, float)) or a.dur <= 0:
            continue
        lo_ns, hi_ns = duration_ns_range(a)
        nbytes = a.args.get("bytes", 0)  # bytes per ns = GB/s
        if not nbytes / hi_ns * (1 - 1e-6) <= bw <= nbytes / lo_ns * (1 + 1e-6):
            wrong_bw.append(f"{a.name} {bw} != bytes/dur {nbytes / (a.dur * 1000.0):.6g}")
    problems = []
    if missing:
        total = {
            "gpu_memcpy": len(f.by_cat("gpu_memcpy")),
            "gpu_memset": len(f.by_cat("gpu_memset")),
        }
        parts = []
        for key, n in sorted(missing.items()):
            of = total.get(key.split(":")[0], len(kernels))
            parts.append(f"{key} ({n}/{of})")
        problems.append("missing: " + ", ".join(parts))
    if wrong_bw:
        problems.append(f"{len(wrong_bw)} wrong bandwidths, e.g. {wrong_bw[0]}")
    if not_numbers:
        problems.append(
            "not numbers: " + ", ".join(f"{k} ({n}/{len(kernels)})" for k, n in sorted(not_numbers.items()))
        )
    if problems:
        return False, "; ".join(problems)
    return True, f"{len(kernels)} kernels and {len(copies)} copies carry Kineto's args"
