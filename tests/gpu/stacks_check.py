"""Checks of issue 33 (tests/gpu/stacks.sh) on cupmon's and torch.profiler's traces.

usage:
  stacks_check.py compare TORCH_TRACE CUPMON_TRACE [WORKLOAD]
                                                    kernel -> line equals torch.profiler's
                                                    with_stack: per kernel (correlation id)
                                                    the same function (torch names frames
                                                    by their function's first line), by the
                                                    trace's python_function events and by
                                                    the op's stack in prof.events()
                                                    (TORCH_TRACE.lines.json, joined by the
                                                    kernel's External id); and the exact
                                                    line: the record_function label over
                                                    the op names a `# line: LABEL` line of
                                                    WORKLOAD
  stacks_check.py coverage CUPMON_TRACE FILE         share of kernel time attributed to FILE
  stacks_check.py cost BASE_JSON OFF_JSON ON_JSON [PAIRED_JSON...]
                                                    ns per launch added by stacks: judged
                                                    on the first paired run (blocks on and
                                                    off in one process, bench/stacks/
                                                    paired.py), the others (deeper stacks)
                                                    and the whole runs (no cupmon, stacks
                                                    off, on) printed as information
  stacks_check.py timing DUMP WHAT                   INFO: the stack read timed in the
                                                    program (CUPMON_PYTHON_STACK_TIMING=1)
  stacks_check.py backward CUPMON_TRACE FILE         under emit_nvtx: >= 90 % of the kernel
                                                    time launched from threads without
                                                    Python frames is "backward of" a
                                                    forward line of FILE (`# line: ` marks)
Prints PASS/FAIL lines (and the numbers).
"""
import gzip
from collections import Counter
import json
import os
import re
import sys

FRAME = re.compile(r"^(?P<file>.+)\((?P<line>\d+)\): (?P<func>.*)$")
LIBRARY = ("/torch/", "/functorch/", "/triton/", "/cupmon/", "/contextlib.py", "/threading.py")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)["traceEvents"]


def is_user(file):
    # torch.profiler names library files relative to site-packages ("torch/nn/...").
    path = file if file.startswith("/") else "/" + file
    return not any(part in path for part in LIBRARY) and not file.startswith("<")


def torch_lines(events):
    """correlation id -> (basename, first line, function) of the innermost user
    python_function frame enclosing the kernel's launch (None: no Python frame, e.g.
    autograd's threads). torch.profiler names a frame by its function's first line."""
    launches = {}
    frames = {}
    for e in events:
        cat = e.get("cat")
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = e
        elif cat == "python_function":
            m = FRAME.match(e.get("name", ""))
            if m and is_user(m["file"]):
                frames.setdefault((e["pid"], e["tid"]), []).append(
                    (e["ts"], e["ts"] + e.get("dur", 0), os.path.basename(m["file"]),
                     int(m["line"]), m["func"])
                )
    out = {}
    for e in events:
        if e.get("cat") != "kernel":
            continue
        corr = e.get("args", {}).get("correlation")
        launch = launches.get(corr)
        if launch is None:
            continue
        t = launch["ts"]
        enclosing = [
            f for f in frames.get((launch["pid"], launch["tid"]), []) if f[0] <= t <= f[1]
        ]
        if enclosing:
            inner = max(enclosing, key=lambda f: f[0])
            out[corr] = inner[2:]
        else:
            out[corr] = None
    return out


def cupmon_lines(events):
    """correlation id -> (basename, line, function, kernel name) from cupmon's args
    (`source line`, and the stack's first user frame for the function)."""
    out = {}
    for e in events:
        if e.get("cat") != "kernel":
            continue
        args = e.get("args", {})
        line = args.get("source line")
        if line is None or line.startswith("("):
            out[args.get("correlation")] = (None, e.get("name"))
            continue
        path, _, number = line.rpartition(":")
        function = ""
        for frame in args.get("python stack", "").split("\n"):
            if frame.startswith(line + " "):
                function = frame[len(line) + 1:].split(" [")[0]
                break
        out[args.get("correlation")] = ((os.path.basename(path), int(number), function), e.get("name"))
    return out


def compare(torch_trace, cupmon_trace, workload=None):
    want = torch_lines(load(torch_trace))
    got = cupmon_lines(load(cupmon_trace))
    common = [c for c in want if c in got]
    bad, neither = [], 0
    for c in common:
        w, (g, _) = want[c], got[c]
        if w is None and g is None:
            neither += 1  # the autograd engine's threads: no Python frames on either side
            continue
        # Same file and function (torch: qualname's last part), line inside it.
        same = (w is not None and g is not None and w[0] == g[0]
                and g[2].split(".")[-1] == w[2].split(".")[-1] and g[1] >= w[1])
        if not same:
            bad.append((c, w, g))
    compared = len(common) - neither
    ok = compared > 0 and not bad
    print(f"{'PASS' if ok else 'FAIL'} eager kernel -> function equals torch.profiler's "
          f"python_function per kernel: {compared - len(bad)}/{compared} kernels launched "
          f"from Python ({neither} more from threads without Python frames on both sides); "
          f"torch kernels {len(want)}, cupmon kernels {len(got)}")
    for c, w, g in bad[:10]:
        print(f"  correlation {c}: torch.profiler {w}, cupmon {g}")
    op_stacks(torch_trace, got)
    if not workload:
        print("SKIPPED exact line per kernel: no workload with `# line: LABEL` marks given")
        return
    marks = {}
    with open(workload) as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"# line: (\w+)$", text.rstrip())
            if m:
                marks[m[1]] = f"{os.path.basename(workload)}:{number}"
    labelled_line(torch_trace, got, marks)


def op_stacks(torch_trace, got):
    """Per kernel, the op that launched it (a kernel's "External id" in torch's trace is,
    for nearly every op, the op's id in prof.events(): TORCH_TRACE.lines.json) and the
    op's stack there (verbose mode): its innermost user frame names the function and
    the function's first line; cupmon's line must be in that function, at or after it.
    torch.profiler names each frame by its function's first line, so the line itself is
    checked by labelled_line. Kernels only: cupmon_lines reads kernels, not copies or
    memsets."""
    try:
        with open(torch_trace + ".lines.json") as f:
            ops = json.load(f)
    except OSError as e:
        print(f"SKIPPED kernel -> function by the op's stack: {e}")
        return
    by_id = {o["id"]: o for o in ops if "id" in o}
    external = {
        e["args"]["correlation"]: e["args"].get("External id")
        for e in load(torch_trace)
        if e.get("cat") == "kernel" and "correlation" in e.get("args", {})
    }
    common = [c for c in external if c in got]
    # torch.profiler gives the autograd engine's ops, on other threads, their forward
    # op's stack; cupmon does that under emit_nvtx (part 6): here they have no frames.
    first = min((o for o in ops if "start_us" in o), key=lambda o: o["start_us"], default={})
    main = first.get("thread")  # the profiled steps start on the Python thread
    unmatched, no_python = [], 0
    in_function, wrong_function = 0, []
    for c in common:
        op = by_id.get(external[c])
        if op is None:
            unmatched.append((c, external[c], got[c][1]))
            continue
        g = got[c][0]
        # The innermost "file(line): function" frame that is not torch's (the stack also
        # lists "<built-in ...>" calls and "nn.Module: Linear_0" entries).
        m = next((f for f in map(FRAME.match, op.get("stack", []))
                  if f and not f["file"].startswith("<") and is_user(f["file"])), None)
        if g is None and op.get("thread") != main:
            no_python += 1
            continue
        if m and g and os.path.basename(m["file"]) == g[0] and int(m["line"]) <= g[1] \
                and g[2].split(".")[-1] == m["func"].split(".")[-1]:
            in_function += 1
        else:
            wrong_function.append((c, op, m[0] if m else None, g, got[c][1]))
    compared = in_function + len(wrong_function)
    ok = compared > 0 and not wrong_function
    print(f"{'PASS' if ok else 'FAIL'} kernel -> function equals its op's stack in "
          f"torch.profiler (innermost user frame; cupmon's line at or after its first line): "
          f"{in_function}/{compared} kernels launched from Python; {no_python} from the "
          f"autograd engine's threads not compared; {len(unmatched)} whose External id "
          f"names no op in prof.events() (torch numbers a few ops differently there)")
    for c, op, w, g, kernel in wrong_function[:6]:
        print(f"  correlation {c} {kernel[:60]}: torch.profiler {w} (op {op['op']}, "
              f"stack {op['stack'][:3]}), cupmon {g}")
    for c, ext, kernel in unmatched[:4]:
        print(f"  correlation {c} {kernel[:60]}: External id {ext} not in prof.events()")


def labelled_line(torch_trace, got, marks):
    """The exact line: in torch's trace, the innermost record_function label (a
    user_annotation event) over each kernel's launch on the same thread names a
    `# line: LABEL` line; cupmon's line for the kernel (by correlation id) must be it."""
    events = load(torch_trace)
    spans = {}
    for e in events:
        if e.get("cat") == "user_annotation" and e.get("name") in marks:
            spans.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    labelled, wrong, unlabelled = 0, [], []
    for e in events:
        corr = e.get("args", {}).get("correlation")
        if e.get("cat") not in ("cuda_runtime", "cuda_driver") or corr not in got:
            continue
        thread = spans.get((e["pid"], e["tid"]))
        if thread is None:
            continue  # a thread with no labels: the autograd engine's
        over = [s for s in thread if s[0] <= e["ts"] <= s[1]]
        g = got[corr][0]
        got_line = f"{g[0]}:{g[1]}" if g else None
        if not over:
            unlabelled.append((corr, e["name"], got_line))
            continue
        label = max(over)[2]
        labelled += 1
        if marks[label] != got_line:
            wrong.append((corr, label, marks[label], got_line, got[corr][1]))
    ok = labelled > 0 and not wrong and not unlabelled
    print(f"{'PASS' if ok else 'FAIL'} exact line per kernel equals the line a "
          f"torch.profiler record_function label puts its launch on: "
          f"{labelled - len(wrong)}/{labelled} kernels launched under a label; "
          f"{len(unlabelled)} launched on that thread outside any label")
    for corr, label, want, got_line, kernel in wrong[:10]:
        print(f"  correlation {corr} {kernel[:60]}: label {label} is {want}, cupmon {got_line}")
    for corr, name, got_line in unlabelled[:4]:
        print(f"  correlation {corr}: {name} outside the labels, cupmon {got_line}")


def coverage(cupmon_trace, file):
    base = os.path.basename(file)
    total = mine = 0.0
    for e in load(cupmon_trace):
        if e.get("cat") != "kernel":
            continue
        total += e.get("dur", 0)
        line = e.get("args", {}).get("source line", "")
        if os.path.basename(line.rpartition(":")[0]) == base:
            mine += e.get("dur", 0)
    share = mine / total if total else 0
    print(f"{'PASS' if share >= 0.99 else 'FAIL'} {share:.2%} of kernel time "
          f"({total / 1e3:.1f} ms) attributed to a line of {base}")


def backward(cupmon_trace, file):
    """The autograd engine's kernels (launched from threads without Python frames: a
    `source line` "backward of ..." or "(no Python frames)") attributed, by emit_nvtx's
    sequence numbers, to the forward lines of FILE that made them."""
    from collections import Counter

    base = os.path.basename(file)
    with open(file) as f:
        forward = {
            i + 1
            for i, text in enumerate(f)
            if re.search(r"# line: (norm|up|down|loss)$", text.rstrip())
        }
    engine = tied = 0.0
    by_line = Counter()
    apart = Counter()  # kernels left without a line: what they are
    for e in load(cupmon_trace):
        if e.get("cat") != "kernel":
            continue
        line = e.get("args", {}).get("source line", "")
        dur = e.get("dur", 0)
        if line == "(no Python frames)":
            engine += dur
            apart[e.get("name", "?")[:100]] += dur
        elif line.startswith("backward of "):
            engine += dur
            path, _, number = line[len("backward of "):].rpartition(":")
            by_line[f"{os.path.basename(path)}:{number}"] += dur
            if os.path.basename(path) == base and int(number) in forward:
                tied += dur
    share = tied / engine if engine else 0
    print(f"{'PASS' if share >= 0.90 else 'FAIL'} {share:.2%} of the backward threads' kernel "
          f"time ({engine / 1e3:.1f} ms) is 'backward of' a forward line of {base} "
          f"(lines {sorted(forward)})")
    for line, us in by_line.most_common(8):
        print(f"  backward of {line}: {us / 1e3:.2f} ms")
    for name, us in apart.most_common(8):
        print(f"  without a line: {us / 1e3:.3f} ms {name}")


def cost(base_json, off_json, on_json, *paired_json):
    """The goal (<= 300 ns per launch) is judged on the first paired run: the median of
    its rounds' ON - OFF differences, each round's blocks next to each other in one
    process. Further paired runs (a deeper stack) and the whole-process runs (each
    argument one result file or several separated by commas: interleaved rounds, their
    medians compared) are printed as information: runs of one configuration differ by
    as much as the effect."""
    import statistics

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "bench", "stacks"))
    import paired

    for i, path in enumerate(paired_json):
        try:
            result = paired.load(path)
        except (OSError, ValueError) as e:
            result = {"error": str(e)}
        s = paired.summarize(result)
        depth = result.get("depth", "?")
        where = f"loop {depth} frames deeper" if depth else "loop"
        if result.get("workload") == "graph":
            where = f"CUDA graph replays{f', {depth} frames deeper' if depth else ''} (per replay)"
        if result.get("workload") == "model":
            where = (f"the model's training step ({result.get('kernels_per_step', 0):.0f} "
                     "kernels a step)")
        if result.get("stack_depth_setting"):
            where += f", CUPMON_PYTHON_STACK_DEPTH={result['stack_depth_setting']}"
        if i == 0:
            ok = "error" not in s and s["cost"]["median"] <= 300
            print(f"{'PASS' if ok else 'FAIL'} paired, {where} (goal <= 300 ns): "
                  f"{paired.describe(s)}")
        else:
            within = ("error" not in s and s["cost"]["median"] <= 300)
            print(f"INFO paired, {where} ({'within' if within else 'over'} the goal of "
                  f"300 ns): {paired.describe(s)}")

    def per_launch(path):
        with open(path) as f:
            last = [l for l in f if l.startswith("{")][-1]
        r = json.loads(last)
        return r["seconds"] / r["launches"] * 1e9

    try:
        rounds = [[per_launch(p) for p in arg.split(",")] for arg in (base_json, off_json, on_json)]
    except (OSError, ValueError, KeyError, IndexError) as e:
        # Information only beside a paired run; alone, the figure the check is about.
        print(f"{'INFO' if paired_json else 'FAIL'} whole runs: a result is missing or "
              f"unreadable ({type(e).__name__}: {e}); see logs.txt")
        return
    base, off, on = (statistics.median(r) for r in rounds)
    added = on - off
    verdict = "INFO" if paired_json else ("PASS" if added <= 300 else "FAIL")
    print(f"{verdict} whole runs: stacks add {added:.0f} ns per launch "
          f"(goal <= 300; medians of {len(rounds[2])} rounds): no cupmon {base:.0f} ns, "
          f"cupmon without stacks {off:.0f} ns, with stacks {on:.0f} ns per launch; "
          f"cupmon without stacks adds {off - base:.0f} ns")
    for name, r in zip(("no cupmon", "without stacks", "with stacks"), rounds):
        print(f"  {name}: " + ", ".join(f"{v:.0f}" for v in r) + " ns per launch")


def timing(dump, what):
    """INFO: the stack read timed inside the program (CUPMON_PYTHON_STACK_TIMING=1), from
    the dump's meta."""
    with open(os.path.join(dump, "cupti_monitor_meta.bin"), "rb") as f:
        t = json.loads(f.read()[16:]).get("python_stack_timing") or {}
    print(f"INFO stack read timed in the program, {what}: {t.get('ns_per_read', '?')} ns per "
          f"launch over {t.get('reads', 0)} launches (clock floor "
          f"{t.get('clock_floor_ns', '?')} ns taken off)")


def timed_summary(results):
    """Part 7's verdict: the model's stack read timed in the program, the median of its
    rounds (the first build's, with TIMED_LIBS), within the goal of 300 ns; each
    build's median and range."""
    line = re.compile(r"^INFO stack read timed in the program, (?:([^,]+), )?(\w+): "
                      r"([\d.]+) ns per launch")
    runs = {}
    with open(results) as f:
        for m in filter(None, map(line.match, f)):
            runs.setdefault((m.group(1) or "", m.group(2)), []).append(float(m.group(3)))
    if not runs:
        print(f"FAIL stack read timed: no timed runs in {results}")
        return
    for (build, name), ns in runs.items():
        ns.sort()
        print(f"INFO stack read timed, {build + ', ' if build else ''}{name}: median "
              f"{ns[len(ns) // 2]:.1f} ns of {len(ns)} runs (range {ns[0]:.1f}..{ns[-1]:.1f})")
    first = next(iter(runs))[0]
    model = sorted(runs.get((first, "model"), []))
    median = model[len(model) // 2] if model else None
    ok = median is not None and median <= 300
    print(f"{'PASS' if ok else 'FAIL'} the model's stack read timed in the program "
          f"(goal <= 300 ns): median {median} ns of {len(model)} runs"
          f"{' (build ' + first + ')' if first else ''}")


def replay_reads(dump, replays, dump_few, replays_few):
    """A CUDA graph's replays read no stack (their kernels carry the captured nodes'):
    the stack reads counted in the program (CUPMON_PYTHON_STACK_TIMING=1) are the same
    in a run of the workload with many replays and one with few (its warm-up and capture
    launches' only)."""
    def reads(d):
        with open(os.path.join(d, "cupti_monitor_meta.bin"), "rb") as f:
            return (json.loads(f.read()[16:]).get("python_stack_timing") or {}).get("reads")

    many, few = reads(dump), reads(dump_few)
    ok = many is not None and many == few
    print(f"{'PASS' if ok else 'FAIL'} graph replays read no stack: {many} stack reads in a "
          f"run of {replays} replays, {few} in one of {replays_few} (the warm-up and capture "
          f"launches'; a read per replay would add {int(replays) - int(replays_few)})")


def retention(dump, keep, slack):
    """The launch stacks stay inside --keep: segments were retired, every live segment
    with launches has its seg-N.stacks, no stacks file outlives its segment, and the
    dump (all its files) is within keep + slack (one segment and one buffer's pairs)."""
    import os
    import re

    keep, slack = int(keep), int(slack)
    total = sum(
        os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(dump) for f in files
    )
    segs = os.path.join(dump, "segments")
    names = os.listdir(segs)
    live = {int(m.group(1)) for n in names if (m := re.fullmatch(r"seg-(\d+)\.cupmr", n))}
    stacks = {int(m.group(1)) for n in names if (m := re.fullmatch(r"seg-(\d+)\.stacks", n))}
    stack_bytes = sum(os.path.getsize(os.path.join(segs, n)) for n in names if n.endswith(".stacks"))
    ok = (
        total <= keep + slack
        and stacks
        and stacks <= live
        and min(live) > 1
        and not os.path.exists(os.path.join(dump, "launch_stacks.bin"))
    )
    print(f"{'PASS' if ok else 'FAIL'} launch stacks retired with their segments: dump "
          f"{total} bytes for --keep {keep} (+{slack} allowed), {len(live)} live segments "
          f"(oldest {min(live) if live else None}), {len(stacks)} stacks files "
          f"({stack_bytes} bytes), orphans {sorted(stacks - live)[:5]}")


if __name__ == "__main__":
    what, *args = sys.argv[1:]
    {
        "compare": compare,
        "timing": timing,
        "replay_reads": replay_reads,
        "timed_summary": timed_summary,
        "coverage": coverage,
        "cost": cost,
        "retention": retention,
        "backward": backward,
    }[what](*args)
