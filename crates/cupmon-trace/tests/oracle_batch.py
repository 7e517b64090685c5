#!/usr/bin/env python3
"""Run the seed's merge (the oracle) on many cases in one process.

usage: oracle_batch.py REFERENCE_DIR CASES.jsonl
Each line: {"cpu": path, "window": path, "out": path, "trace_name": str|null}.
A case the seed rejects leaves `seed.error` (the exception) beside `out` instead.
"""
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
import seed_merge  # noqa: E402  (the oracle's own loader)

seed = seed_merge.load_seed()
for line in open(sys.argv[2]):
    case = json.loads(line)
    base = os.path.dirname(case["out"])
    try:
        window = seed_merge.load_window(case["window"])
        seed.merge_trace_window_into_chrome_trace(
            case["cpu"], case["out"], window, trace_name=case["trace_name"]
        )
    except Exception as e:  # the seed raising is a result to compare, not a failure
        with open(os.path.join(base, "seed.error"), "w") as f:
            f.write(f"{type(e).__name__}: {e}")
        if os.path.exists(case["out"]):
            os.remove(case["out"])
