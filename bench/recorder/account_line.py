#!/usr/bin/env python3
"""One line of kernel accounting for a run of bench/gpu/empty_kernel.cu (issue 27).

usage: account_line.py DUMP WORKLOAD_OUT [--rss RSS_SAMPLES] [--floor MINCON_INFO]
                       [--label TEXT]

DUMP is the dump directory `cupmon run` wrote (its cupti_monitor_meta.bin), or with
--floor the minimal consumer's MINCON_INFO file stands in for it (the floor counts no
launches: only what it recorded). WORKLOAD_OUT holds the workload's `BENCH {json}`
line. RSS_SAMPLES has one `unix_s rss_kb hwm_kb` line per sample of the traced process.

Prints `ACCOUNT key=value ...`:
  workload_launched  the workload's own count (BENCH total_kernels)
  cupmon_launched    cupmon's launch counter (meta `launches`), or `not_counted`
  recorded           kernel records written (kept + retired)
  dropped            records CUPTI counted as dropped
  unaccounted        workload_launched - recorded - dropped (the loss nothing shows)
  counter_error      cupmon_launched - workload_launched (0 when the counter is exact)
  recoveries, gaps   cupmon's actions against stalls, and the gaps in delivery
  rss_first_kb, rss_last_kb, rss_max_kb, hwm_kb   memory of the traced process
Exit status 0 when the line could be made, 2 on unreadable input.
"""
import argparse
import json
import sys

# CUPTI 13.0's CONCURRENT_KERNEL record (CUpti_ActivityKernel10): records from bytes for
# a consumer that did not count them (no MINCON_COUNT); the burst makes only kernels.
KERNEL_RECORD_BYTES = 224


def read_meta(dump):
    raw = open(dump.rstrip("/") + "/cupti_monitor_meta.bin", "rb").read()
    if raw[:8] != b"CUPMMETA":
        raise ValueError(f"{dump}: not a cupmon meta (magic {raw[:8]!r})")
    return json.loads(raw[16:])


def read_bench(path):
    lines = [l for l in open(path, errors="replace") if l.startswith("BENCH {")]
    if not lines:
        raise ValueError(f"{path}: no `BENCH {{...}}` line from the workload")
    return json.loads(lines[-1][len("BENCH "):])


def read_rss(path):
    samples = []
    for line in open(path):
        parts = line.split()
        if len(parts) == 3 and all(p.isdigit() for p in parts[1:]):
            samples.append((float(parts[0]), int(parts[1]), int(parts[2])))
    if not samples:
        return {}
    rss = [s[1] for s in samples]
    return {"rss_first_kb": rss[0], "rss_last_kb": rss[-1], "rss_max_kb": max(rss),
            "hwm_kb": max(s[2] for s in samples), "rss_samples": len(samples)}


def account(meta, bench):
    launched = bench["total_kernels"]
    ledger = meta.get("launches")
    retired = (meta.get("retired") or {}).get("kernels", 0)
    dropped = meta.get("dropped_records")
    if ledger is None:
        # A cupmon without the counter: kernels kept in the meta's records by kind are
        # not in the meta, so recorded is the records count (only kernels in a burst).
        recorded = meta.get("records", 0)
        counted = "not_counted(no launch counter in this dump)"
    elif not ledger.get("counted"):
        recorded = ledger.get("kernels_recorded", 0)
        counted = "not_counted(" + str(ledger.get("not_counted", "?")).replace(" ", "_") + ")"
    else:
        recorded = ledger["kernels_recorded"]
        counted = ledger["kernels_launched"]
    row = {
        "workload_launched": launched,
        "cupmon_launched": counted,
        "recorded": recorded,
        "dropped": dropped if dropped is not None else "unknown",
        "unaccounted": launched - recorded - (dropped or 0) if dropped is not None else "unknown",
        "counter_error": counted - launched if isinstance(counted, int) else "n/a",
        "recoveries": len((ledger or {}).get("recoveries", [])),
        "gaps": len((ledger or {}).get("gaps", [])),
        "unsized_graph_launches": (ledger or {}).get("unsized_graph_launches", 0),
        "retired_kernels": retired,
        "session_open": meta.get("session_open"),
        "flush_longest_ms": meta.get("flush_longest_ms"),
        "flushes_skipped": meta.get("flushes_skipped", 0),
    }
    return row


def floor_account(info, bench):
    launched = bench["total_kernels"]
    if info.get("counted"):
        # MINCON_COUNT: the consumer counted its kernel records itself.
        recorded, exact = info["kernel_records"], True
    else:
        valid = info.get("valid_bytes", 0)
        recorded, exact = valid // KERNEL_RECORD_BYTES, valid % KERNEL_RECORD_BYTES == 0
    dropped = info.get("dropped_records", 0)
    return {
        "workload_launched": launched,
        "cupmon_launched": "n/a(floor)",
        "recorded": recorded,
        "recorded_exact": exact,
        "dropped": dropped,
        "unaccounted": launched - recorded - dropped,
        "flush_longest_ms": info.get("flush_longest_ms"),
        "cupti_api_version": info.get("cupti_api_version"),
    }


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dump")
    ap.add_argument("workload_out")
    ap.add_argument("--rss")
    ap.add_argument("--floor", help="the minimal consumer's MINCON_INFO file (no dump)")
    ap.add_argument("--label", default="")
    a = ap.parse_args(argv)
    try:
        bench = read_bench(a.workload_out)
        if a.floor:
            row = floor_account(json.load(open(a.floor)), bench)
        else:
            row = account(read_meta(a.dump), bench)
        if a.rss:
            row.update(read_rss(a.rss))
    except (OSError, ValueError, KeyError) as e:
        print(f"account_line.py: {e}", file=sys.stderr)
        return 2
    row["rate"] = round(bench.get("rate", 0))
    head = f"ACCOUNT {a.label} " if a.label else "ACCOUNT "
    print(head + " ".join(f"{k}={v}" for k, v in row.items()))
    if isinstance(row.get("unaccounted"), int) and row["unaccounted"] > 0:
        print(f"WARNING: {row['unaccounted']} kernels neither recorded nor counted as dropped",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
