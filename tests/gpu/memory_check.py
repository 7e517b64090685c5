#!/usr/bin/env python3
"""MEMORY2 and MEMORY_POOL on real CUPTI: the allocations memory.cu made (it prints
their addresses and sizes) against the dump's records, decoded by cupmon.

usage: memory_check.py CUPMON DUMP_DIR PROGRAM_OUTPUT"""
import json
import subprocess
import sys

from checks import check, exit_code

cupmon, dump, program_output = sys.argv[1:4]
made = json.loads([l for l in open(program_output) if l.startswith("{")][-1])
win = dump + ".window.json"
subprocess.run([cupmon, "decode", dump, "-o", win], check=True, capture_output=True)
events = json.load(open(win))["events"]
mem = [e for e in events if e["kind"] == "gpu_memory"]
pools = [e for e in events if e["kind"] == "gpu_memory_pool"]
allocs = {(e["address"], e["bytes"]) for e in mem if e["operation"] == 1}
frees = {e["address"] for e in mem if e["operation"] == 2}
want_dev = {(a, n) for a, n in made["device"]}
check("memory: every cudaMalloc is an allocation record with its address and size",
      want_dev <= allocs, f"made {sorted(want_dev)}; recorded {sorted(allocs)[:8]}")
check("memory: every cudaFree is a release record of that address",
      {a for a, _ in made["device"]} <= frees, f"{len(frees)} releases")
want_async = {(a, n) for a, n in made["async"]}
async_recs = {(e["address"], e["bytes"]) for e in mem if e["is_async"] and e["operation"] == 1}
check("memory: cudaMallocAsync allocations are stream-ordered records from a pool",
      want_async <= async_recs and all(e["pool_type"] != 0 for e in mem if e["is_async"]),
      f"made {sorted(want_async)}; async records {sorted(async_recs)}")
check("memory: the timestamps are Unix ns, in order",
      all(e["timestamp_ns"] > 10**18 for e in mem)
      and [e["timestamp_ns"] for e in mem] == sorted(e["timestamp_ns"] for e in mem),
      f"{len(mem)} records")
print(f"INFO memory pool records: {[(p['operation'], p['size'], p['utilized_size']) for p in pools]}")
check("memory: the default pool's operations are recorded (MEMORY_POOL)", len(pools) > 0,
      f"{len(pools)} records")
stats = subprocess.run([cupmon, "stats", dump], capture_output=True, text=True).stdout
check("memory: cupmon stats counts MEMORY2 and MEMORY_POOL", "MEMORY2" in stats and "MEMORY_POOL" in stats,
      " ".join(l.strip() for l in stats.splitlines() if "MEMORY" in l))
trace = dump + ".trace.json"
subprocess.run([cupmon, "decode", dump, "--format", "chrome", "-o", trace], check=True, capture_output=True)
tev = json.load(open(trace))["traceEvents"]
instants = [e for e in tev if e.get("name") == "[memory]"]
check("memory: the trace shows each operation as a [memory] instant, as profile_memory does",
      len(instants) == len(mem), f"{len(instants)} instants, {len(mem)} records")
sys.exit(exit_code())
