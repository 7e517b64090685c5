"""Checks a dump of an NVTX run (tests/gpu/nvtx.sh): the window's trace has a
gpu_user_annotation span per range with GPU work, and `cupmon stats --by-range`
counts the kernels each range launched.

usage: nvtx_check.py CUPMON LABEL DUMP_PARENT RANGE=KERNELS|RANGE=+ ...
  RANGE=N: exactly N kernels under RANGE; RANGE=+: at least one; RANGE=0: none."""
import glob
import gzip
import json
import subprocess
import sys

cupmon, label, parent, *expect = sys.argv[1:]
dumps = [d for d in glob.glob(parent + "/*") if glob.glob(d + "/window-*.trace.json.gz")]
if len(dumps) != 1:
    print(f"FAIL {label}: expected one dump with a window trace under {parent}, found {dumps}")
    sys.exit(0)
dump = dumps[0]
trace = json.load(gzip.open(sorted(glob.glob(dump + "/window-*.trace.json.gz"))[0]))
spans = {}
for e in trace["traceEvents"]:
    if e.get("cat") == "gpu_user_annotation":
        spans[e["name"]] = spans.get(e["name"], 0) + 1
out = subprocess.run([cupmon, "stats", dump, "--by-range"], capture_output=True, text=True)
table = out.stdout.split("GPU time by range", 1)[-1].splitlines()[2:]
kernels = {}
for line in table:
    words = line.split()
    if not words:
        continue
    if "(outside any range)" in line:
        kernels["(outside)"] = int(words[-4])
    else:
        kernels[" ".join(words[:-5])] = int(words[-4])
bad = []
for e in expect:
    name, want = e.split("=")
    got = kernels.get(name, 0)
    if want == "+":
        ok = got > 0 and spans.get(name, 0) > 0
    else:
        ok = got == int(want) and (spans.get(name, 0) > 0) == (int(want) > 0)
    if not ok:
        bad.append(f"{name}: {got} kernels, {spans.get(name, 0)} spans, expected {want}")
verdict = "PASS" if not bad else "FAIL"
print(f"{verdict} {label}: kernels by range {kernels}; spans {spans}" + (f"; {bad}" if bad else ""))
