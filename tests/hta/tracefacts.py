"""What a trace file says, read with the json module alone: the independent
side of check_hta.py. Nothing here imports HTA or pandas, so a number HTA
prints can be compared with one computed from the file's own events.

Where HTA 0.5.0 transforms the data before analysing it, the transformation
is stated here once, with the HTA source it comes from, so that a comparison
is exact instead of "close enough":
- hta/common/trace_parser.py round_down_time_stamps: when the `ts` column is
  float (Kineto and cupmon write microseconds with 3 decimals), HTA sets
  ts = ceil(ts), end = floor(ts + dur), dur = end - ts. A sub-microsecond
  event can get dur -1. HTA_DISABLE_NS_ROUNDING=1 turns this off.
- hta/common/trace_parser.py _compress_df: events without `dur` or `cat`,
  and `cat == "Trace"`, are dropped; `args.stream` missing or not an integer
  becomes -1, `args.correlation` missing becomes -1.
- Every analysis treats an event with stream != -1 as a GPU activity.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")

# HTA's rank detection (hta/common/trace_file.py create_rank_to_trace_dict).
HTA_RANK_RE = re.compile(r'"rank":\s+(\d+)')

# The launch calls HTA's queue length counts
# (hta/common/trace_symbol_table.py get_runtime_launch_events_query, CUDA only).
HTA_LAUNCH_NAMES = (
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
)

# The args Kineto writes on kernels (libkineto/src/CuptiActivity.cpp,
# GpuActivity<CUpti_ActivityKernel4>::metadataJson; "External id" from
# output_json.cpp when the kernel has a linked CPU op).
KINETO_KERNEL_ARGS = (
    "queued",
    "device",
    "context",
    "stream",
    "correlation",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "warps per SM",
    "grid",
    "block",
    "est. achieved occupancy %",
    "External id",
)
# Of those, the ones computed from the device's properties (its SM count).
OCCUPANCY_ARGS = ("blocks per SM", "warps per SM", "est. achieved occupancy %")
KINETO_COPY_ARGS = (
    "device",
    "context",
    "stream",
    "correlation",
    "bytes",
    "memory bandwidth (GB/s)",
)

NCCL_KERNEL_RE = re.compile(r"^nccl.*Kernel")


def _as_int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


@dataclass
class Activity:
    """One duration event as HTA keeps it."""

    index: int  # position in traceEvents (HTA's `index` column)
    cat: str
    name: str
    pid: Any
    tid: Any
    ts: float  # as written, microseconds
    dur: float
    rts: float  # after HTA's rounding
    rdur: float
    stream: int
    correlation: int
    args: Dict[str, Any] = field(default_factory=dict)

    @property
    def rend(self) -> float:
        return self.rts + self.rdur

    @property
    def end(self) -> float:
        return self.ts + self.dur


class TraceFile:
    def __init__(self, path: str, rounding: Optional[bool] = None) -> None:
        self.path = path
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            self.text = f.read()
        doc = json.loads(self.text)
        self.key_order: List[str] = list(doc)
        self.events: List[Dict[str, Any]] = doc.get("traceEvents", [])
        self.top = {k: v for k, v in doc.items() if k != "traceEvents"}
        if rounding is None:
            rounding = os.environ.get("HTA_DISABLE_NS_ROUNDING") != "1"
        self.rounding = rounding and any(
            "ts" not in e or isinstance(e["ts"], float) for e in self.events
        )
        self.activities = self._activities()
        self.step_names = sorted({a.name for a in self.activities if "ProfilerStep" in a.name})

    def _activities(self) -> List[Activity]:
        out = []
        for i, e in enumerate(self.events):
            if "dur" not in e or "cat" not in e or e["cat"] == "Trace":
                continue
            ts, dur = float(e.get("ts", 0)), float(e["dur"])
            if self.rounding:
                rts = float(math.ceil(ts))
                rdur = float(math.floor(ts + dur)) - rts
            else:
                rts, rdur = ts, dur
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            out.append(
                Activity(
                    index=i,
                    cat=e["cat"],
                    name=e.get("name", ""),
                    pid=e.get("pid"),
                    tid=e.get("tid"),
                    ts=ts,
                    dur=dur,
                    rts=rts,
                    rdur=rdur,
                    stream=_as_int(args.get("stream", -1), -1),
                    correlation=_as_int(args.get("correlation", -1), -1),
                    args=args,
                )
            )
        return out

    # --- the pieces the checks compare -------------------------------------

    def gpu(self) -> List[Activity]:
        """What HTA counts as GPU activity: stream != -1."""
        return [a for a in self.activities if a.stream != -1]

    def by_cat(self, *cats: str) -> List[Activity]:
        return [a for a in self.activities if a.cat in cats]

    def cpu_ops(self) -> List[Activity]:
        return self.by_cat("cpu_op", "user_annotation")

    def launches(self) -> List[Activity]:
        """CPU-side launch calls (stream -1) that HTA's queue length counts."""
        return [
            a
            for a in self.activities
            if a.stream == -1 and a.name in HTA_LAUNCH_NAMES and a.correlation != -1
        ]

    def distributed_rank(self) -> Optional[int]:
        info = self.top.get("distributedInfo")
        if isinstance(info, dict) and isinstance(info.get("rank"), int):
            return info["rank"]
        return None

    def hta_rank_text(self) -> Optional[int]:
        """The rank HTA reads: the first `"rank": N` (with whitespace) in the text."""
        m = HTA_RANK_RE.search(self.text)
        return int(m.group(1)) if m else None


# HTA's name rule for what is neither a kernel nor a copy (hta/utils/utils.py
# is_compute_kernel): cuda_sync events carry a stream, so HTA counts "Stream
# Wait Event" as computation and "Event Sync"/"Context Sync" as other.
HTA_NOT_COMPUTE_RE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")


def kernel_type(a: Activity) -> str:
    """The kernel type by the event's `cat` (HTA itself goes by the name)."""
    if a.cat in ("gpu_memcpy", "gpu_memset"):
        return "MEMORY"
    if a.cat == "kernel":
        return "COMMUNICATION" if NCCL_KERNEL_RE.match(a.name) else "COMPUTATION"
    return "OTHER" if HTA_NOT_COMPUTE_RE.match(a.name) else "COMPUTATION"


def merged_groups(intervals: List[tuple]) -> List[tuple]:
    """The union of [start, end) intervals, merged the way
    hta/utils/utils.py merge_kernel_intervals does (sorted by start; a new
    group starts when start > the largest end so far)."""
    groups: List[list] = []
    top = None
    for s, e in sorted(intervals, key=lambda x: x[0]):
        if not groups or s > top:
            groups.append([s, e])
        else:
            groups[-1][1] = max(groups[-1][1], e)
        top = e if top is None else max(top, e)
    return [tuple(g) for g in groups]


def merged_length(intervals: List[tuple]) -> float:
    return sum(e - s for s, e in merged_groups(intervals))


def hta_kept(f: "TraceFile", step_names: List[str]) -> List[Activity]:
    """The activities HTA keeps after Trace._filter_irrelevant_gpu_kernels:
    with two or more ProfilerStep names (over all ranks), only CPU-side
    events (stream -1) that start before the last ProfilerStep starts, and
    the GPU events (stream >= 0, correlation >= 0) whose correlation one of
    those carries. Without ProfilerSteps nothing is dropped."""
    if len(step_names) < 2:
        return list(f.activities)
    cpu = [a for a in f.activities if a.stream == -1]
    starts = [a.rts for a in cpu if a.name in step_names]
    if not starts:
        return []
    last = max(starts)
    cpu = [a for a in cpu if a.rts < last]
    corr = {a.correlation for a in cpu}
    gpu = [
        a for a in f.activities if a.stream >= 0 and a.correlation >= 0 and a.correlation in corr
    ]
    return gpu + cpu


KINETO_MEMCPY_NAME_RE = re.compile(r"^Memcpy (\w+) \(")


def memcpy_type(a: Activity) -> str:
    """The copy type from the `copy kind` arg (cupmon's) or else from
    Kineto's name "Memcpy HtoD (Pinned -> Device)"."""
    if a.cat == "gpu_memset":
        return "Memset"
    kind = a.args.get("copy kind")
    if kind is None:
        m = KINETO_MEMCPY_NAME_RE.match(a.name)
        kind = m.group(1) if m else "?"
    return f"Memcpy {kind}"


def duration_ns_range(a: Activity) -> tuple:
    """The true duration in ns that the written `dur` allows: Kineto before
    its ns-precision traces wrote whole microseconds (start and end each
    truncated), later ones and cupmon write 3 decimals."""
    slack = 1.0 if float(a.dur).is_integer() else 0.0011
    return max(a.dur - slack, 1e-3) * 1000.0, (a.dur + slack) * 1000.0
