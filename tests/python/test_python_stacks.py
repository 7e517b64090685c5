"""``cupmon.python_stacks(on)``: source attribution switched off and on while the
monitor runs, against the fake libcupti. A program under ``cupmon run`` launches
from marked lines with stacks on, off, and on again; in the dump's trace the kernels
launched while off carry no ``source line`` and the others their line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import cupmon_cmd, fake_env, run_python

# Launches through the fake (ctypes releases the GIL around the call, as torch does);
# the driver's call of InitializeInjection is made by hand (the fake has no driver).
APP = """
import ctypes, json, os, sys
import cupmon
assert ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection() == 1
fake = ctypes.CDLL(os.environ["CUPMON_LIBCUPTI"])
fake.cupmonFakeLaunchKernels.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p]
answers = []
fake.cupmonFakeLaunchKernels(2, 7, b"before_kernel")  # LAUNCH before_kernel
answers.append(cupmon.python_stacks(False))
answers.append(cupmon.python_stacks(False))
fake.cupmonFakeLaunchKernels(3, 7, b"off_kernel")  # LAUNCH off_kernel
answers.append(cupmon.python_stacks(True))
fake.cupmonFakeLaunchKernels(4, 7, b"after_kernel")  # LAUNCH after_kernel
try:
    cupmon.python_stacks(1)
except TypeError as e:
    answers.append(str(e))
print(json.dumps(answers))
"""


def marks() -> dict:
    return {
        line.split("# LAUNCH ")[1].strip(): i
        for i, line in enumerate(APP.splitlines(), start=1)
        if "# LAUNCH " in line
    }


def run_app(tmp_path: Path, fake_cupti: Path, extra_env: dict) -> tuple[list, Path]:
    """The app under `cupmon run`: its answers, and its dump."""
    app = tmp_path / "app.py"
    app.write_text(APP)
    out = tmp_path / "out"
    done = cupmon_cmd(
        "run", "-o", str(out), "--", sys.executable, str(app),
        env={**fake_env(fake_cupti), **extra_env},
    )
    assert done.returncode == 0, done.stderr
    (dump,) = [p for p in out.iterdir() if p.is_dir()]
    return json.loads(done.stdout.strip().splitlines()[-1]), dump


def kernel_lines(tmp_path: Path, dump: Path) -> dict:
    """Kernel name -> the `source line` arg of each of its kernels in the decoded trace."""
    trace = tmp_path / "decoded.json"
    done = cupmon_cmd("decode", str(dump), "--format", "chrome", "-o", str(trace))
    assert done.returncode == 0, done.stderr
    lines: dict = {}
    for e in json.loads(trace.read_text())["traceEvents"]:
        if e.get("cat") == "kernel":
            lines.setdefault(e["name"], []).append(e.get("args", {}).get("source line"))
    return lines


def meta(dump: Path) -> dict:
    return json.loads((dump / "cupti_monitor_meta.bin").read_bytes()[16:])


def test_launches_made_while_python_stacks_are_off_carry_no_stack(fake_cupti, tmp_path):
    answers, dump = run_app(tmp_path, fake_cupti, {})
    # Off (was on), off again (was off already), on (was off); a non-bool is refused.
    assert answers == [True, False, False, "on must be a bool, not int"]
    lines = kernel_lines(tmp_path, dump)
    m = marks()
    assert lines["off_kernel"] == [None] * 3, lines
    assert lines["before_kernel"] == [f"{tmp_path / 'app.py'}:{m['before_kernel']}"] * 2, lines
    assert lines["after_kernel"] == [f"{tmp_path / 'app.py'}:{m['after_kernel']}"] * 4, lines
    got = meta(dump)
    assert got["python_stacks"].startswith("CPython 3."), got["python_stacks"]
    assert got["python_stacks_switched"] == {"turned_off": 1, "turned_on": 1, "on": True}
    # The worker counts the launches made while off as unattributed.
    assert got["python_stack_records"] == {"attributed": 6, "unattributed": 3}


def test_python_stacks_turned_on_in_a_run_started_without_them(fake_cupti, tmp_path):
    answers, dump = run_app(tmp_path, fake_cupti, {"CUPMON_PYTHON_STACKS": "0"})
    assert answers == [False, False, False, "on must be a bool, not int"]
    lines = kernel_lines(tmp_path, dump)
    m = marks()
    assert lines["before_kernel"] == [None] * 2, lines
    assert lines["off_kernel"] == [None] * 3, lines
    assert lines["after_kernel"] == [f"{tmp_path / 'app.py'}:{m['after_kernel']}"] * 4, lines
    got = meta(dump)
    # The meta no longer says "off (CUPMON_PYTHON_STACKS=0)": the dump has stacks.
    assert got["python_stacks"].startswith("CPython 3."), got["python_stacks"]
    assert got["python_stacks_switched"] == {"turned_off": 0, "turned_on": 1, "on": True}


def test_python_stacks_say_why_they_cannot_be_switched(fake_cupti, tmp_path):
    code = f"""
import json
import cupmon
out = {{}}
try:
    cupmon.python_stacks(False)
except cupmon.NotMonitoringError as e:
    out["no_monitor"] = str(e)
cupmon.start_collection({str(tmp_path / "dump")!r})
out["off"] = cupmon.python_stacks(False)
try:
    cupmon.python_stacks(True)
except cupmon.MonitorStateError as e:
    out["refused"] = [e.code.name, str(e)]
cupmon.stop_collection()
print(json.dumps(out))
"""
    # Stacks are noted by the launch callbacks: without launch counting, none.
    result = run_python(code, {**fake_env(fake_cupti), "CUPMON_COUNT_LAUNCHES": "0"})
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert "not monitoring" in out["no_monitor"]
    assert out["off"] is False
    kind, message = out["refused"]
    assert kind == "NoPythonStacks"
    assert "launches are not counted (CUPMON_COUNT_LAUNCHES=0)" in message, message
