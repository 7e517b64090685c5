"""HTA's frequent CUDA kernel sequences, compared with the sequences found in
the file by nesting alone: an operator's kernels are the GPU activities whose
correlation is carried by a CPU-side event (stream -1) on the operator's
thread inside the operator's time span (hta/common/trace_call_stack.py
builds its stacks per (pid, tid) from ts/dur, then links kernels through
`correlation`)."""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from typing import Dict, List, Tuple

from tracefacts import Activity, TraceFile

Result = Tuple[bool, str]


def _inside(inner: Activity, outer: Activity) -> bool:
    return outer.rts <= inner.rts and inner.rend <= outer.rend


def expected_patterns(f: TraceFile, operator: str, min_len: int) -> Counter:
    cpu = [a for a in f.activities if a.stream == -1]
    threads: Dict[tuple, List[Activity]] = defaultdict(list)
    for a in cpu:
        threads[(a.pid, a.tid)].append(a)
    gpu = defaultdict(list)
    for a in f.activities:
        if a.stream >= 0 and a.correlation >= 0:
            gpu[a.correlation].append(a)

    def depth(a: Activity) -> int:
        return sum(
            1 for o in threads[(a.pid, a.tid)] if o is not a and _inside(a, o) and o.rdur > a.rdur
        )

    candidates = [a for a in cpu if operator in a.name]
    if not candidates:
        return Counter()
    top = min(depth(a) for a in candidates)
    patterns: Counter = Counter()
    for root in candidates:
        if depth(root) != top:
            continue
        subtree = [o for o in threads[(root.pid, root.tid)] if _inside(o, root)]
        kernels = [k for o in subtree if o.correlation != -1 for k in gpu.get(o.correlation, [])]
        if len(kernels) < min_len:
            continue
        kernels.sort(key=lambda k: k.rts)
        patterns["|".join([root.name] + [k.name for k in kernels])] += 1
    return patterns


def frequent_sequences(ta, f: TraceFile, rank: int, operator: str, min_len: int = 3) -> Result:
    with tempfile.TemporaryDirectory() as out:
        df = ta.get_frequent_cuda_kernel_sequences(
            operator_name=operator,
            output_dir=out,
            min_pattern_len=min_len,
            rank=rank,
            top_k=5,
            visualize=False,
        )
    expect = expected_patterns(f, operator, min_len)
    got = (
        Counter({r["pattern"]: int(r["count"]) for _, r in df.iterrows()}) if len(df) else Counter()
    )
    problems = []
    if not got:
        problems.append(
            f"HTA found no sequence of >= {min_len} kernels under {operator!r} on rank {rank}"
        )
    elif max(got.values()) < 2:
        problems.append(f"no sequence under {operator!r} repeats: {dict(got)}")
    if not expect:
        problems.append(
            f"the file has no {operator!r} with >= {min_len} kernels launched from inside it "
            "(launch calls must be on the operator's thread, inside its time span)"
        )
    if got != expect:
        problems.append(
            "HTA and the file differ: "
            f"HTA {[(p[:60], n) for p, n in got.most_common(3)]}, "
            f"file {[(p[:60], n) for p, n in expect.most_common(3)]}"
        )
    if problems:
        return False, "; ".join(problems)
    best, n = got.most_common(1)[0]
    return True, f"{len(got)} patterns under {operator!r}, top x{n}: {best[:80]}..."
