"""The live API: the one monitor of this process, reached through the
injection library's JSON C ABI (``cupmon_call``) with ctypes.

There is one monitor per process, hosted by ``libcupmon_inject.so``. Under
``cupmon run`` the CUDA driver loaded that library (``CUDA_INJECTION64_PATH``)
and ``cupmon run`` put its path in ``CUPMON_INJECT_LIBRARY``; loading the same
file again with ctypes returns the instance already in the process, so this
module drives the monitor that ``cupmon run`` started. Otherwise the copy
bundled in this package is loaded and :func:`start_collection` starts it.
ctypes releases the GIL for the length of each call.
"""

from __future__ import annotations

import ctypes
import json
import numbers
import os
import threading
import warnings
from typing import Any, Dict, Iterable, Optional, Union

from . import _cupmon
from ._errors import ErrorCode, MonitorError, MonitorStateError, NotMonitoringError, error_for
from ._window import Window, int_keys

#: Version of the C ABI this module speaks (``ABI_VERSION`` in cupmon-inject's abi.rs).
ABI_VERSION = 2
#: Environment: path of the injection library (set by ``cupmon run``).
ENV_INJECT_LIBRARY = "CUPMON_INJECT_LIBRARY"

_LIBRARY_NAME = "libcupmon_inject.so"
_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None


def library_path() -> str:
    """The injection library this module uses: ``$CUPMON_INJECT_LIBRARY``, else
    the copy bundled in the package."""
    return os.environ.get(ENV_INJECT_LIBRARY) or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), _LIBRARY_NAME
    )


def under_cupmon_run() -> bool:
    """True when ``cupmon run`` launched this process (its driver injection is set)."""
    injected = os.environ.get("CUDA_INJECTION64_PATH")
    return (
        bool(injected)
        and injected == os.environ.get(ENV_INJECT_LIBRARY)
        and os.environ.get("CUPMON_ENABLE") != "0"
    )


def _load() -> ctypes.CDLL:
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        path = library_path()
        if not os.path.isfile(path):
            raise MonitorError(
                f"cupmon's injection library is missing: {path} does not exist "
                f"(reinstall cupmon, or set {ENV_INJECT_LIBRARY})"
            )
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise MonitorError(f"cannot load cupmon's injection library {path}: {e}") from e
        lib.cupmon_call.argtypes = [ctypes.c_char_p]
        lib.cupmon_call.restype = ctypes.c_void_p  # freed with cupmon_free
        lib.cupmon_free.argtypes = [ctypes.c_void_p]
        lib.cupmon_free.restype = None
        version = _call_lib(lib, {"op": "version"})
        if version.get("abi") != ABI_VERSION:
            raise MonitorError(
                f"{path} speaks C ABI {version.get('abi')}, this module needs {ABI_VERSION} "
                "(the library and the Python package come from different cupmon versions)"
            )
        _lib = lib
        return lib


def _call_lib(lib: ctypes.CDLL, request: Dict[str, Any]) -> Any:
    # Encoded by the Rust enum the library decodes (cupmon_abi::Request): an op
    # or field it does not know fails here, as the library would answer it.
    encoded = _cupmon.abi_request(json.dumps(request))
    answer_ptr = lib.cupmon_call(encoded.encode("utf-8"))
    if not answer_ptr:
        raise MonitorError(f"cupmon_call returned no answer to {request['op']!r}")
    try:
        answer = json.loads(ctypes.string_at(answer_ptr))
    finally:
        lib.cupmon_free(answer_ptr)
    if answer.get("ok"):
        return answer.get("result")
    # {"code": N, "kind": "<Name>", "message": "..."}: the class comes from the
    # code alone (see _errors); "kind" is the code's name, for people reading.
    error = answer.get("error")
    if not isinstance(error, dict):
        raise MonitorError(f"cupmon_call answered {request['op']!r} with no error object: {answer}")
    code = error.get("code")
    message = str(error.get("message") or "unknown error")
    if code == ErrorCode.NotMonitoring and under_cupmon_run():
        message += (
            "; under `cupmon run` the monitor starts when the program initialises "
            "CUDA (for example at its first torch.cuda call)"
        )
    raise error_for(code, message)


def call(op: str, **args: Any) -> Any:
    """One request to the monitor; raises the mapped exception on failure."""
    return _call_lib(_load(), {"op": op, **args})


def status() -> Dict[str, Any]:
    """``{"running": bool, "injected": bool, "dump_dir": str, "window_open": bool}``."""
    return call("status")


def _activities(activities: Union[None, str, Iterable[Any]]) -> Optional[Any]:
    if activities is None or isinstance(activities, str):
        return activities
    kinds: list = []
    for a in activities:
        if isinstance(a, str):
            kinds.append(a)
        elif isinstance(a, numbers.Integral) and not isinstance(a, bool):
            kinds.append(int(a))  # CUPTI's numbers, or an IntEnum of them
        else:
            raise TypeError(f"activities: {a!r} is neither a CUPTI activity kind name nor a number")
    return kinds


def start_collection(
    output_dir: Union[str, "os.PathLike[str]"],
    *,
    activities: Union[None, str, Iterable[Any]] = None,
    buffer_size: Optional[int] = None,
    flush_period_s: Optional[float] = None,
    max_outstanding: Optional[int] = None,
    **settings: Union[str, int, float, bool],
) -> str:
    """Start always-on collection into the dump directory ``output_dir``.

    ``activities``: CUPTI activity kinds (names such as ``"CONCURRENT_KERNEL"``
    or numbers; default kernels, memcpy, memset). ``buffer_size``: bytes per
    CUPTI buffer (default 4 MiB). ``flush_period_s``: the dump stays about this
    far behind (default 1 s). ``max_outstanding``: cap on buffer memory in bytes
    (past it records are dropped and counted; default 256 MiB). Any other
    setting of cupmon's table goes by name, as text or a number, e.g.
    ``keep="1GiB"``, ``keep_for="2h"``, ``segment_size="64MiB"``, ``raw=True``.
    The ``CUPMON_*`` environment variables apply underneath (``CUPMON_KEEP=1GiB
    python train.py``); the arguments given here win. Returns the dump directory.

    Raises :class:`NoDriverError` without an NVIDIA driver,
    :class:`NoCuptiError` without libcupti, ``ValueError`` for a setting
    cupmon does not accept, and :class:`AlreadyMonitoringError` when the
    process is already monitored -- in particular under ``cupmon run``, which
    owns the monitor: there, take windows with :func:`begin_trace_window` /
    :func:`end_trace_window` instead (before ``cupmon run``'s monitor has
    started, :class:`MonitorStateError`).
    """
    if not isinstance(output_dir, (str, os.PathLike)):
        raise TypeError(f"output_dir must be a path, not {type(output_dir).__name__}")
    for name, value in (("buffer_size", buffer_size), ("max_outstanding", max_outstanding)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise TypeError(f"{name} must be an int (bytes), not {type(value).__name__}")
    if flush_period_s is not None and (
        not isinstance(flush_period_s, (int, float)) or isinstance(flush_period_s, bool)
    ):
        raise TypeError(f"flush_period_s must be a number, not {type(flush_period_s).__name__}")
    state = status()
    if state.get("running"):
        where = state.get("dump_dir")
        if state.get("injected"):
            raise error_for(
                ErrorCode.AlreadyMonitoring,
                f"this process is already monitored by `cupmon run` (dump in {where}); "
                "take trace windows with begin_trace_window()/end_trace_window() instead",
            )
        raise error_for(
            ErrorCode.AlreadyMonitoring,
            f"cupmon is already collecting in this process (dump in {where}); "
            "call stop_collection() first",
        )
    if under_cupmon_run():
        raise MonitorStateError(
            "this process runs under `cupmon run`, which starts the monitor when the "
            "program initialises CUDA (and says on stderr if it cannot); take trace "
            "windows with begin_trace_window()/end_trace_window() after that"
        )
    dump_dir = os.path.abspath(os.fspath(output_dir))
    call(
        "start",
        output_dir=dump_dir,
        kinds=_activities(activities),
        buffer_size=buffer_size,
        flush_period_s=None if flush_period_s is None else float(flush_period_s),
        max_outstanding=max_outstanding,
        **settings,
    )
    return dump_dir


def stop_collection() -> Dict[str, Any]:
    """Stop the collection started by :func:`start_collection`: flush, close an
    open window (written as ``window-N.json`` in the dump, with its trace
    ``window-N.trace.json.gz``, or ``.trace.pftrace`` with the ``trace_format``
    setting, beside it), return the final stats. Raises
    :class:`NotMonitoringError` when no collection runs, and
    :class:`MonitorStateError` under ``cupmon run``, whose monitor is not
    stopped (it ends with the process)."""
    state = status()
    if state.get("running") and state.get("injected"):
        raise MonitorStateError(
            "the monitor of this process belongs to `cupmon run` and stops when the process exits"
        )
    stats = call("stop")
    _write_window_traces(stats.get("dump_dir"), stats.get("trace_format") or "json")
    return stats


def _write_window_traces(dump_dir: Optional[str], trace_format: str) -> None:
    """Write the trace of each window of the dump that has none: the monitor
    writes only the windows' JSON (the trace is made here, after it stopped,
    with the offline export that ``cupmon export`` uses)."""
    if not dump_dir or not os.path.isdir(dump_dir):
        return
    from . import _cupmon as _native  # the Rust extension: `cupmon export`'s code

    for name in sorted(os.listdir(dump_dir)):
        number = name[len("window-") : -len(".json")]
        if not (name.startswith("window-") and name.endswith(".json") and number.isdigit()):
            continue
        traces = dict(_native.window_trace_files(int(number)))
        if any(os.path.exists(os.path.join(dump_dir, t)) for t in traces.values()):
            continue
        window = os.path.join(dump_dir, name)
        trace = os.path.join(dump_dir, traces.get(trace_format, traces["json"]))
        try:
            _native.export_file(
                window, trace, f"cupmon window {number} of pid {os.getpid()}", False, trace_format
            )
        except Exception as e:  # a window without records, an unreadable file: said, not fatal
            warnings.warn(f"cupmon: no trace written for {window}: {e}", stacklevel=3)


def monitor_stats() -> Dict[str, Any]:
    """Counters of the running monitor: buffers, bytes written, records per
    kind, ``dropped_records``, windows taken, the dump directory."""
    return call("stats")


def prepare_trace_window() -> None:
    """Enable the window's extra activity kinds (runtime, driver, external
    correlation, ...) ahead of :func:`start_trace_window` (a warm-up).
    Raises :class:`WindowAlreadyOpenError` while a window is open, and a
    :class:`MonitorStateError` with code ``WindowAlreadyPrepared`` when it
    was prepared already."""
    call("prepare_window")


def start_trace_window(*, withhold_api_from_clients: bool = False) -> int:
    """Open the prepared window (preparing it first if needed): flush, then
    stamp its start. Returns the start (Unix ns). Raises
    :class:`WindowAlreadyOpenError` when a window is open already.

    ``withhold_api_from_clients``: while the window is open, do not hand
    runtime/driver records to other CUPTI clients sharing CUPTI with cupmon
    (torch.profiler under ``cupmon run``), so that a trace merged from their
    CPU trace and this window has each call once. :mod:`cupmon.torch` sets it.
    """
    answer = call("start_window", withhold_api_from_clients=bool(withhold_api_from_clients))
    return int(answer["start_ns"])


def begin_trace_window(*, withhold_api_from_clients: bool = False) -> int:
    """:func:`prepare_trace_window` then :func:`start_trace_window`."""
    prepare_trace_window()
    return start_trace_window(withhold_api_from_clients=withhold_api_from_clients)


def end_trace_window() -> Window:
    """Close the window and return it: a trace-window dict (``events``,
    ``extra_activities``, ``user_annotations`` and ``thread_resource_map``
    with int keys, ``start_ns``), ready for
    :func:`merge_trace_window_into_chrome_trace`. Raises
    :class:`NoWindowOpenError` when no window is open."""
    return int_keys(call("end_window"))


def push_user_annotation(name: str) -> int:
    """Start a named range on this thread: GPU work launched inside it gets a
    ``gpu_user_annotation`` span in merged traces. Returns its external id."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    return int(call("push_annotation", name=name)["id"])


def pop_user_annotation() -> int:
    """End this thread's innermost annotation; returns its external id.
    Raises a :class:`MonitorStateError` with code ``NoAnnotationOpen`` when
    this thread has none open."""
    return int(call("pop_annotation")["id"])


def rearm() -> int:
    """Take CUPTI's activity callbacks back after another CUPTI client in the
    process registered its own (torch.profiler started without ``cupmon run``)
    and turn cupmon's activity kinds on again. Returns how many of cupmon's
    buffers CUPTI holds at that moment; those that never come back are counted
    as lost when collection stops (``monitor_stats()["buffers_lost"]``). Under
    ``cupmon run`` CUPTI is shared and this is not needed."""
    return int(call("rearm")["buffers_held_by_cupti"])


def python_stacks(on: bool) -> bool:
    """Note the Python stack of each launch from now on (``on=True``), or stop
    noting them (``on=False``: a hot loop run without attribution); returns
    whether they were noted before the call.

    While off, a launch costs what it costs under cupmon without attribution, and
    its kernels, copies and memsets carry no stack (``cupmon stats --by-line``
    counts them as "with no stack noted"). ``True`` works even where
    ``CUPMON_PYTHON_STACKS=0`` started the run without stacks. Raises
    :class:`NotMonitoringError` when no monitor runs in the process, and a
    :class:`MonitorStateError` with code ``NoPythonStacks``, saying why, when
    stacks cannot be noted here (launches are not counted, as with
    :func:`start_collection` without ``cupmon run``; a CPython other than
    3.11-3.13).
    """
    if not isinstance(on, bool):
        raise TypeError(f"on must be a bool, not {type(on).__name__}")
    return bool(call("python_stacks", on=on)["was_on"])


def step() -> Optional[str]:
    """Mark the end of one step of the program (a training iteration).

    cupmon counts them; a window opened from outside with ``cupmon window TARGET
    --steps N`` closes itself after N of them. Returns the window file written when
    this step closed one. Cheap: call it every iteration. Without a monitor in the
    process it does nothing and returns None.
    """
    try:
        return call("step").get("window_written")
    except NotMonitoringError:
        return None
