"""Argument errors, unusable inputs and files: clear exceptions, no partial output."""

from __future__ import annotations

import json
import shutil

import pytest

import cupmon
from conftest import FIXTURES, cpu_trace
from trace_compare import load

WINDOW = FIXTURES / "cuda_workload" / "expected_window.json"


def small_window() -> dict:
    return load(WINDOW)


@pytest.mark.parametrize(
    "args, message",
    [
        ((1, "out.json", {}), "cpu_trace_path must be a path"),
        (("cpu.json", None, {}), "output_path must be a path"),
        (("cpu.json", "out.json", 42), "trace_window must be a trace-window dict"),
        (("cpu.json", "out.json", [1, 2]), "trace_window must be a trace-window dict"),
    ],
)
def test_merge_rejects_wrong_types(args, message):
    with pytest.raises(TypeError, match=message):
        cupmon.merge_trace_window_into_chrome_trace(*args)


def test_merge_rejects_a_non_string_trace_name(tmp_path):
    with pytest.raises(TypeError, match="trace_name must be a str"):
        cupmon.merge_trace_window_into_chrome_trace(
            cpu_trace("cuda_workload"), tmp_path / "o.json", small_window(), trace_name=3
        )


def test_a_missing_cpu_trace_is_file_not_found(tmp_path):
    missing = tmp_path / "nope.json"
    out = tmp_path / "out.json"
    with pytest.raises(FileNotFoundError) as info:
        cupmon.merge_trace_window_into_chrome_trace(missing, out, small_window())
    assert info.value.filename == str(missing)
    assert "cannot read" in str(info.value)
    assert not out.exists()


def test_a_missing_window_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        cupmon.merge_trace_window_into_chrome_trace(
            cpu_trace("cuda_workload"), tmp_path / "o.json", tmp_path / "window.json"
        )


def test_an_unwritable_output_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        cupmon.merge_trace_window_into_chrome_trace(
            cpu_trace("cuda_workload"), tmp_path / "no" / "such" / "dir" / "o.json", small_window()
        )


def test_a_cpu_trace_that_is_not_json_is_a_trace_input_error(tmp_path):
    bad = tmp_path / "cpu.json"
    bad.write_text('{"traceEvents": [ {"ph": "X", ')
    out = tmp_path / "out.json"
    with pytest.raises(cupmon.TraceInputError, match="cpu.json") as info:
        cupmon.merge_trace_window_into_chrome_trace(bad, out, small_window())
    assert isinstance(info.value, ValueError) and isinstance(info.value, cupmon.CupmonError)
    assert not out.exists()


def test_a_window_event_without_a_required_field_is_a_trace_input_error(tmp_path):
    window = small_window()
    kernel = next(e for e in window["events"] if e["kind"] == "kernel")
    del kernel["start_ns"]
    with pytest.raises(cupmon.TraceInputError, match="trace_window"):
        cupmon.merge_trace_window_into_chrome_trace(
            cpu_trace("cuda_workload"), tmp_path / "o.json", window
        )


def test_a_window_value_json_cannot_hold_is_a_trace_input_error(tmp_path):
    window = small_window()
    window["events"][0]["name"] = object()
    with pytest.raises(cupmon.TraceInputError, match="cannot be written as JSON"):
        cupmon.merge_trace_window_into_chrome_trace(
            cpu_trace("cuda_workload"), tmp_path / "o.json", window
        )


def test_nothing_to_merge_is_a_trace_input_error(tmp_path):
    # An empty CPU trace and an empty window: PyTorch's merge raises too.
    empty_window = {"events": [], "user_annotations": {}, "thread_resource_map": {}}
    with pytest.raises(cupmon.TraceInputError, match="did not contain any duration events"):
        cupmon.merge_trace_window_into_chrome_trace(
            cpu_trace("cuda_workload"), tmp_path / "o.json", empty_window
        )


def test_exporting_an_empty_window_is_a_trace_input_error(tmp_path):
    with pytest.raises(cupmon.TraceInputError, match="no events"):
        cupmon.export_trace_window({"events": []}, tmp_path / "o.json")
    with pytest.raises(TypeError):
        cupmon.export_trace_window(None, tmp_path / "o.json")


def test_read_dump_of_a_missing_directory_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        cupmon.read_dump(tmp_path / "nowhere")
    with pytest.raises(TypeError, match="path must be a path"):
        cupmon.read_dump(5)


def test_read_dump_with_a_corrupt_meta_is_a_dump_error(tmp_path):
    dump = tmp_path / "dump"
    shutil.copytree(FIXTURES / "cuda_workload", dump)
    meta = dump / "cupti_monitor_meta.bin"
    data = bytearray(meta.read_bytes())
    data[0:8] = b"XXXXXXXX"
    meta.write_bytes(bytes(data))
    with pytest.raises(cupmon.DumpError, match="cupti_monitor_meta.bin: byte 0: bad magic") as info:
        cupmon.read_dump(dump)
    assert isinstance(info.value, ValueError)


def test_read_dump_skips_a_damaged_chunk_with_a_warning_naming_the_bytes(tmp_path):
    # A damaged chunk header (a crash, a bad disk) costs that chunk only: the reader
    # resumes at the next valid header and says which bytes it skipped.
    dump = tmp_path / "dump"
    shutil.copytree(FIXTURES / "cuda_workload", dump)
    raw = dump / "cupti_monitor_raw_buffers.bin"
    data = bytearray(raw.read_bytes())
    data[0:8] = b"XXXXXXXX"  # the first chunk's magic
    raw.write_bytes(bytes(data))
    with pytest.warns(cupmon.CupmonWarning, match=r"skipped bytes 0\.\.\d+ .*bad magic"):
        window = cupmon.read_dump(dump)
    full = cupmon.read_dump(FIXTURES / "cuda_workload")
    assert 0 < len(window["events"]) < len(full["events"])


def test_read_dump_of_a_truncated_dump_warns_and_returns_the_rest(tmp_path):
    dump = tmp_path / "dump"
    shutil.copytree(FIXTURES / "cuda_workload", dump)
    raw = dump / "cupti_monitor_raw_buffers.bin"
    data = raw.read_bytes()
    raw.write_bytes(data[: len(data) - 100])
    with pytest.warns(cupmon.CupmonWarning, match="truncated|ends inside"):
        window = cupmon.read_dump(dump)
    full = cupmon.read_dump(FIXTURES / "cuda_workload")
    assert 0 < len(window["events"]) <= len(full["events"])


def test_live_calls_reject_wrong_types():
    with pytest.raises(TypeError, match="output_dir must be a path"):
        cupmon.start_collection(None)
    with pytest.raises(TypeError, match="buffer_size must be an int"):
        cupmon.start_collection("d", buffer_size="4M")
    with pytest.raises(TypeError, match="flush_period_s must be a number"):
        cupmon.start_collection("d", flush_period_s="1")
    with pytest.raises(TypeError, match="activities"):
        cupmon.start_collection("d", activities=[1.5])
    with pytest.raises(TypeError, match="name must be a str"):
        cupmon.push_user_annotation(3)
    with pytest.raises(TypeError, match="name must be a str"):
        cupmon.annotate(None)


def test_window_files_must_be_json(tmp_path):
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps({"events": "nope"}))
    with pytest.raises(cupmon.TraceInputError):
        cupmon.merge_trace_window_into_chrome_trace(
            cpu_trace("cuda_workload"), tmp_path / "o.json", bad
        )
