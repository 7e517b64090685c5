"""Checks a dump of an NVTX run (tests/gpu/nvtx.sh): the window's trace has a
gpu_user_annotation span per range with GPU work, and `cupmon stats --by-range`
counts the kernels each range launched; the ranges and marks on the CPU thread.

usage: nvtx_check.py CUPMON LABEL DUMP_PARENT EXPECT ...
  RANGE=N: exactly N kernels under RANGE; RANGE=+: at least one; RANGE=0: none.
  slice:NAME        a user_annotation slice NAME on a thread that launched, holding (same
                    thread, start to end) every launch correlated to its range (RANGE=+
                    says whether it launched any)
  mark:NAME         a thread instant (ph i, s t, cat nvtx_mark) NAME on a launching thread
  nested:OUTER>INNER  every INNER slice lies within an OUTER slice of its thread
  arg:NAME:KEY=VALUE  the slice or mark NAME has args[KEY] == VALUE (VALUE "#...": a color)
  open:NAME         slice NAME is drawn to the window's end, flagged "Open at window end"
Every run also checks that a trace made from the dump (`cupmon decode`) draws the same
slices and marks as the window's own trace, and that `export --exact` draws none."""
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
    if ":" in e.split("=")[0]:
        continue
    name, want = e.split("=")
    got = kernels.get(name, 0)
    if want == "+":
        ok = got > 0 and spans.get(name, 0) > 0
    else:
        ok = got == int(want) and (spans.get(name, 0) > 0) == (int(want) > 0)
    if not ok:
        bad.append(f"{name}: {got} kernels, {spans.get(name, 0)} spans, expected {want}")


def cpu_checks(expect):
    """The CPU-side expectations (see the usage); returns what failed."""
    fails = []
    window = json.load(open(sorted(glob.glob(dump + "/window-*.json"))[0]))
    events = trace["traceEvents"]
    slices = [e for e in events if e.get("cat") == "user_annotation" and e.get("ph") == "X"]
    marks = [e for e in events if e.get("cat") == "nvtx_mark"]
    # A range that cannot nest is on its thread's "<tid> (NVTX ranges not nested)" track.
    def thread(e):
        return str(e["tid"]).split(" ")[0]

    launch_tids = {str(e["tid"]) for e in events if e.get("cat") == "cuda_runtime"}
    ranges = {a.get("external_id"): a for a in window.get("cpu_annotations", []) if a["type"] == "range"}
    ext_of = {
        e["correlation_id"]: e["external_id"]
        for e in window["events"]
        if e["kind"] == "external_correlation" and e["external_kind"] == 4
    }
    calls = [e for e in window["events"] if e["kind"] == "cuda_runtime"]

    def inside(outer, inner):
        return outer["ts"] - 1e-3 <= inner["ts"] and inner["ts"] + inner.get("dur", 0) <= outer["ts"] + outer["dur"] + 1e-3

    # How far a launch reaches past its range (ns): CUPTI's clock against CLOCK_REALTIME,
    # which the ranges read. Up to SLACK_NS is allowed, and the worst is printed.
    SLACK_NS = 2000
    worst = 0
    for e in expect:
        kind, _, what = e.partition(":")
        if kind == "slice":
            found = [s for s in slices if s["name"] == what]
            if not found or not all(thread(s) in launch_tids for s in found):
                fails.append(f"slice {what}: {len(found)} on launching threads {launch_tids}")
                continue
            for call in calls:
                r = ranges.get(ext_of.get(call["correlation_id"]))
                if r is None or r["name"] != what:
                    continue
                over = max(r["start_ns"] - call["start_ns"], call["end_ns"] - r["end_ns"])
                worst = max(worst, over)
                if not (r["thread_id"] == call["thread_id"] and over <= SLACK_NS):
                    fails.append(f"slice {what}: launch {call['correlation_id']} ({call['start_ns']}..{call['end_ns']}, tid {call['thread_id']}) outside its range {r}")
                    break
        elif kind == "mark":
            found = [m for m in marks if m["name"] == what and m.get("ph") == "i" and m.get("s") == "t"]
            if not found or not all(thread(m) in launch_tids for m in found):
                fails.append(f"mark {what}: {len(found)} thread instants on launching threads")
        elif kind == "nested":
            outer, inner = what.split(">")
            inners = [s for s in slices if s["name"] == inner]
            bad_nest = [s for s in inners if not any(o["name"] == outer and thread(o) == thread(s) and inside(o, s) for o in slices)]
            if not inners or bad_nest:
                fails.append(f"nested {outer}>{inner}: {len(inners)} {inner}, {len(bad_nest)} not inside {outer}")
        elif kind == "arg":
            name, _, kv = what.partition(":")
            key, _, value = kv.partition("=")
            found = [s for s in slices + marks if s["name"] == name]
            got = [s.get("args", {}).get(key) for s in found]
            ok = found and all(g == value or (value == "#" and isinstance(g, str) and len(g) == 7 and g[0] == "#") for g in got)
            if not ok:
                fails.append(f"arg {name} {key}: {got}, expected {value}")
        elif kind == "open":
            found = [s for s in slices if s["name"] == what]
            last = max(e["ts"] + e.get("dur", 0) for e in slices + marks)
            if len(found) != 1 or found[0]["args"].get("Open at window end") is not True or found[0]["ts"] + found[0]["dur"] < last - 1e-3:
                fails.append(f"open {what}: {found}")
    # The same slices and marks in a trace made from the dump, none with --exact.
    def drawn(t):
        base = t["baseTimeNanoseconds"]
        return sorted(
            (e["cat"], e["name"], str(e["tid"]), round(base + e["ts"] * 1000), round(e.get("dur", 0) * 1000))
            for e in t["traceEvents"]
            if e.get("cat") in ("user_annotation", "nvtx_mark")
        )
    decoded = parent + "/decoded.trace.json"
    run = subprocess.run([cupmon, "decode", dump, "-o", decoded], capture_output=True, text=True)
    if run.returncode != 0:
        fails.append(f"decode: {run.stderr[-300:]}")
    elif drawn(json.load(open(decoded))) != drawn(trace):
        fails.append("the trace from the dump draws other slices or marks than the window's")
    exact = parent + "/exact.trace.json"
    window_file = sorted(glob.glob(dump + "/window-*.json"))[0]
    run = subprocess.run([cupmon, "export", "--window", window_file, "-o", exact, "--exact"], capture_output=True, text=True)
    if run.returncode != 0:
        fails.append(f"export --exact: {run.stderr[-300:]}")
    elif drawn(json.load(open(exact))):
        fails.append("export --exact draws NVTX slices or marks")
    print(f"INFO {label}: launches reach at most {worst} ns past their range (allowed {SLACK_NS})")
    return fails


cpu_expect = [e for e in expect if ":" in e.split("=")[0]]
if cpu_expect:
    bad += cpu_checks(cpu_expect)
verdict = "PASS" if not bad else "FAIL"
cpu = f"; {len(cpu_expect)} CPU-side checks" if cpu_expect else ""
print(f"{verdict} {label}: kernels by range {kernels}; spans {spans}{cpu}" + (f"; {bad}" if bad else ""))
