"""From raw results (results.json) to figures, goal checks, the table and RESULTS.md.

Everything here is recomputed from the raw per-run numbers, so results of several
commands (the suite split to fit the device's 10-minute limit) can be merged afterwards:
`bench.py report a/results.json b/results.json -o RESULTS.md`.

How the figures are computed:
- per configuration: median and min..max of the per-run time per unit (launch or step);
- added cost: per repetition, config minus bare of the same repetition (runs are
  interleaved, so a pair shares the machine's state), then median and min..max of those
  differences;
- noise: the spread (max - min) of the bare runs, at least 0.5% of their median; an added
  cost below it is not distinguishable from zero;
- ratios: median added cost of cupmon over that of the floor (minimal consumer), and of the
  cupmon window over torch.profiler's.
"""

import statistics

ALWAYS_ON_GOAL = 1.1   # cupmon always-on adds at most this times the floor's added cost
WINDOW_GOAL = 0.6      # a cupmon window adds at most this times torch.profiler's
BURST_RATE_GOAL = 1e6  # kernels/s
BURST_SECONDS_GOAL = 10
FLAT_GOAL = 1.1        # last RSS <= this times the RSS at 10 s

CONFIG_LABELS = {
    "bare": "bare",
    "floor": "minimal consumer",
    "cupmon": "cupmon always-on",
    "window": "cupmon window",
    "torchprof": "torch.profiler",
    "cupmon_tmpfs": "cupmon always-on, dump on tmpfs",
}


def _stats(values):
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def summarize_workload(w):
    """Figures of one workload from its runs (see the module doc)."""
    runs = w["configs"]
    bare = {r["rep"]: r["value"] for r in runs.get("bare", []) if r.get("ok")}
    bare_stats = _stats(list(bare.values()))
    noise = None
    if bare_stats:
        noise = max(bare_stats["max"] - bare_stats["min"], 0.005 * bare_stats["median"])
    kpu = w.get("kernels_per_unit")
    out = {"noise": noise, "configs": {}}
    for name, rs in runs.items():
        ok = [r for r in rs if r.get("ok")]
        s = {"runs": len(rs), "ok": len(ok), "value": _stats([r["value"] for r in ok])}
        diffs = [r["value"] - bare[r["rep"]] for r in ok if r["rep"] in bare]
        s["added"] = _stats(diffs) if name != "bare" else None
        if s["added"] and kpu:
            s["added_ns_per_kernel"] = s["added"]["median"] * w["unit_ns"] / kpu
        s["maxrss_mib"] = _stats([r["maxrss_kb"] / 1024 for r in ok if r.get("maxrss_kb")])
        rec = [r["kernels_recorded"] for r in ok if r.get("kernels_recorded") is not None]
        s["kernels_recorded"] = _stats(rec)
        dropped = [r["dropped"] for r in ok if r.get("dropped") is not None]
        s["dropped_max"] = max(dropped) if dropped else None
        per_m = [r["dump_bytes"] / r["kernels_recorded"] for r in ok
                 if r.get("dump_bytes") and r.get("kernels_recorded")]
        s["dump_mb_per_mkernel"] = statistics.median(per_m) if per_m else None
        launched = [r["kernels_launched"] for r in ok if r.get("kernels_launched")]
        s["kernels_launched"] = launched[0] if launched else None
        out["configs"][name] = s
    out["ratio_always_on"] = _ratio(out, "cupmon", "floor")
    out["ratio_window"] = _ratio(out, "window", "torchprof")
    return out


def _ratio(summary, num, den):
    a = summary["configs"].get(num, {}).get("added")
    b = summary["configs"].get(den, {}).get("added")
    if not a or not b:
        return None
    r = {"num": a["median"], "den": b["median"], "noise": summary["noise"]}
    r["ratio"] = a["median"] / b["median"] if b["median"] > 0 else None
    # A floor within noise has no meaningful ratio; then compare absolute added costs.
    r["den_measurable"] = summary["noise"] is not None and b["median"] > summary["noise"]
    return r


def goal_always_on(summaries):
    return _goal_ratio(summaries, "ratio_always_on", ALWAYS_ON_GOAL,
                       "cupmon always-on added cost <= %.1fx the minimal consumer's" % ALWAYS_ON_GOAL)


def goal_window(summaries):
    return _goal_ratio(summaries, "ratio_window", WINDOW_GOAL,
                       "cupmon window added cost <= %.1fx torch.profiler's" % WINDOW_GOAL)


def _goal_ratio(summaries, key, limit, title):
    """Per workload: met when the ratio is within the limit; "within noise" when it is not
    but the excess over the limit is smaller than the run-to-run noise (not a confirmed
    miss); missed otherwise. Overall: missed if any workload missed, met if all met."""
    details, verdicts = [], []
    for name, (w, s) in summaries.items():
        r = s.get(key)
        if not r:
            continue
        unit, noise = w["unit"], r["noise"] or 0.0
        excess = r["num"] - limit * max(r["den"], 0.0)
        if excess <= 0:
            verdict = "met"
        elif excess <= noise:
            verdict = "within noise"
        else:
            verdict = "missed"
        if r["den_measurable"] and r["ratio"] is not None:
            d = f"{name}: {r['ratio']:.2f}x ({_fmt(r['num'])} vs {_fmt(r['den'])} {unit} added)"
        else:
            d = (f"{name}: reference added cost {_fmt(r['den'])} {unit} is within noise; "
                 f"cupmon adds {_fmt(r['num'])} {unit}")
        details.append(f"{d}, noise {_fmt(noise)}: {verdict}")
        verdicts.append(verdict)
    if not verdicts:
        return {"goal": title, "status": "not run", "details": ["no workload measured both"]}
    status = ("missed" if "missed" in verdicts else
              "met" if all(v == "met" for v in verdicts) else "within noise")
    return {"goal": title, "status": status, "details": details}


def goal_burst(burst):
    title = (f"zero dropped records at >= {BURST_RATE_GOAL / 1e6:.0f}M kernels/s for "
             f"{BURST_SECONDS_GOAL} s, default settings")
    run = (burst or {}).get("cupmon")
    if not run:
        return {"goal": title, "status": "not run",
                "details": [(burst or {}).get("note") or "part not run in this command"]}
    if not run.get("ok"):
        return {"goal": title, "status": "missed", "details": [f"run failed: {run.get('error')}"]}
    rate, dropped = run.get("rate") or 0, run.get("dropped")
    rec, launched = run.get("kernels_recorded"), run.get("kernels_launched")
    d = (f"{rate / 1e6:.2f}M kernels/s for {run.get('seconds', 0):.1f} s, {launched} launched, "
         f"{rec} recorded, {dropped} dropped")
    if dropped is None:
        return {"goal": title, "status": "missed", "details": [d + " (dropped count unknown)"]}
    complete = rec is not None and launched is not None and rec >= launched
    if dropped == 0 and complete and rate >= BURST_RATE_GOAL:
        status = "met"
    elif rate < BURST_RATE_GOAL and dropped == 0 and complete:
        status = "inconclusive"
        d += f" (rate below {BURST_RATE_GOAL / 1e6:.0f}M/s: the workload could not reach it)"
    else:
        status = "missed"
    return {"goal": title, "status": status, "details": [d]}


def goal_memory(memory):
    title = f"memory flat over a {memory.get('seconds', 60) if memory else 60:g} s always-on run"
    if not memory or not memory.get("samples"):
        return {"goal": title, "status": "not run",
                "details": [(memory or {}).get("note") or (memory or {}).get("error")
                            or "part not run in this command"]}
    m = memory_figures(memory)
    d = (f"RSS first {m['first']:.0f} MiB, at 10 s {m['at10']:.0f} MiB, last {m['last']:.0f} MiB, "
         f"max {m['max']:.0f} MiB over {m['span']:.0f} s; last/at-10s = {m['growth']:.3f}"
         + (f", slope after 10 s {m['slope_mib_per_min']:+.2f} MiB/min" if m["slope_mib_per_min"] is not None else ""))
    status = "met" if m["growth"] <= FLAT_GOAL and m["span"] >= 0.9 * memory["seconds"] else "missed"
    if memory.get("error"):
        d += f"; run error: {memory['error']}"
        status = "missed"
    return {"goal": title, "status": status, "details": [d]}


def memory_figures(memory):
    s = [(t, kb / 1024) for t, kb in memory["samples"]]
    at10 = next((v for t, v in s if t >= 10), s[-1][1])
    vals = [v for _, v in s]
    # Least-squares slope after the first 10 s: a slow leak shows here before it
    # shows in last/at-10s.
    tail = [(t, v) for t, v in s if t >= 10]
    slope = None
    if len(tail) >= 3:
        mt = sum(t for t, _ in tail) / len(tail)
        mv = sum(v for _, v in tail) / len(tail)
        den = sum((t - mt) ** 2 for t, _ in tail)
        slope = 60 * sum((t - mt) * (v - mv) for t, v in tail) / den if den else None
    return {"first": vals[0], "at10": at10, "last": vals[-1], "max": max(vals),
            "span": s[-1][0] - s[0][0], "growth": vals[-1] / at10 if at10 else float("inf"),
            "slope_mib_per_min": slope}


# ---------------------------------------------------------------- formatting

def _fmt(x, digits=4):
    if x is None:
        return "-"
    if isinstance(x, int):
        return str(x)
    if abs(x) >= 10 ** digits:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def _spread(s):
    if not s:
        return "-"
    if s["n"] == 1:
        return _fmt(s["median"])
    return f"{_fmt(s['median'])} [{_fmt(s['min'])}..{_fmt(s['max'])}]"


HEADER = ["workload", "config", "ok/runs", "time per unit: median [min..max]",
          "added over bare: median [min..max]", "added ns/kernel", "peak RSS MiB",
          "kernels recorded", "dropped", "dump MB/M kernels"]


def table_rows(results, summaries):
    rows = []
    for name, (w, s) in summaries.items():
        for cname in w["order"]:
            c = s["configs"].get(cname)
            if c is None:
                continue
            rows.append([
                f"{name} ({w['unit']})", CONFIG_LABELS.get(cname, cname), f"{c['ok']}/{c['runs']}",
                _spread(c["value"]), _spread(c["added"]) if c["added"] else "",
                _fmt(c.get("added_ns_per_kernel")) if c.get("added_ns_per_kernel") is not None else "",
                _fmt(c["maxrss_mib"]["median"], 4) if c["maxrss_mib"] else "-",
                _fmt(int(c["kernels_recorded"]["median"])) if c["kernels_recorded"] else "",
                _fmt(c["dropped_max"]) if c["dropped_max"] is not None else "",
                _fmt(c["dump_mb_per_mkernel"], 4) if c["dump_mb_per_mkernel"] else "",
            ])
    return rows


def text_table(rows):
    widths = [max(len(str(r[i])) for r in [HEADER] + rows) for i in range(len(HEADER))]
    line = lambda r: "  ".join(str(v).ljust(widths[i]) for i, v in enumerate(r)).rstrip()
    return "\n".join([line(HEADER), line(["-" * w for w in widths])] + [line(r) for r in rows])


def md_table(header, rows):
    esc = lambda v: str(v).replace("|", "\\|")
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(esc(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def burst_lines(burst):
    if not burst:
        return []
    out = []
    for c in burst.get("calibration", []):
        out.append(f"calibration ({c.get('config', 'floor')}) threads={c['threads']} graph={c['graph']}: "
                   + (f"{c['rate'] / 1e6:.2f}M kernels/s" if c.get("ok") else f"failed: {c.get('error')}"))
    if burst.get("chosen"):
        out.append(f"chosen burst mode: threads={burst['chosen']['threads']} graph={burst['chosen']['graph']}"
                   f" ({burst.get('chosen_why', '')})")
    if burst.get("disk"):
        out.append("disk probe: " + disk_line(burst["disk"]))
    variants = [k for k in burst if k.startswith("cupmon_env:")]
    for cname in ["bare", "floor", "cupmon", "cupmon_tmpfs"] + variants:
        r = burst.get(cname)
        if not r:
            continue
        if r.get("ok"):
            read = records_with_cupmon(cname)
            out.append(f"burst under {config_label(cname)}: {r['rate'] / 1e6:.3f}M kernels/s for "
                       f"{r['seconds']:.1f} s; launched {r['kernels_launched']}, recorded "
                       f"{_fmt(r.get('kernels_recorded')) if read else 'n/a (read by no one)'}, dropped {_fmt(r.get('dropped'))}, "
                       f"peak RSS {r['maxrss_kb'] / 1024:.0f} MiB"
                       + (f", dump {r['dump_bytes'] / 1e6:.0f} MB" if r.get("dump_bytes") else ""))
            if r.get("writer"):
                out.append(f"dump writer ({config_label(cname)}): {r['writer']}")
        else:
            out.append(f"burst under {config_label(cname)}: FAILED ({r.get('error')})")
    for key in ("tmpfs_note", "note"):
        if burst.get(key):
            out.append(burst[key])
    return out


def records_with_cupmon(cname):
    """Whether the configuration runs under cupmon (so it leaves a dump to read)."""
    return cname == "window" or cname == "cupmon" or cname.startswith("cupmon_")


def config_label(cname):
    """Table label of a configuration; `cupmon_env:VAR=VALUE` is a burst variant."""
    if cname.startswith("cupmon_env:"):
        return f"cupmon always-on, {cname.split(':', 1)[1]}"
    return CONFIG_LABELS.get(cname, cname)


def disk_line(disk):
    """One line for the disk probe of the burst part."""
    if not disk or disk.get("write_mb_s") is None:
        return f"not run ({(disk or {}).get('error') or 'DISK_PROBE_MB=0'})"
    sysctl = ", ".join(f"{k} {v}" for k, v in disk.get("sysctl", {}).items())
    return (f"{disk['mb']} MB in 4 MiB writes to {disk['folder']} ({disk.get('fs')}): "
            f"{disk['write_mb_s']:.0f} MB/s buffered, {disk['write_fsync_mb_s']:.0f} MB/s with fsync"
            + (f"; vm.{sysctl}" if sysctl else ""))


def memory_lines(memory):
    if not memory:
        return []
    if not memory.get("samples"):
        return [f"memory run: {memory.get('note') or memory.get('error') or 'no samples'}"]
    m = memory_figures(memory)
    out = [f"memory run: empty_kernel at {memory['rate'] / 1e3:.0f}k kernels/s for {memory['seconds']:g} s "
           f"under cupmon always-on; VmRSS of pid {memory.get('pid')} sampled every second: "
           f"first {m['first']:.1f} MiB, at 10 s {m['at10']:.1f}, last {m['last']:.1f}, "
           f"max {m['max']:.1f} (last/at-10s {m['growth']:.3f}"
           + (f", slope after 10 s {m['slope_mib_per_min']:+.2f} MiB/min)" if m["slope_mib_per_min"] is not None else ")")]
    if memory.get("kernels_recorded") is not None:
        out.append(f"memory run: launched {memory.get('kernels_launched')}, recorded "
                   f"{memory['kernels_recorded']}, dropped {_fmt(memory.get('dropped'))}, "
                   f"dump {memory.get('dump_bytes', 0) / 1e6:.0f} MB")
    return out


def ratio_lines(summaries):
    out = []
    for name, (w, s) in summaries.items():
        for key, label in (("ratio_always_on", "cupmon always-on / minimal consumer"),
                           ("ratio_window", "cupmon window / torch.profiler")):
            r = s.get(key)
            if not r:
                continue
            ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "n/a"
            note = "" if r["den_measurable"] else " (reference within noise)"
            out.append(f"{name}: {label} added cost = {ratio}{note} "
                       f"({_fmt(r['num'])} / {_fmt(r['den'])} {w['unit']}, noise {_fmt(r['noise'])})")
    return out


def analyse(results):
    summaries = {name: (w, summarize_workload(w)) for name, w in results.get("workloads", {}).items()}
    goals = [goal_always_on(summaries), goal_window(summaries),
             goal_burst(results.get("burst")), goal_memory(results.get("memory"))]
    return summaries, goals


def render_text(results):
    summaries, goals = analyse(results)
    out = []
    if results["meta"].get("dry_run"):
        out.append("DRY RUN: every number below is synthetic")
    out.append(text_table(table_rows(results, summaries)))
    out += [""] + ratio_lines(summaries) + burst_lines(results.get("burst")) + memory_lines(results.get("memory"))
    out.append("")
    for g in goals:
        out.append(f"GOAL {g['status'].upper():<12} {g['goal']}: " + "; ".join(d for d in g["details"] if d))
    if results.get("failures"):
        out.append("")
        out.append(f"{len(results['failures'])} sub-run(s) FAILED (logs under {results['meta'].get('out')}/logs):")
        for f in results["failures"]:
            last = next((l for l in reversed(f.get("stderr_tail", "").splitlines()) if l.strip()), "")
            out.append(f"  {f['part']} / {f['config']} rep {f.get('rep')}: {f['error']}"
                       + (f" | {last.strip()[:160]}" if last else ""))
    return "\n".join(out)


def render_markdown(results):
    meta = results["meta"]
    summaries, goals = analyse(results)
    out = ["# cupmon overhead and throughput benchmarks (issue 7)", ""]
    if meta.get("dry_run"):
        out += ["**DRY RUN: every number below is synthetic.**", ""]
    out += [
        f"- date: {meta.get('date')}",
        f"- GPU: {meta.get('gpu')}, driver {meta.get('driver')}",
        f"- CUDA: {meta.get('cuda')}",
        f"- CUPTI: {meta.get('cupti')}",
        "- libcupti the minimal consumer used: "
        + ("; ".join(f"{k}: {v}" for k, v in meta.get("libcupti_by_part", {}).items()) or "-"),
        f"- torch: {meta.get('torch', '-')}",
        f"- cupmon: {meta.get('cupmon_version')} ({meta.get('cupmon_bin')})",
        f"- host: {meta.get('host')}, {meta.get('cpus')} CPUs",
        f"- parts: {', '.join(meta.get('parts', []))}; repetitions: {meta.get('reps')}",
        f"- command: `{meta.get('command')}`",
        "",
        "Configurations run interleaved (round-robin within each repetition, rotating the start);",
        "\"added over bare\" is the median of per-repetition differences to the bare run of the same",
        "repetition. Peak RSS is ru_maxrss from wait4 of the started process (for `cupmon run`, the",
        "largest of cupmon's CLI and the workload, i.e. the workload). Dump MB per million kernels is",
        "the size of the always-on dump directory (windows excluded) over the kernels it recorded.",
        "",
        md_table(HEADER, table_rows(results, summaries)),
        "",
    ]
    extra = ratio_lines(summaries) + burst_lines(results.get("burst")) + memory_lines(results.get("memory"))
    out += [f"- {line}" for line in extra]
    out += ["", "## Goals", "", md_table(["goal", "status", "numbers"],
            [[g["goal"], g["status"], "; ".join(d for d in g["details"] if d)] for g in goals])]
    if results.get("failures"):
        out += ["", "## Failed sub-runs", ""]
        for f in results["failures"]:
            out += [f"### {f['part']} / {f['config']} rep {f.get('rep')}: {f['error']}", ""]
            if f.get("cmd"):
                out += [f"`{f['cmd']}` (log `{f.get('log', '')}.*`)", ""]
            if f.get("stderr_tail", "").strip():
                out += ["```", f["stderr_tail"].rstrip(), "```", ""]
    notes = results.get("notes", [])
    if notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


def merge(results_list):
    """Merge results of several commands (each ran some parts) into one."""
    merged = {"meta": dict(results_list[0]["meta"]), "workloads": {}, "failures": [], "notes": []}
    parts = []
    for r in results_list:
        parts += r["meta"].get("parts", [])
        merged["workloads"].update(r.get("workloads", {}))
        for key in ("burst", "memory"):
            if r.get(key):
                merged[key] = r[key]
        merged["failures"] += r.get("failures", [])
        merged["notes"] += r.get("notes", [])
        for k, v in r["meta"].items():
            if merged["meta"].get(k) in (None, "", "unknown"):
                merged["meta"][k] = v
    merged["meta"]["parts"] = parts
    merged["meta"]["command"] = " ; ".join(r["meta"].get("command", "") for r in results_list)
    merged["meta"]["dry_run"] = any(r["meta"].get("dry_run") for r in results_list)
    return merged
