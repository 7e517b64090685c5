"""The error-code contract between Rust and Python: ``cupmon.ErrorCode`` is
exactly the table that the injection library (the C ABI's ``error_codes`` op)
and the native module (``_cupmon.error_codes()``) were built with, every code
has a class, and classes are picked by code, not by message text."""

from __future__ import annotations

import errno
import json

import pytest

import cupmon
from cupmon import _cupmon
from cupmon._errors import _CLASSES, ErrorCode, error_for
from conftest import run_python


def python_table() -> list:
    return sorted((member.value, member.name) for member in ErrorCode)


def test_the_python_table_is_the_native_modules():
    native = _cupmon.error_codes()
    assert [(code, kind) for code, kind, _ in native] == python_table()
    assert all(meaning for _, _, meaning in native)


def test_the_python_table_is_the_injection_librarys():
    # In a child: the library is loaded once per process and stays loaded.
    code = """
import json
from cupmon import _monitor
print(json.dumps(_monitor.call("error_codes")))
"""
    result = run_python(code, {})
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout.strip().splitlines()[-1])
    assert [(row["code"], row["kind"]) for row in rows] == python_table()


def test_every_code_has_a_class_and_no_class_is_left_over():
    assert set(_CLASSES) == set(ErrorCode)


@pytest.mark.parametrize(
    "code, cls",
    [
        (ErrorCode.NotMonitoring, cupmon.NotMonitoringError),
        (ErrorCode.MonitorStopped, cupmon.NotMonitoringError),
        (ErrorCode.AlreadyMonitoring, cupmon.AlreadyMonitoringError),
        (ErrorCode.WindowAlreadyOpen, cupmon.WindowAlreadyOpenError),
        (ErrorCode.NoWindowOpen, cupmon.NoWindowOpenError),
        (ErrorCode.WindowAlreadyPrepared, cupmon.MonitorStateError),
        (ErrorCode.NoAnnotationOpen, cupmon.MonitorStateError),
        (ErrorCode.NoPythonStacks, cupmon.MonitorStateError),
        (ErrorCode.NoDriver, cupmon.NoDriverError),
        (ErrorCode.NoCupti, cupmon.NoCuptiError),
        (ErrorCode.Cupti, cupmon.MonitorError),
        (ErrorCode.Internal, cupmon.MonitorError),
        (ErrorCode.InvalidSetting, ValueError),
        (ErrorCode.BadRequest, ValueError),
        (ErrorCode.TraceInput, cupmon.TraceInputError),
        (ErrorCode.DumpInput, cupmon.DumpError),
    ],
)
def test_the_class_comes_from_the_code_and_the_code_stays_on_it(code, cls):
    # The same message for every code: only the code can choose the class.
    made = error_for(int(code), "no trace window is open")
    assert type(made) is cls
    assert made.code is code
    assert str(made) == "no trace window is open"


def test_state_errors_are_monitor_state_errors():
    for code in (ErrorCode.NotMonitoring, ErrorCode.WindowAlreadyOpen, ErrorCode.NoWindowOpen):
        made = error_for(code, "m")
        assert isinstance(made, cupmon.MonitorStateError)
        assert isinstance(made, cupmon.MonitorError) and isinstance(made, RuntimeError)


def test_an_io_code_is_an_os_error_with_the_systems_text():
    made = error_for(ErrorCode.Io, "cannot read", errno.ENOENT, "/x/cpu.json")
    assert isinstance(made, FileNotFoundError)
    assert made.filename == "/x/cpu.json" and made.code is ErrorCode.Io
    assert str(made) == "[Errno 2] cannot read: No such file or directory: '/x/cpu.json'"
    without_number = error_for(ErrorCode.Io, "writing the output: disk on fire")
    assert without_number.errno == errno.EIO
    assert without_number.strerror == "writing the output: disk on fire"


def test_an_unknown_code_is_a_monitor_error_that_says_so():
    made = error_for(999, "something new")
    assert type(made) is cupmon.MonitorError
    assert "error code 999" in str(made) and "something new" in str(made)
    assert type(error_for(None, "no code at all")) is cupmon.MonitorError  # type: ignore[arg-type]


def test_offline_errors_carry_their_code(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        cupmon.read_dump(tmp_path / "nowhere")
    assert info.value.code is ErrorCode.Io
    with pytest.raises(cupmon.TraceInputError) as info:
        cupmon.export_trace_window({"events": []}, tmp_path / "o.json")
    assert info.value.code is ErrorCode.TraceInput


def test_requests_are_encoded_by_the_librarys_enum():
    # _cupmon.abi_request is cupmon_abi::Request, the enum the injection library
    # decodes cupmon_call's requests with: what it writes, the library reads.
    assert json.loads(_cupmon.abi_request('{"op": "push_annotation", "name": "x", "later": 1}')) == {
        "op": "push_annotation",
        "name": "x",
    }
    for bad, what in [
        ('{"op": "nope"}', 'unknown op "nope"'),
        ('{"op": "start"}', "output_dir"),
        ('{"op": "push_annotation", "name": 3}', "push_annotation"),
    ]:
        with pytest.raises(ValueError, match=what) as raised:
            _cupmon.abi_request(bad)
        assert raised.value.code is ErrorCode.BadRequest


def test_an_unknown_op_fails_in_the_caller_as_the_library_would_answer_it():
    code = """
from cupmon import _monitor
try:
    _monitor.call("no_such_op")
except ValueError as e:
    print(int(e.code), e)
"""
    result = run_python(code, {})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith(f"{int(ErrorCode.BadRequest)} unknown op")
