"""cupmon: an always-on, low-overhead GPU activity monitor for CUDA programs.

Live API (the one monitor of this process, through ``libcupmon_inject.so``):
:func:`start_collection`, :func:`stop_collection`, :func:`monitor_stats`,
:func:`prepare_trace_window`, :func:`start_trace_window`,
:func:`begin_trace_window`, :func:`end_trace_window`,
:func:`push_user_annotation`, :func:`pop_user_annotation`, :func:`rearm`,
:func:`python_stacks` (source attribution off and on around a block), and
the context managers :func:`window` and :func:`annotate`. Under ``cupmon run`` these drive
the monitor that ``cupmon run`` started.

Offline (Rust, no GPU needed): :func:`merge_trace_window_into_chrome_trace`,
:func:`export_trace_window`, :func:`read_dump`.

torch.profiler users: :func:`cupmon.torch.profile` (imports torch on use).
Errors: see :mod:`cupmon._errors` (:class:`CupmonError` and subclasses; each
error from Rust carries its :class:`ErrorCode` as ``code``).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional

from ._cupmon import __version__
from ._errors import (
    AlreadyMonitoringError,
    CupmonError,
    CupmonWarning,
    DumpError,
    ErrorCode,
    MonitorError,
    MonitorStateError,
    NoCuptiError,
    NoDriverError,
    NotMonitoringError,
    NoWindowOpenError,
    TraceInputError,
    WindowAlreadyOpenError,
)
from ._monitor import (
    step,
    begin_trace_window,
    end_trace_window,
    monitor_stats,
    pop_user_annotation,
    prepare_trace_window,
    push_user_annotation,
    python_stacks,
    rearm,
    start_collection,
    start_trace_window,
    stop_collection,
)
from ._offline import (
    export_trace_window,
    merge_complete,
    merge_trace_window_into_chrome_trace,
    read_dump,
)

__all__ = [
    "step",
    "__version__",
    "start_collection",
    "stop_collection",
    "monitor_stats",
    "prepare_trace_window",
    "start_trace_window",
    "begin_trace_window",
    "end_trace_window",
    "push_user_annotation",
    "pop_user_annotation",
    "rearm",
    "python_stacks",
    "window",
    "annotate",
    "TraceWindowResult",
    "merge_trace_window_into_chrome_trace",
    "merge_complete",
    "export_trace_window",
    "read_dump",
    "CupmonError",
    "CupmonWarning",
    "TraceInputError",
    "DumpError",
    "MonitorError",
    "NoDriverError",
    "NoCuptiError",
    "MonitorStateError",
    "NotMonitoringError",
    "AlreadyMonitoringError",
    "WindowAlreadyOpenError",
    "NoWindowOpenError",
    "ErrorCode",
]


class TraceWindowResult:
    """What :func:`window` yields: ``start_ns`` at once, ``trace_window`` (the
    window dict) once the ``with`` block has ended."""

    def __init__(self, start_ns: int) -> None:
        self.start_ns = start_ns
        self.trace_window: Optional[dict[str, Any]] = None

    def __repr__(self) -> str:
        events = None if self.trace_window is None else len(self.trace_window.get("events", []))
        return f"TraceWindowResult(start_ns={self.start_ns}, events={events})"


@contextlib.contextmanager
def window() -> Iterator[TraceWindowResult]:
    """A trace window around a block::

        with cupmon.window() as w:
            train_step()
        cupmon.merge_trace_window_into_chrome_trace("cpu.json", "out.json", w.trace_window)

    The window is closed (and ``w.trace_window`` set) even if the block raises.
    """
    result = TraceWindowResult(begin_trace_window())
    try:
        yield result
    finally:
        result.trace_window = end_trace_window()


class annotate(contextlib.ContextDecorator):
    """A named range (``gpu_user_annotation`` in merged traces) around a block,
    or around every call of a decorated function::

        with cupmon.annotate("forward"):
            model(x)

    Like NVTX ranges and ``torch.profiler.record_function``, it does nothing when no
    monitor runs in the process (no ``cupmon run``, no :func:`start_collection`, or
    under ``cupmon run`` before the program's first CUDA call), so instrumented code
    runs the same with and without cupmon.
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        self.name = name
        # Per thread, whether each open use of this object pushed an annotation: one
        # decorated function may run in several threads at once, or call itself.
        self._pushed = threading.local()

    def _stack(self) -> list:
        stack = getattr(self._pushed, "stack", None)
        if stack is None:
            stack = self._pushed.stack = []
        return stack

    def __enter__(self) -> "annotate":
        try:
            push_user_annotation(self.name)
            pushed = True
        except NotMonitoringError:
            pushed = False
        self._stack().append(pushed)
        return self

    def __exit__(self, *exc: object) -> None:
        stack = self._stack()
        # Pop only what this object pushed: a monitor that started inside the block
        # (the first CUDA call under `cupmon run`) holds no range of ours.
        if stack and stack.pop():
            pop_user_annotation()
