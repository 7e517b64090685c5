#!/usr/bin/env python3
"""Checks every `cupmon` invocation of the benchmark and GPU scripts against today's
CLI: each `cupmon run` is replayed with its flags around `/bin/true` (a program without
CUDA: cupmon validates every setting, starts it, and exits 0), each `stats`/`decode`
on a copy of a fixture dump. A flag cupmon refuses (as `--window-for 100000` was after
durations were checked) fails here instead of in every rep on the GPU.

usage: bench/check_cli_args.py [CUPMON]   (default: target/debug/cupmon, then .gpu/cupmon)

Where the invocations come from:
  - bench/gpu/bench.py run --parts all --dry-run (every configuration it would run);
  - bench/recorder/accounting.sh with DRY_RUN=1;
  - `"$cupmon" run|stats ...` lines of the shell scripts (variables given example values);
  - bench/recorder/bench.py's argument lists, declared below and checked to be in it.
Prints one line per invocation and `OK`/`FAILED n`; exits 1 when any is refused.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "tests/fixtures/h200-cupti13.0/torch_mlp")
SHELL_SCRIPTS = ["bench/recorder/stall_check.sh", "bench/recorder/budget_start.sh",
                 "bench/recorder/accounting.sh", "tests/gpu/run.sh"]
# Example values for the shell variables the scripts pass as flag values.
SHELL_VALUES = {"keep": "256MiB", "seconds": "10", "KEEP": "256MiB"}
# bench/recorder/bench.py: (text that must be in it, the arguments it passes).
RECORDER_PY = [
    ('[cupmon, "run", *extra, "-o", out', ["run"]),
    ('order = [("compressed", ()), ("raw", ("--raw",))]', ["run", "--raw"]),
    ('[cupmon, "run", "--keep", keep, "-o", out', ["run", "--keep", "1GiB"]),
    ('[cupmon, "stats", d, "--last", "2m"]', ["stats", "DUMP", "--last", "2m"]),
    ('[cupmon, "decode", d, "--last", "1s", "-o", last1s]',
     ["decode", "DUMP", "--last", "1s", "-o", "OUTFILE"]),
    ('[cupmon, "stats", d, "--timeline", "1m"]', ["stats", "DUMP", "--timeline", "1m"]),
    ('[cupmon, "stats", d]', ["stats", "DUMP"]),
]


def run_flags(argv):
    """The flags of a `cupmon run ... -- CMD` (without -o DIR and the command)."""
    argv = argv[argv.index("run") + 1:]
    if "--" in argv:
        argv = argv[:argv.index("--")]
    flags, skip = [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a in ("-o", "--output"):
            skip = True
            continue
        flags.append(a)
    return flags


def from_dry_runs():
    found = []
    env = dict(os.environ, OUT=tempfile.mkdtemp(prefix="cli-check-out-"))
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench/gpu/bench.py"), "run",
                        "--parts", "all", "--dry-run", "--cupmon-bin", "cupmon"],
                       capture_output=True, text=True, env=env, timeout=300)
    for line in p.stdout.splitlines():
        m = re.search(r"\$ .*?\bcupmon (run .*)", line)
        if m:
            found.append(("bench/gpu/bench.py", ["run"] + run_flags(shlex.split(m.group(1)))))
    if not found:
        raise SystemExit(f"bench/gpu/bench.py --dry-run printed no cupmon command:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    for consumer in ("cupmon",):
        p = subprocess.run(["bash", os.path.join(ROOT, "bench/recorder/accounting.sh"), "500000",
                            "graph", "10"], capture_output=True, text=True,
                           env=dict(os.environ, DRY_RUN="1", CONSUMER=consumer))
        for line in p.stdout.splitlines():
            m = re.search(r"^\+ \S*cupmon (run .*)", line)
            if m:
                found.append(("bench/recorder/accounting.sh", ["run"] + run_flags(shlex.split(m.group(1)))))
    return found


def from_shell():
    found = []
    for rel in SHELL_SCRIPTS:
        text = open(os.path.join(ROOT, rel)).read().replace("\\\n", " ")
        for m in re.finditer(r'"\$cupmon" (run|stats|decode)\b([^\n|]*)', text):
            words = re.split(r"\s\d*[<>]", m.group(2))[0]  # up to a redirection
            for var, value in SHELL_VALUES.items():
                words = words.replace(f'"${var}"', value).replace(f"${var}", value)
            try:
                argv = shlex.split(words)
            except ValueError:
                continue
            if m.group(1) == "run":
                found.append((rel, ["run"] + run_flags(["run"] + argv)))
            else:
                # The dump argument is a variable: the fixture stands in for it.
                rest = [a for a in argv[1:]] if argv else []
                found.append((rel, [m.group(1), "DUMP"] + rest))
    return found


def from_recorder_py():
    text = open(os.path.join(ROOT, "bench/recorder/bench.py")).read()
    found = []
    for snippet, argv in RECORDER_PY:
        if snippet not in text:
            raise SystemExit(f"bench/recorder/bench.py no longer has {snippet!r}: update RECORDER_PY "
                             "in bench/check_cli_args.py")
        found.append(("bench/recorder/bench.py", argv))
    return found


def check(cupmon, source, argv, scratch):
    if argv[0] == "run":
        cmd = [cupmon, "run", "-o", os.path.join(scratch, "run")] + argv[1:] + ["--", "/bin/true"]
    else:
        dump = os.path.join(scratch, "dump")
        if not os.path.isdir(dump):
            shutil.copytree(FIXTURE, dump)
        cmd = [cupmon] + [dump if a == "DUMP" else os.path.join(scratch, "out.json") if a == "OUTFILE" else a
                          for a in argv]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUPMON_")}
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=scratch, env=env, timeout=120)
    ok = p.returncode == 0
    shown = " ".join(argv)
    print(f"{'ok  ' if ok else 'FAIL'} {source}: cupmon {shown}"
          + ("" if ok else f"\n     exit {p.returncode}: {p.stderr.strip()[-400:]}"))
    return ok


def main():
    cupmon = sys.argv[1] if len(sys.argv) > 1 else None
    for candidate in ([cupmon] if cupmon else [os.path.join(ROOT, "target/debug/cupmon"),
                                                os.path.join(ROOT, ".gpu/cupmon")]):
        if candidate and os.access(candidate, os.X_OK):
            cupmon = candidate
            break
    else:
        raise SystemExit("no cupmon binary: build it (cargo build -p cupmon-cli) or pass its path")
    seen, failed = set(), 0
    for source, argv in from_dry_runs() + from_shell() + from_recorder_py():
        key = (source, tuple(argv))
        if key in seen:
            continue
        seen.add(key)
        with tempfile.TemporaryDirectory(prefix="cli-check-") as scratch:
            failed += not check(cupmon, source, argv, scratch)
    print("OK" if failed == 0 else f"FAILED {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
