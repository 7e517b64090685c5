"""The live API, each test in a fresh interpreter (one monitor per process),
against the fake libcupti: no GPU, no driver."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys


from conftest import ROOT, fake_env, run_python

# Shared by the child programs: load the fake to make "GPU work" with it.
PRELUDE = """
import ctypes, json, os, sys
import cupmon
fake = ctypes.CDLL(os.environ["CUPMON_LIBCUPTI"])
fake.cupmonFakeLaunchKernels.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p]
def launch(n, stream=7, name=b"_Z6kernelPf"):
    assert fake.cupmonFakeLaunchKernels(n, stream, name) == 0
"""


def child(code: str, env: dict, ok: bool = True) -> subprocess.CompletedProcess:
    result = run_python(PRELUDE + code, env)
    if ok:
        assert result.returncode == 0, result.stderr
    return result


def last_json(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_collection_window_annotations_merge_and_dump(fake_cupti, tmp_path):
    dump = tmp_path / "dump"
    cpu = tmp_path / "cpu.json"
    # A small torch.profiler-like CPU trace, with one op in the window's time.
    code = f"""
import time, threading
dump = cupmon.start_collection({str(dump)!r}, buffer_size=1 << 16, flush_period_s=0.2)
launch(10)                                   # before the window: dump only
with cupmon.window() as w:
    with cupmon.annotate("step"):
        t0 = time.time_ns()
        launch(5)
        t1 = time.time_ns()
    launch(2, stream=9)
window = w.trace_window
base = t0 // 10**9 * 10**9
cpu = {{"schemaVersion": 1, "baseTimeNanoseconds": base, "traceEvents": [
    {{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": os.getpid(),
      "tid": threading.get_native_id(), "ts": (t0 - base) / 1e3, "dur": (t1 - t0) / 1e3,
      "args": {{"External id": 1}}}}]}}
json.dump(cpu, open({str(cpu)!r}, "w"))
cupmon.merge_trace_window_into_chrome_trace({str(cpu)!r}, {str(tmp_path / "merged.json")!r}, window)
stats = cupmon.monitor_stats()
final = cupmon.stop_collection()
print(json.dumps({{"dump": dump, "window": window, "start_ns": w.start_ns,
                  "stats": stats, "final": final,
                  "key_types": [type(k).__name__ for k in window["user_annotations"]]}}))
"""
    out = last_json(child(code, fake_env(fake_cupti)))
    assert out["dump"] == str(dump)
    window = out["window"]
    kinds = [e["kind"] for e in window["events"]]
    assert kinds.count("kernel") == 7
    assert kinds.count("cuda_runtime") == 7
    assert window["start_ns"] == out["start_ns"] > 0
    assert out["key_types"] == ["int"]
    assert list(window["user_annotations"].values()) == ["step"]
    assert out["final"]["dropped_records"] == 0
    assert out["stats"]["running"] is True

    merged = json.load(open(tmp_path / "merged.json"))
    events = merged["traceEvents"]
    cats = [e.get("cat") for e in events]
    assert cats.count("kernel") == 7
    assert cats.count("cuda_runtime") == 7
    assert sum(e.get("cat") == "ac2g" and e["ph"] == "f" for e in events) == 7
    annotations = [e for e in events if e.get("cat") == "gpu_user_annotation"]
    assert [a["name"] for a in annotations] == ["step"]

    # The always-on dump has every kernel, inside the window or not.
    import cupmon

    decoded = cupmon.read_dump(dump)
    assert sum(e["kind"] == "kernel" for e in decoded["events"]) == 17
    assert list(decoded["user_annotations"].values()) == ["step"]


def test_state_errors_have_their_class_and_code(fake_cupti, tmp_path):
    code = f"""
def expect(fn, *args):
    try:
        fn(*args)
    except cupmon.MonitorStateError as e:
        return [type(e).__name__, e.code.name if e.code is not None else None, str(e)]
    raise AssertionError(f"{{fn.__name__}} did not raise")
got = [expect(cupmon.end_trace_window), expect(cupmon.monitor_stats),
       expect(cupmon.stop_collection)]
cupmon.start_collection({str(tmp_path / "d")!r})
got.append(expect(cupmon.start_collection, {str(tmp_path / "e")!r}))
got.append(expect(cupmon.pop_user_annotation))
cupmon.prepare_trace_window()
got.append(expect(cupmon.prepare_trace_window))
cupmon.start_trace_window()
got.append(expect(cupmon.begin_trace_window))
got.append(expect(cupmon.start_trace_window))
cupmon.end_trace_window()
got.append(expect(cupmon.end_trace_window))
cupmon.stop_collection()
got.append(expect(cupmon.stop_collection))
print(json.dumps(got))
"""
    got = last_json(child(code, fake_env(fake_cupti)))
    classes_and_codes = [(cls, code) for cls, code, _ in got]
    assert classes_and_codes == [
        ("NotMonitoringError", "NotMonitoring"),
        ("NotMonitoringError", "NotMonitoring"),
        ("NotMonitoringError", "NotMonitoring"),
        ("AlreadyMonitoringError", "AlreadyMonitoring"),
        ("MonitorStateError", "NoAnnotationOpen"),
        ("MonitorStateError", "WindowAlreadyPrepared"),
        ("WindowAlreadyOpenError", "WindowAlreadyOpen"),
        ("WindowAlreadyOpenError", "WindowAlreadyOpen"),
        ("NoWindowOpenError", "NoWindowOpen"),
        ("NotMonitoringError", "NotMonitoring"),
    ]
    # The messages still tell people what happened.
    messages = [message for _, _, message in got]
    assert "not monitoring" in messages[0]
    assert "already collecting" in messages[3] and "stop_collection" in messages[3]
    assert "no trace window is open" in messages[8]


def test_bad_settings_are_value_errors(fake_cupti, tmp_path):
    code = f"""
for kwargs in ({{"activities": ["NOT_A_KIND"]}}, {{"flush_period_s": -1}}, {{"buffer_size": 0}}):
    try:
        cupmon.start_collection({str(tmp_path / "d")!r}, **kwargs)
    except ValueError as e:
        print("ValueError", e.code.name, e)
    else:
        raise AssertionError(kwargs)
"""
    out = child(code, fake_env(fake_cupti)).stdout
    assert out.count("ValueError InvalidSetting") == 3, out
    assert "NOT_A_KIND" in out


def test_without_a_driver_live_calls_raise_no_driver_error(tmp_path):
    code = f"""
import cupmon
try:
    cupmon.start_collection({str(tmp_path / "d")!r})
except cupmon.NoDriverError as e:
    print("NoDriverError:", e)
    print("code", e.code.name)
# The offline half still works.
w = cupmon.read_dump({str(ROOT / "tests/fixtures/h200-cupti13.0/cuda_workload")!r})
print("events", len(w["events"]))
"""
    result = run_python(code, {"CUPMON_LIBCUDA": str(tmp_path / "no-libcuda.so.1")})
    assert result.returncode == 0, result.stderr
    assert "NoDriverError: no NVIDIA driver found" in result.stdout
    assert "code NoDriver" in result.stdout
    assert "events " in result.stdout


def test_under_cupmon_run_the_module_drives_the_injected_monitor(fake_cupti, tmp_path):
    # What `cupmon run` sets up, with this process standing in for the CUDA
    # driver: it calls the library's InitializeInjection, as cuInit would.
    import cupmon._monitor as monitor

    library = monitor.library_path()
    env = {
        **fake_env(fake_cupti),
        "CUDA_INJECTION64_PATH": library,
        "CUPMON_INJECT_LIBRARY": library,
        "CUPMON_OUTPUT_DIR": str(tmp_path / "run"),
    }
    code = """
before = None
try:
    cupmon.begin_trace_window()
except cupmon.NotMonitoringError as e:  # with the hint about `cupmon run`
    before = str(e)
assert ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"]).InitializeInjection() == 1
status = cupmon._monitor.status()
try:
    cupmon.start_collection("elsewhere")
except cupmon.AlreadyMonitoringError as e:
    refused = str(e)
try:
    cupmon.stop_collection()
except cupmon.MonitorStateError as e:
    not_stopped = str(e)
with cupmon.window() as w:
    launch(3)
print(json.dumps({"before": before, "status": status, "refused": refused,
                  "not_stopped": not_stopped,
                  "kernels": sum(e["kind"] == "kernel" for e in w.trace_window["events"])}))
"""
    out = last_json(child(code, env))
    assert "initialises CUDA" in out["before"]
    assert out["status"]["running"] and out["status"]["injected"]
    assert "already monitored by `cupmon run`" in out["refused"]
    assert out["status"]["dump_dir"] in out["refused"]
    assert "belongs to `cupmon run`" in out["not_stopped"]
    assert out["kernels"] == 3
    assert not (tmp_path / "elsewhere").exists()


def test_the_console_script_runs_the_bundled_binary():
    result = subprocess.run(
        [sys.executable, "-m", "cupmon", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "Usage: cupmon" in result.stdout
    for name in ("cupmon", "libcupmon_inject.so"):
        import cupmon

        assert os.path.isfile(os.path.join(os.path.dirname(cupmon.__file__), name))


def test_rearm_and_a_window_that_withholds_api_records(fake_cupti, tmp_path):
    code = f"""
cupmon.start_collection({str(tmp_path / 'd')!r})
lost = cupmon.rearm()
launch(4)
start = cupmon.begin_trace_window(withhold_api_from_clients=True)
launch(2)
window = cupmon.end_trace_window()
final = cupmon.stop_collection()
print(json.dumps({{"lost": lost, "start": start,
                  "kernels": sum(e["kind"] == "kernel" for e in window["events"]),
                  "all": final["records_by_kind"].get("CONCURRENT_KERNEL")}}))
"""
    out = last_json(child(code, fake_env(fake_cupti)))
    assert isinstance(out["lost"], int) and out["start"] > 0
    assert (out["kernels"], out["all"]) == (2, 6)


def test_environment_settings_apply_and_arguments_win(fake_cupti, tmp_path):
    # CUPMON_RAW=1 from the environment: PyTorch's raw file, no segments; a
    # keyword setting (segment_size) is parsed by the same table, and a bad one
    # is refused naming it.
    code = f"""
d = cupmon.start_collection({str(tmp_path / "raw")!r}, flush_period_s=0.1)
launch(4)
cupmon.stop_collection()
try:
    cupmon.start_collection({str(tmp_path / "bad")!r}, keep="lots")
except ValueError as e:
    print("refused:", e)
d = cupmon.start_collection({str(tmp_path / "seg")!r}, raw=False, segment_size="1MiB")
launch(4)
print(json.dumps(cupmon.stop_collection()))
"""
    env = fake_env(fake_cupti)
    env["CUPMON_RAW"] = "1"
    result = child(code, env)
    assert (tmp_path / "raw" / "cupti_monitor_raw_buffers.bin").exists()
    assert not (tmp_path / "raw" / "segments").exists()
    assert "refused:" in result.stdout and "keep" in result.stdout
    assert (tmp_path / "seg" / "segments").is_dir()
    assert not (tmp_path / "seg" / "cupti_monitor_raw_buffers.bin").exists()


def test_annotate_does_nothing_without_a_monitor_instead_of_crashing_the_program(
    fake_cupti, tmp_path
):
    # The README's own example crashed without `cupmon run` (NotMonitoringError): an
    # annotation, like an NVTX range, must never break the code it instruments.
    code = f"""
@cupmon.annotate("decorated")
def work(n):
    return work(n - 1) if n else "done"   # nested uses of one decorator object

with cupmon.annotate("no monitor yet"):
    result = work(3)
    step = cupmon.step()
# A monitor that starts inside a block (the first CUDA call under `cupmon run`) holds
# no range of the block's: leaving the block must not pop someone else's.
with cupmon.annotate("outer"):
    dump = cupmon.start_collection({str(tmp_path / "d")!r}, buffer_size=1 << 16)
    with cupmon.annotate("inner"):
        launch(3)
got = [result, step, work(2)]
try:
    cupmon.pop_user_annotation()   # nothing of ours is left open
    got.append("popped")
except cupmon.MonitorStateError as e:
    got.append(e.code.name)
cupmon.stop_collection()
print(json.dumps(got))
"""
    got = last_json(child(code, fake_env(fake_cupti)))
    assert got == ["done", None, "done", "NoAnnotationOpen"]


def test_stop_collection_writes_the_trace_of_the_window_it_closed(fake_cupti, tmp_path):
    # The injection library writes only window-N.json; the trace beside it is made
    # by the Python side after the stop, in the format of the trace_format setting.
    for trace_format, trace in (("json", "window-0.trace.json.gz"), ("pftrace", "window-0.trace.pftrace")):
        dump = tmp_path / trace_format
        code = f"""
cupmon.start_collection({str(dump)!r}, trace_format={trace_format!r})
cupmon.begin_trace_window()
launch(4)
final = cupmon.stop_collection()
print(json.dumps({{"files": sorted(os.listdir({str(dump)!r})), "format": final.get("trace_format")}}))
"""
        out = last_json(child(code, fake_env(fake_cupti)))
        assert out["format"] == trace_format
        assert "window-0.json" in out["files"], out
        assert trace in out["files"], out
        assert [f for f in out["files"] if ".trace" in f] == [trace], out
        if trace_format == "json":
            merged = json.loads(gzip.decompress((dump / trace).read_bytes()))
            kernels = [e for e in merged["traceEvents"] if e.get("cat") == "kernel"]
            assert len(kernels) == 4
