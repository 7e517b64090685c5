#!/usr/bin/env python3
"""Run PyTorch's merge (the oracle) on many cases in one process.

usage: oracle_batch.py REFERENCE_DIR CASES.jsonl
Each line: {"cpu": path, "window": path, "out": path, "trace_name": str|null}.
A case PyTorch's merge rejects leaves `pytorch.error` (the exception) beside `out` instead.
"""
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
import seed_merge  # noqa: E402  (the oracle's own loader)

pytorch_merge = seed_merge.load_seed()  # the reference file's own names
for line in open(sys.argv[2]):
    case = json.loads(line)
    base = os.path.dirname(case["out"])
    try:
        window = seed_merge.load_window(case["window"])
        pytorch_merge.merge_trace_window_into_chrome_trace(
            case["cpu"], case["out"], window, trace_name=case["trace_name"]
        )
    except Exception as e:  # PyTorch's merge raising is a result to compare, not a failure
        with open(os.path.join(base, "pytorch.error"), "w") as f:
            f.write(f"{type(e).__name__}: {e}")
        if os.path.exists(case["out"]):
            os.remove(case["out"])
