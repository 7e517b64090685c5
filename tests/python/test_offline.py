"""The offline API on the recorded fixtures: merge, export, read_dump."""

from __future__ import annotations

import gzip
import json
import warnings

import pytest

import cupmon
from conftest import FIXTURE_NAMES, FIXTURES, cpu_trace
from trace_compare import contains, diff, load


def expected_window(fixture: str) -> dict:
    """expected_window.json as PyTorch's merge's dict: int keys (seed_merge.py's load_window)."""
    w = load(FIXTURES / fixture / "expected_window.json")
    w["user_annotations"] = {int(k): v for k, v in w["user_annotations"].items()}
    w["thread_resource_map"] = {
        int(p): {int(k): int(v) for k, v in m.items()} for p, m in w["thread_resource_map"].items()
    }
    return w


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_merge_of_a_window_dict_equals_the_seeds_output(fixture, tmp_path):
    out = tmp_path / "merged.json"
    result = cupmon.merge_trace_window_into_chrome_trace(
        cpu_trace(fixture), out, expected_window(fixture), trace_name=fixture
    )
    assert result is None  # PyTorch's merge's signature
    assert diff(load(FIXTURES / fixture / "expected_merged_trace.json"), load(out)) == []


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_merge_of_a_window_file_with_gz_output_equals_the_seeds_output(fixture, tmp_path):
    out = tmp_path / "merged.json.gz"
    cupmon.merge_trace_window_into_chrome_trace(
        str(cpu_trace(fixture)),
        str(out),
        FIXTURES / fixture / "expected_window.json",
        trace_name=fixture,
    )
    with gzip.open(out, "rt") as f:
        merged = json.load(f)
    assert diff(load(FIXTURES / fixture / "expected_merged_trace.json"), merged) == []


def test_merge_names_the_trace_after_the_output_path_by_default(tmp_path):
    out = tmp_path / "merged.json"
    window = expected_window("cuda_workload")
    cupmon.merge_trace_window_into_chrome_trace(cpu_trace("cuda_workload"), out, window)
    assert load(out)["traceName"] == str(out)
    cupmon.merge_trace_window_into_chrome_trace(
        cpu_trace("cuda_workload"), out, window, trace_name=""
    )
    assert load(out)["traceName"] == str(out)  # `trace_name or output_path`, as PyTorch's merge


def test_merge_accepts_string_keys_and_leaves_the_window_alone(tmp_path):
    window = load(FIXTURES / "cuda_workload" / "expected_window.json")  # str keys
    before = json.dumps(window, sort_keys=True)
    out = tmp_path / "merged.json"
    cupmon.merge_trace_window_into_chrome_trace(
        cpu_trace("cuda_workload"), out, window, trace_name="cuda_workload"
    )
    assert json.dumps(window, sort_keys=True) == before
    expected = load(FIXTURES / "cuda_workload" / "expected_merged_trace.json")
    assert diff(expected, load(out)) == []


UNIX_NS_FLOOR = 10**18  # a Unix time in ns is above this since September 2001


def on_unix_clock(expected_events, events):
    """`expected_events` with the timestamps torch.profiler's clock gave (torch_mlp:
    ~87e9 ticks of a 2.1 GHz counter) replaced by cupmon's conversion of them, after
    checking that each conversion is a Unix time."""
    out = []
    for want, got in zip(expected_events, events):
        want = dict(want)
        for key, value in want.items():
            if key.endswith("_ns") and isinstance(value, int) and 0 < value < UNIX_NS_FLOOR:
                assert got[key] > UNIX_NS_FLOOR, (key, got)
                want[key] = got[key]
        out.append(want)
    return out


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_read_dump_equals_the_expected_window(fixture):
    expected = load(FIXTURES / fixture / "expected_window.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an intact dump warns about nothing
        window = cupmon.read_dump(FIXTURES / fixture)
    assert len(window["events"]) == len(expected["events"])
    assert contains(on_unix_clock(expected["events"], window["events"]), window["events"]) == []
    assert window["start_ns"] == 0
    assert all(isinstance(k, int) for k in window["user_annotations"])
    assert window["user_annotations"] == {
        int(k): v for k, v in expected["user_annotations"].items()
    }


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_a_decoded_dump_merges_like_the_seed(fixture, tmp_path):
    out = tmp_path / "merged.json"
    window = cupmon.read_dump(str(FIXTURES / fixture))
    cupmon.merge_trace_window_into_chrome_trace(cpu_trace(fixture), out, window, trace_name=fixture)
    merged = load(out)
    # cupmon adds its completeness facts at the top level; the rest is PyTorch's merge's.
    info = merged.pop("cupmon")
    # PyTorch's monitor does not count dropped records: unknown, and the trace says why.
    assert info["dropped_records"] is None
    assert "no dropped_records key" in info["dropped_records_note"]
    if fixture == "cuda_workload":
        assert diff(load(FIXTURES / fixture / "expected_merged_trace.json"), merged) == []
        return
    # torch_mlp's GPU records were stamped by torch.profiler's clock: converted, they
    # land after their launches instead of at ts 0 (where the raw window puts them).
    assert info["clock_converted"] == 281
    events = merged["traceEvents"]
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    # Only the kernels launched before collection began (start 0: no time) sit at 0.
    untimed = [e for e in window["events"] if e["kind"] in ("kernel", "gpu_memcpy", "gpu_memset")
               and e["start_ns"] == 0]
    assert gpu and sum(e["ts"] == 0 for e in gpu) == len(untimed)
    arrows = [e for e in events if e.get("cat") == "ac2g"]
    starts = {e["id"]: e["ts"] for e in arrows if e["ph"] == "s"}
    finishes = [e for e in arrows if e["ph"] == "f" and e["ts"] > 0 and e["id"] in starts]
    assert len(finishes) > 50
    assert all(f["ts"] >= starts[f["id"]] for f in finishes), "a GPU op before its launch"


def test_export_writes_a_standalone_trace(tmp_path):
    window = expected_window("cuda_workload")
    out = tmp_path / "window.trace.json.gz"
    cupmon.export_trace_window(window, out, trace_name="w")
    trace = load(out)
    assert trace["traceName"] == "w"
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) == sum(e["kind"] == "kernel" for e in window["events"])
    assert any(e.get("cat") == "ac2g" for e in trace["traceEvents"])
    # The same from the window file.
    again = tmp_path / "again.json"
    cupmon.export_trace_window(
        FIXTURES / "cuda_workload" / "expected_window.json", again, trace_name="w"
    )
    assert diff(trace, load(again)) == []


def test_native_calls_release_the_gil(tmp_path):
    # A thread keeps counting while a merge runs: the merge must not hold the GIL.
    import threading
    import time

    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)

    window = expected_window("torch_mlp")
    t = threading.Thread(target=tick)
    t.start()
    try:
        start = time.perf_counter()
        for i in range(5):
            cupmon.merge_trace_window_into_chrome_trace(
                cpu_trace("torch_mlp"), tmp_path / f"m{i}.json", window
            )
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    during = [x for x in ticks if start <= x <= end]
    assert len(during) >= 3, (end - start, len(during))
