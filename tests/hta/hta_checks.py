"""HTA 0.5.0's analyses on one trace directory, each compared with what the
files' own events say (tracefacts). Each check returns (ok, detail); an
exception inside HTA is a failure with its message."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Dict, Tuple

from tracefacts import (
    TraceFile,
    duration_ns_range,
    kernel_type,
    memcpy_type,
    merged_groups,
    merged_length,
)

Result = Tuple[bool, str]
HTA_KERNEL_CATS = ("kernel", "gpu_memcpy", "gpu_memset")  # idle time breakdown's


def _negative(acts) -> int:
    return sum(1 for a in acts if a.rdur < 0)


def _close(x: float, y: float, tol: float) -> bool:
    return abs(float(x) - float(y)) <= tol + 1e-6


def kernel_breakdown(ta, facts: Dict[int, TraceFile]) -> Result:
    _types, kernels = ta.get_gpu_kernel_breakdown(
        visualize=False, include_memory_kernels=True, num_kernels=10**9, duration_ratio=1.0
    )
    problems, summary = [], []
    for rank, f in sorted(facts.items()):
        expect: Dict[tuple, float] = defaultdict(float)
        for a in f.gpu():
            t = kernel_type(a)
            if t != "OTHER":
                expect[(t, a.name)] += a.rdur
        rows = kernels[kernels["rank"] == rank]
        got = {(r["kernel_type"], r["name"]): r["sum (us)"] for _, r in rows.iterrows()}
        only_hta = sorted(set(got) - set(expect))
        only_file = sorted(set(expect) - set(got))
        if only_hta or only_file:
            problems.append(
                f"rank {rank}: HTA's (type, name) differ from the events' cat: "
                f"only in HTA {[(t, n[:30]) for t, n in only_hta[:3]]}, "
                f"only in the file {[(t, n[:30]) for t, n in only_file[:3]]}"
            )
        wrong = [k for k in set(got) & set(expect) if not _close(got[k], expect[k], 0)]
        if wrong:
            k = wrong[0]
            problems.append(
                f"rank {rank}: {len(wrong)} kernel sums differ, e.g. {k[1][:40]!r} "
                f"HTA {got[k]} vs file {expect[k]}"
            )
        loaded = int((ta.t.get_trace(rank)["stream"] != -1).sum())
        if loaded != len(f.gpu()):
            problems.append(
                f"rank {rank}: HTA kept {loaded} GPU activities, the file has {len(f.gpu())}"
            )
        by_type = Counter()
        for (t, _n), v in expect.items():
            by_type[t] += v
        summary.append(
            f"rank {rank}: {len(f.gpu())} GPU activities, "
            + ", ".join(f"{t} {v:g} us" for t, v in sorted(by_type.items()))
        )
    if problems:
        return False, "; ".join(problems)
    return True, "; ".join(summary) + " (sums after HTA's rounding, equal to the file's)"


def temporal_breakdown(ta, facts: Dict[int, TraceFile]) -> Result:
    df = ta.get_temporal_breakdown(visualize=False)
    problems, summary = [], []
    for rank, f in sorted(facts.items()):
        row = df[df["rank"] == rank]
        if row.empty:
            problems.append(f"rank {rank}: no row")
            continue
        row = row.iloc[0]
        gpu = f.gpu()
        groups = merged_groups([(a.rts, a.rend) for a in gpu])
        span = groups[-1][1] - groups[0][0]
        idle = span - sum(e - s for s, e in groups)
        comp = merged_length([(a.rts, a.rend) for a in gpu if kernel_type(a) == "COMPUTATION"])
        tol = float(_negative(gpu))  # HTA's sort of equal starts is not stable
        if row["idle_time(us)"] < 0:
            problems.append(f"rank {rank}: negative idle time {row['idle_time(us)']} us")
        for col, want in (
            ("kernel_time(us)", span),
            ("idle_time(us)", idle),
            ("compute_time(us)", comp),
        ):
            if not _close(row[col], want, tol):
                problems.append(f"rank {rank}: {col} HTA {row[col]} vs file {want}")
        summary.append(
            f"rank {rank}: idle {row['idle_time(us)']:g} of {row['kernel_time(us)']:g} us "
            f"({row['idle_time_pctg']}%)"
        )
    if problems:
        return False, "; ".join(problems)
    return True, "; ".join(summary)


def idle_time_breakdown(ta, facts: Dict[int, TraceFile]) -> Result:
    df, _stats = ta.get_idle_time_breakdown(ranks=sorted(facts), visualize=False)
    problems, summary = [], []
    for rank, f in sorted(facts.items()):
        rows = df[df["rank"] == rank]
        neg = rows[rows["idle_time"] < 0]
        if not neg.empty:
            problems.append(
                f"rank {rank}: negative idle time "
                + ", ".join(
                    f"stream {r.stream} {r.idle_category} {r.idle_time}" for r in neg.itertuples()
                )
            )
        streams: Dict[int, list] = defaultdict(list)
        for a in f.gpu():
            if a.cat in HTA_KERNEL_CATS:
                streams[a.stream].append(a)
        for stream, acts in sorted(streams.items()):
            starts = [a.rts for a in acts]
            if len(set(starts)) != len(starts):
                continue  # equal starts: HTA's order (and so its gaps) is not defined
            acts.sort(key=lambda a: a.rts)
            gaps = sum(n.rts - p.rend for p, n in zip(acts, acts[1:]))
            got = rows[rows["stream"] == stream]["idle_time"].sum()
            if not _close(got, gaps, 0.01 * len(acts)):
                problems.append(f"rank {rank} stream {stream}: idle HTA {got} vs file {gaps}")
        summary.append(f"rank {rank}: {rows['idle_time'].sum():g} us over {len(streams)} streams")
    if problems:
        return False, "; ".join(problems)
    return True, "; ".join(summary)


def comm_comp_overlap(ta, facts: Dict[int, TraceFile]) -> Result:
    df = ta.get_comm_comp_overlap(visualize=False)
    problems, summary = [], []
    for rank, f in sorted(facts.items()):
        row = df[df["rank"] == rank]
        if row.empty:
            problems.append(f"rank {rank}: no row")
            continue
        got = row.iloc[0]["comp_comm_overlap_pctg"]
        comm = [(a.rts, a.rend) for a in f.gpu() if kernel_type(a) == "COMMUNICATION"]
        if not comm:
            if not math.isnan(got):
                problems.append(f"rank {rank}: no NCCL kernels, yet overlap {got}%")
            summary.append(f"rank {rank}: no NCCL kernels, overlap undefined (NaN) as it should be")
            continue
        comp = merged_groups([(a.rts, a.rend) for a in f.gpu() if kernel_type(a) == "COMPUTATION"])
        both = sum(
            max(0.0, min(ce, pe) - max(cs, ps)) for cs, ce in merged_groups(comm) for ps, pe in comp
        )
        want = round(100 * both / merged_length(comm), 2)
        if not _close(got, want, 0.01):
            problems.append(f"rank {rank}: overlap HTA {got}% vs file {want}%")
        summary.append(f"rank {rank}: {got}%")
    if problems:
        return False, "; ".join(problems)
    return True, "; ".join(summary)


def memory_bw(ta, facts: Dict[int, TraceFile]) -> Result:
    df = ta.get_memory_bw_summary(ranks=sorted(facts))
    problems, summary = [], []
    for rank, f in sorted(facts.items()):
        copies = [a for a in f.gpu() if kernel_type(a) == "MEMORY"]
        if not copies:
            continue
        rows = None
        if df is not None and not df.empty and rank in df.index.get_level_values(0):
            rows = df.xs(rank, level=0)
        if rows is None or rows.empty:
            problems.append(
                f"rank {rank}: empty summary for {len(copies)} copies/memsets "
                "(HTA reads args 'memory bandwidth (GB/s)'; zero or missing points are dropped)"
            )
            continue
        expect: Dict[str, list] = defaultdict(list)
        for a in copies:
            if a.dur > 0:  # the least bandwidth the written dur allows
                expect[memcpy_type(a)].append(a.args.get("bytes", 0) / duration_ns_range(a)[1])
        got_names = set(rows.index)
        if got_names != set(expect):
            problems.append(
                f"rank {rank}: HTA's copy types {sorted(got_names)} != the args' {sorted(expect)} "
                "(HTA takes the type from the first 11 characters of the name)"
            )
        for name in sorted(got_names & set(expect)):
            hta_max = rows.loc[name, ("memory_bw_gbps", "max")]
            want = max(expect[name])
            if hta_max < want * (1 - 1e-3):
                problems.append(
                    f"rank {rank} {name}: HTA max {hta_max:.4g} GB/s < bytes/dur {want:.4g}"
                )
        summary.append(
            f"rank {rank}: "
            + ", ".join(
                f"{n} max {rows.loc[n, ('memory_bw_gbps', 'max')]:.3g} GB/s"
                for n in sorted(got_names)
            )
        )
    if not summary and not problems:
        return False, "no copies or memsets in any rank: nothing to check"
    if problems:
        return False, "; ".join(problems)
    return True, "; ".join(summary)


def queue_length(ta, facts: Dict[int, TraceFile]) -> Result:
    series = ta.get_queue_length_time_series(ranks=sorted(facts))
    summary_df = ta.get_queue_length_summary(ranks=sorted(facts))
    problems, summary = [], []
    for rank, f in sorted(facts.items()):
        gpu_by_corr = {a.correlation: a for a in f.gpu() if a.stream >= 0 and a.correlation >= 0}
        per_stream = Counter(
            gpu_by_corr[a.correlation].stream for a in f.launches() if a.correlation in gpu_by_corr
        )
        if not per_stream:
            problems.append(
                f"rank {rank}: no launch call (cudaLaunchKernel, ...) matches a GPU activity"
            )
            continue
        s = series.get(rank)
        if s is None:
            problems.append(f"rank {rank}: no time series for {sum(per_stream.values())} launches")
            continue
        for stream, n in sorted(per_stream.items()):
            q = s[s["stream"] == stream]["queue_length"]
            if len(q) != 2 * n:
                problems.append(
                    f"rank {rank} stream {stream}: {len(q)} points, expected 2 x {n} launches"
                )
            if len(q) and q.min() < 0:
                problems.append(
                    f"rank {rank} stream {stream}: queue length down to {q.min()} "
                    "(GPU activity before its launch)"
                )
            if len(q) and q.max() > n:
                problems.append(
                    f"rank {rank} stream {stream}: queue length {q.max()} > {n} launches"
                )
        if summary_df is None or rank not in summary_df.index.get_level_values(0):
            problems.append(f"rank {rank}: missing from get_queue_length_summary")
        summary.append(
            f"rank {rank}: "
            + ", ".join(
                f"stream {st} max {s[s['stream'] == st]['queue_length'].max()}"
                for st in sorted(per_stream)
            )
        )
    if problems:
        return False, "; ".join(problems)
    return True, "; ".join(summary)
