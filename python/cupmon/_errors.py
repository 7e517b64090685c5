"""cupmon's exceptions, and the one table that maps error codes to them.

Errors reach Python from Rust in two ways, both with an integer code from one
table (``ErrorCode`` below, the crate ``cupmon-error-code`` on the Rust side):
the native module (``cupmon._cupmon``, for the offline merge, export and dump
reader) and the injection library's C ABI (the live API), whose error answers
are ``{"code": N, "kind": "<Name>", "message": "..."}``. :func:`error_for`
picks the exception by the code alone; the message is for humans and is never
matched. The package's tests check that ``ErrorCode`` is exactly the table
both Rust sides report.

Hierarchy::

    CupmonError                        anything cupmon itself reports
    ├── TraceInputError (ValueError)   a CPU trace or trace window the merge cannot use
    ├── DumpError (ValueError)         a raw dump directory that cannot be decoded
    └── MonitorError (RuntimeError)    the live monitor failed (CUPTI, writing the dump)
        ├── NoDriverError              no NVIDIA driver (libcuda.so.1) in this process
        ├── NoCuptiError               no libcupti found, or it cannot be loaded
        └── MonitorStateError          the call does not fit the monitor's state
            ├── NotMonitoringError     no monitor runs (not started, or stopped)
            ├── AlreadyMonitoringError a monitor runs already (maybe ``cupmon run``'s)
            ├── WindowAlreadyOpenError a trace window is open already
            └── NoWindowOpenError      no trace window is open

Every exception made from a code has it as ``code`` (an :class:`ErrorCode`),
including the built-in ones: a bad setting or request is a ``ValueError``,
and a file that cannot be read or written an ``OSError``
(``FileNotFoundError``, ``PermissionError``, ...) with ``filename`` set, as
the pure-Python merge (PyTorch's ``merge_trace_window_into_chrome_trace``) raises.
"""

from __future__ import annotations

import enum
import errno as _errno
import os
from typing import Dict, Optional


class ErrorCode(enum.IntEnum):
    """The kinds of error that Rust reports, with their codes on the wire.

    The same names and numbers as ``ErrorCode`` in the crate
    ``cupmon-error-code``; a code is never renumbered or reused.
    """

    Internal = 1
    BadRequest = 2
    InvalidSetting = 3
    NoDriver = 10
    NoCupti = 11
    Cupti = 12
    DumpWrite = 13
    NotMonitoring = 20
    AlreadyMonitoring = 21
    MonitorStopped = 22
    WindowAlreadyOpen = 23
    WindowAlreadyPrepared = 24
    WindowNotPrepared = 25
    NoWindowOpen = 26
    NoAnnotationOpen = 27
    NoPythonStacks = 28
    TraceInput = 30
    DumpInput = 31
    Io = 32


class CupmonError(Exception):
    """Base class of the errors cupmon reports (argument and file errors aside).

    ``code``: the :class:`ErrorCode` the error came with (None when the
    Python side raised it on its own, e.g. a library that cannot be loaded).
    """

    code: Optional[ErrorCode] = None


class TraceInputError(CupmonError, ValueError):
    """A CPU trace or trace window that the merge or export cannot use: not
    JSON, wrong field types, a window without events, a merged trace without
    duration events. The message names the input and the place in it."""


class DumpError(CupmonError, ValueError):
    """A raw dump directory that cannot be decoded (bad magic, unsupported
    version, corrupt meta). Damage that leaves the rest readable (a truncated
    last chunk) is a :class:`CupmonWarning` instead."""


class MonitorError(CupmonError, RuntimeError):
    """The live monitor failed: a CUPTI call, writing the dump, an internal error."""


class NoDriverError(MonitorError):
    """No NVIDIA driver: ``libcuda.so.1`` cannot be loaded, so cupmon cannot
    monitor this process. The offline functions still work."""


class NoCuptiError(MonitorError):
    """libcupti was not found or cannot be loaded (set ``CUPMON_LIBCUPTI``)."""


class MonitorStateError(MonitorError):
    """The call does not fit the monitor's state. The subclasses name the
    common cases; the others (a window prepared twice, no annotation to pop,
    Python stacks that cannot be noted here) are this class itself, told apart
    by ``code``."""


class NotMonitoringError(MonitorStateError):
    """No monitor runs in this process: :func:`cupmon.start_collection` was
    not called (or the collection stopped), or ``cupmon run``'s monitor has
    not started yet (it starts when the program initialises CUDA)."""


class AlreadyMonitoringError(MonitorStateError):
    """A monitor runs in this process already: a second
    :func:`cupmon.start_collection`, or one under ``cupmon run``, which owns
    the monitor (take trace windows instead)."""


class WindowAlreadyOpenError(MonitorStateError):
    """A trace window is open already: end it before beginning another."""


class NoWindowOpenError(MonitorStateError):
    """No trace window is open, so there is none to end."""


class CupmonWarning(UserWarning):
    """A result is usable but incomplete (dropped records, a truncated dump,
    a trace window without GPU activity)."""


# Code -> class. Io builds an OSError (see error_for).
_CLASSES: Dict[ErrorCode, type] = {
    ErrorCode.Internal: MonitorError,
    ErrorCode.BadRequest: ValueError,
    ErrorCode.InvalidSetting: ValueError,
    ErrorCode.NoDriver: NoDriverError,
    ErrorCode.NoCupti: NoCuptiError,
    ErrorCode.Cupti: MonitorError,
    ErrorCode.DumpWrite: MonitorError,
    ErrorCode.NotMonitoring: NotMonitoringError,
    ErrorCode.AlreadyMonitoring: AlreadyMonitoringError,
    ErrorCode.MonitorStopped: NotMonitoringError,
    ErrorCode.WindowAlreadyOpen: WindowAlreadyOpenError,
    ErrorCode.WindowAlreadyPrepared: MonitorStateError,
    ErrorCode.WindowNotPrepared: MonitorStateError,
    ErrorCode.NoWindowOpen: NoWindowOpenError,
    ErrorCode.NoAnnotationOpen: MonitorStateError,
    ErrorCode.NoPythonStacks: MonitorStateError,
    ErrorCode.TraceInput: TraceInputError,
    ErrorCode.DumpInput: DumpError,
    ErrorCode.Io: OSError,
}


def error_for(
    code: int,
    message: str,
    errno: Optional[int] = None,
    filename: Optional[str] = None,
) -> BaseException:
    """The exception for an error of ``code`` (raise it), with ``code`` set.

    For :attr:`ErrorCode.Io` with an ``errno``, ``message`` is only the
    context ("cannot read"): the system's text for the number follows it, and
    the file goes in ``filename`` (``str()`` shows it), as ``open()`` raises.
    A code this package does not know (a library from another cupmon
    version) gives a :class:`MonitorError` that says so.
    """
    try:
        known = ErrorCode(code)
    except ValueError:
        exception: BaseException = MonitorError(
            f"{message} (error code {code}, unknown to this cupmon package)"
        )
        return exception
    if known is ErrorCode.Io:
        number = errno if errno is not None else _errno.EIO
        text = os.strerror(number) if errno is not None else ""
        strerror = ": ".join(part for part in (message, text) if part)
        # OSError(errno, ...) becomes FileNotFoundError etc., as open() raises.
        exception = OSError(number, strerror or os.strerror(number), filename)
    else:
        exception = _CLASSES[known](message)
    exception.code = known  # type: ignore[attr-defined]
    return exception
