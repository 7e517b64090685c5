"""cupmon.torch.profile with CPU-only torch and the fake libcupti: the
profiler's hooks, schedules and the merge (the GPU comparison against
torch.profiler's own CUDA trace is gpu_torch_check.py, run on the GPU
machine). Skipped where torch is not installed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import fake_env, run_python


def test_importing_cupmon_torch_does_not_import_torch():
    code = "import sys, cupmon.torch; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


PRELUDE = """
import ctypes, json, os, warnings
import torch, cupmon, cupmon.torch
fake = ctypes.CDLL(os.environ["CUPMON_LIBCUPTI"])
def step(i, kernels=3):
    with torch.profiler.record_function(f"step{i}"):
        a = torch.ones(64, 64)
        (a @ a).sum()
        assert fake.cupmonFakeLaunchKernels(kernels, 7, b"_Z4gemmv") == 0
"""


def torch_child(code: str, env: dict) -> dict:
    pytest.importorskip("torch")
    result = run_python(PRELUDE + code, env, timeout=180)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def summary(path: str) -> dict:
    events = json.load(open(path))["traceEvents"]
    cats = [e.get("cat") for e in events]
    return {
        "kernels": cats.count("kernel"),
        "runtime": cats.count("cuda_runtime"),
        "flows": sum(e.get("cat") == "ac2g" and e.get("ph") == "f" for e in events),
        "aten": sorted({e["name"] for e in events if e.get("cat") == "cpu_op"}),
        "steps": sorted(e["name"] for e in events if str(e.get("name", "")).startswith("step")),
    }


def test_profile_writes_one_merged_trace(fake_cupti, tmp_path):
    out = tmp_path / "trace.json.gz"
    code = f"""
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with cupmon.torch.profile({str(out)!r}, record_shapes=True) as prof:
        for i in range(2):
            step(i)
assert not cupmon._monitor.status()["running"]  # the collection it started is stopped
print(json.dumps({{"traces": prof.cupmon_traces, "warnings": [str(w.message) for w in caught
       if issubclass(w.category, cupmon.CupmonWarning)],
       "merge_s": prof.cupmon_merge_seconds, "stats": prof.cupmon_stats}}))
"""
    result = torch_child(code, fake_env(fake_cupti))
    assert result["traces"] == [str(out)]
    assert result["warnings"] == []
    assert result["stats"]["dropped_records"] == 0
    import gzip
    import shutil

    with gzip.open(out, "rb") as f, open(tmp_path / "t.json", "wb") as g:
        shutil.copyfileobj(f, g)
    s = summary(str(tmp_path / "t.json"))
    assert (s["kernels"], s["runtime"], s["flows"]) == (6, 6, 6)
    assert "aten::mm" in s["aten"] and s["steps"] == ["step0", "step1"]


def test_a_schedule_gets_one_trace_per_cycle_with_the_active_steps_only(fake_cupti, tmp_path):
    dump = tmp_path / "dump"
    pattern = str(tmp_path / "cycle{cycle}.json")
    code = f"""
sched = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
ready = []
with cupmon.torch.profile({pattern!r}, schedule=sched, cupmon_output_dir={str(dump)!r},
                          on_trace_ready=lambda p: ready.append(p.step_num)) as prof:
    for i in range(10):
        step(i, kernels=i + 1)
        prof.step()
print(json.dumps({{"traces": prof.cupmon_traces, "ready": ready}}))
"""
    result = torch_child(code, fake_env(fake_cupti))
    assert result["traces"] == [pattern.format(cycle=0), pattern.format(cycle=1)]
    assert result["ready"] == [4, 8]  # the user's handler still runs, after the merge
    first, second = summary(result["traces"][0]), summary(result["traces"][1])
    # Cycle 1 records steps 2 and 3 (3 + 4 kernels), cycle 2 steps 6 and 7 (7 + 8).
    assert (first["kernels"], first["runtime"], first["flows"]) == (7, 7, 7)
    assert (second["kernels"], second["runtime"], second["flows"]) == (15, 15, 15)
    assert first["steps"] == ["step2", "step3"] and second["steps"] == ["step6", "step7"]
    # The dump kept in cupmon_output_dir has every kernel of the run.
    import cupmon

    window = cupmon.read_dump(dump)
    assert sum(e["kind"] == "kernel" for e in window["events"]) == sum(range(1, 11))


def test_an_empty_window_warns(fake_cupti, tmp_path):
    code = f"""
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with cupmon.torch.profile({str(tmp_path / "t.json")!r}):
        torch.ones(8).sum()
print(json.dumps([str(w.message) for w in caught if issubclass(w.category, cupmon.CupmonWarning)]))
"""
    messages = torch_child(code, fake_env(fake_cupti))
    assert len(messages) == 1 and "no GPU activity" in messages[0]


def test_gpu_activities_are_refused(fake_cupti, tmp_path):
    code = """
try:
    cupmon.torch.profile("t.json", activities=[torch.profiler.ProfilerActivity.CUDA])
except ValueError as e:
    print(json.dumps(str(e)))
"""
    assert "records GPU activity with cupmon" in torch_child(code, fake_env(fake_cupti))


def test_drop_gpu_side_events(tmp_path):
    import cupmon.torch

    trace = {
        "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 1},
            {"ph": "s", "cat": "ac2g", "id": 1, "ts": 1},
        ]
    }
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps(trace))
    assert cupmon.torch.drop_gpu_side_events(str(path)) == 2
    assert [e["cat"] for e in json.loads(path.read_text())["traceEvents"]] == ["cpu_op"]
    assert cupmon.torch.drop_gpu_side_events(str(path)) == 0
