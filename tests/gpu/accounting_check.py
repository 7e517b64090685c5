#!/usr/bin/env python3
"""Part L of tests/gpu/run.sh: every kernel accounted for (issue 27).

usage: accounting_check.py LABEL DUMP [WORKLOAD_OUT]

With WORKLOAD_OUT (the `BENCH {json}` line of bench/gpu/empty_kernel.cu): PASS when
cupmon's launch counter (the meta's `launches`) equals the workload's own count exactly
and launched = recorded + dropped (nothing unaccounted). Without it (a torch.profiler
run inside `cupmon run`, where Kineto subscribes to CUPTI's callbacks too): PASS when
the launches were counted beside Kineto and nothing is unaccounted. Prints PASS/FAIL/INFO
lines; the exit status is 0 either way (run.sh counts the lines).
"""
import json
import sys


def meta_of(dump):
    raw = open(dump.rstrip("/") + "/cupti_monitor_meta.bin", "rb").read()
    return json.loads(raw[16:])


def main(label, dump, workload_out=None):
    try:
        meta = meta_of(dump)
    except (OSError, ValueError) as e:
        print(f"FAIL {label}: no readable dump meta in {dump}: {e}")
        return
    ledger = meta.get("launches")
    if not ledger:
        print(f"FAIL {label}: the meta has no launch ledger (a cupmon without the counter?)")
        return
    if not ledger.get("counted"):
        print(f"FAIL {label}: launches not counted: {ledger.get('not_counted')}")
        return
    launched, recorded = ledger["kernels_launched"], ledger["kernels_recorded"]
    dropped = meta.get("dropped_records", 0)
    unaccounted = launched - recorded - dropped
    print(f"INFO {label}: launched {launched}, recorded {recorded}, dropped {dropped}, "
          f"unaccounted {unaccounted}, graph launches {ledger.get('graph_launches', 0)} "
          f"(unsized {ledger.get('unsized_graph_launches', 0)}), gaps {len(ledger.get('gaps', []))}, "
          f"recoveries {len(ledger.get('recoveries', []))}")
    if workload_out:
        lines = [l for l in open(workload_out, errors="replace") if l.startswith("BENCH {")]
        if not lines:
            print(f"FAIL {label}: the workload printed no BENCH line ({workload_out})")
            return
        own = json.loads(lines[-1][len("BENCH "):])["total_kernels"]
        if launched == own:
            print(f"PASS {label}: cupmon counted exactly the workload's {own} kernels")
        else:
            print(f"FAIL {label}: cupmon counted {launched} kernels, the workload launched {own} "
                  f"({launched - own:+d})")
    if unaccounted == 0:
        print(f"PASS {label}: launched = recorded + dropped ({recorded} + {dropped})")
    else:
        print(f"FAIL {label}: {unaccounted} kernels neither recorded nor counted as dropped")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
