"""Perfetto protobuf traces (.pftrace) from every door (the Python API and the
``cupmon`` command), read with the ``perfetto`` package's own protos and
compared with the Chrome JSON trace of the same input: slices (names,
categories, ns times, args), threads and processes by name, instants,
counters, flow arrows (which slices they join) and the top-level members.
``scripts/test-python.sh`` installs ``perfetto`` in the venv; without it
these tests are skipped, loudly."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2  # noqa: F401
except ImportError as err:  # pragma: no cover - the environment decides
    print(f"SKIPPED: test_pftrace.py needs the perfetto package ({err})", file=sys.stderr)
    pytest.skip(
        f"SKIPPED: no perfetto package ({err}); scripts/test-python.sh installs it",
        allow_module_level=True,
    )

import cupmon
from cupmon._cli import binary_path
from check_pftrace import check
from conftest import FIXTURE_NAMES, FIXTURES
from conftest import cpu_trace as cpu_trace_of
from pftrace_compare import differences, json_view, pftrace_view, read_bytes

BASE = 1_790_000_000_000_000_000


def assert_same(json_path, pftrace_path, ignore=()) -> dict:
    """The two traces show the same; returns the counts."""
    a, b = json_view(str(json_path)), pftrace_view(str(pftrace_path))
    assert differences(a, b, ignore_metadata=ignore) == []
    counts = a.counts()
    assert {**b.counts(), "overlap_lane_slices": 0} == {**counts, "overlap_lane_slices": 0}
    report = check(read_bytes(str(pftrace_path)), 5)
    assert report["errors"] == []
    assert report["clock"]["primary_trace_clock"] == "BUILTIN_CLOCK_REALTIME"
    return counts


def cupmon_cli(*args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([binary_path(), *map(str, args)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize("fixture", FIXTURE_NAMES)
def test_a_complete_merge_to_pftrace_shows_what_the_json_merge_shows(fixture, tmp_path):
    window = FIXTURES / fixture / "expected_window.json"
    for name in ("m.json", "m.pftrace"):
        cupmon.merge_complete(cpu_trace_of(fixture), tmp_path / name, window, trace_name=fixture)
    counts = assert_same(tmp_path / "m.json", tmp_path / "m.pftrace")
    assert counts["slices"] > 100 and counts["flows"] > 20


def test_merge_trace_window_into_chrome_trace_to_pftrace_gz_holds_the_cpu_and_the_gpu_side(tmp_path):
    window = json.loads((FIXTURES / "torch_mlp" / "expected_window.json").read_text())
    cpu = cpu_trace_of("torch_mlp")
    for name in ("m.json", "m.pftrace.gz"):
        cupmon.merge_trace_window_into_chrome_trace(cpu, tmp_path / name, window, trace_name="t")
    assert (tmp_path / "m.pftrace.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert_same(tmp_path / "m.json", tmp_path / "m.pftrace.gz")
    slices = pftrace_view(str(tmp_path / "m.pftrace.gz")).slices
    categories = {s[2] for s in slices}
    assert {"cpu_op", "kernel", "cuda_runtime"} <= categories


def test_export_takes_a_format_and_interns_repeated_names(tmp_path):
    window = FIXTURES / "torch_mlp" / "expected_window.json"
    cupmon.export_trace_window(window, tmp_path / "e.json", trace_name="e")
    cupmon.export_trace_window(window, tmp_path / "e.trace", trace_name="e", format="pftrace")
    assert_same(tmp_path / "e.json", tmp_path / "e.trace")
    data = (tmp_path / "e.trace").read_bytes()
    name, n = most_common_kernel(json_view(str(tmp_path / "e.json")))
    assert n > 5 and data.count(name.encode()) == 1, (name, n)
    with pytest.raises(ValueError, match="format must be"):
        cupmon.export_trace_window(window, tmp_path / "x", format="protobuf")


def most_common_kernel(view) -> tuple:
    """The kernel name that most slices have, among those that are no part of
    another name (so that its bytes can be counted in the file)."""
    import collections

    names = collections.Counter()
    for (_, name, cat, *_), n in view.slices.items():
        names[name] += n if cat == "kernel" else 0
    return next(
        (name, n)
        for name, n in names.most_common()
        if not any(name in other for other in names if other != name)
    )


def test_every_command_writes_pftrace_by_name_or_format(tmp_path):
    dump = FIXTURES / "cuda_workload"
    window = FIXTURES / "torch_mlp" / "expected_window.json"
    t = tmp_path
    cupmon_cli("decode", dump, "--format", "chrome", "--trace-name", "d", "-o", t / "d.json")
    out = cupmon_cli("decode", dump, "--trace-name", "d", "-o", t / "d.pftrace")
    assert "Perfetto protobuf" in out.stdout
    assert_same(t / "d.json", t / "d.pftrace")
    cupmon_cli("decode", dump, "--format", "pftrace", "--trace-name", "d", "-o", t / "d.bin")
    assert_same(t / "d.json", t / "d.bin")
    cupmon_cli("export", "--window", window, "--trace-name", "e", "-o", t / "e.json")
    cupmon_cli("export", "--window", window, "--trace-name", "e", "--format", "pftrace", "-o", t / "e.out")
    assert_same(t / "e.json", t / "e.out")
    cpu = cpu_trace_of("torch_mlp")
    for name in ("m.json", "m.pftrace.gz"):
        cupmon_cli("merge", "--cpu", cpu, "--window", window, "--trace-name", "m", "-o", t / name)
    assert_same(t / "m.json", t / "m.pftrace.gz")
    for name in ("c.json", "c.pftrace"):
        cupmon_cli("combine", t / "d.json", t / "e.json", "-o", t / name)
    assert_same(t / "c.json", t / "c.pftrace", ignore=("traceName",))


def window_file(path, events) -> str:
    path.write_text(
        json.dumps({"events": events, "user_annotations": {}, "thread_resource_map": {}, "start_ns": 0})
    )
    return str(path)


def launch(corr, at):
    return {
        "kind": "cuda_runtime", "cbid": 211, "process_id": 10, "thread_id": 11,
        "correlation_id": corr, "start_ns": BASE + at, "end_ns": BASE + at + 500,
    }


def kernel(corr, start, end, name):
    return {
        "kind": "kernel", "device_id": 0, "stream_id": 7, "context_id": 1,
        "correlation_id": corr, "start_ns": BASE + start, "end_ns": BASE + end, "name": name,
    }


@pytest.mark.parametrize("exact", [False, True])
def test_overlapping_kernels_on_one_stream_stay_visible(exact, tmp_path):
    # "second" overlaps "first" without nesting; "inner" nests in "second".
    events = [launch(i, 1000 * i) for i in (1, 2, 3, 4)] + [
        kernel(1, 10_000, 20_000, "first"),
        kernel(2, 15_000, 25_000, "second"),
        kernel(3, 16_000, 17_000, "inner"),
        kernel(4, 30_000, 31_000, "third"),
    ]
    w = window_file(tmp_path / "w.json", events)
    flag = ["--exact"] if exact else []
    cupmon_cli("export", "--window", w, *flag, "--trace-name", "o", "-o", tmp_path / "o.json")
    cupmon_cli("export", "--window", w, *flag, "--trace-name", "o", "-o", tmp_path / "o.pftrace")
    assert_same(tmp_path / "o.json", tmp_path / "o.pftrace")
    report = check((tmp_path / "o.pftrace").read_bytes(), 10)
    per_track = report["slices_per_track"]
    overlap = {k: n for k, n in per_track.items() if k.startswith("stream 7 (overlap")}
    stream = {k: n for k, n in per_track.items() if k.startswith("stream 7  [")}
    # Every kernel is drawn: on the stream's track or on an overlap track.
    assert sum(overlap.values()) + sum(stream.values()) == 4, per_track
    assert overlap, f"no overlap track: {per_track}"
    view = pftrace_view(str(tmp_path / "o.pftrace"))
    # The complete trace's JSON has its overlap track already; PyTorch's exact
    # output has the kernels on one thread, and the writer opens the track.
    assert (view.overlap_lane_slices > 0) == exact


def test_memory_counters_and_instants_come_across(tmp_path):
    memory = [
        {"kind": "gpu_memory", "device_id": 0, "stream_id": 7, "timestamp_ns": BASE + t,
         "operation": op, "address": 4096 * (t % 3 + 1), "bytes": 1 << 20, "memory_kind": 3,
         "name": "[memory]"}
        for t, op in ((1000, 1), (2000, 1), (40_000, 2), (41_000, 2))
    ]
    w = window_file(tmp_path / "w.json", [launch(1, 0), kernel(1, 10_000, 20_000, "k")] + memory)
    cupmon_cli("export", "--window", w, "--trace-name", "m", "-o", tmp_path / "m.json")
    cupmon_cli("export", "--window", w, "--trace-name", "m", "-o", tmp_path / "m.pftrace")
    counts = assert_same(tmp_path / "m.json", tmp_path / "m.pftrace")
    assert counts["counter_values"] == 4 and counts["instants"] >= 4


def test_a_trace_the_writer_cut_short_is_not_read_as_whole(tmp_path):
    window = FIXTURES / "cuda_workload" / "expected_window.json"
    cupmon.export_trace_window(window, tmp_path / "t.pftrace.gz")
    data = gzip.decompress((tmp_path / "t.pftrace.gz").read_bytes())
    with pytest.raises(ValueError, match="runs past the end"):
        check(data[:-3], 5)
