"""cupmon's exceptions, and the one table that maps error kinds to them.

Both sources of errors go through :func:`error_for`: the native module
(``cupmon._cupmon``, for the offline merge, export and dump reader) names a
kind when a Rust error crosses into Python, and the live API names the kind
that the injection library's C ABI answered with.

Hierarchy::

    CupmonError                        anything cupmon itself reports
    ├── TraceInputError (ValueError)   a CPU trace or trace window the merge cannot use
    ├── DumpError (ValueError)         a raw dump directory that cannot be decoded
    └── MonitorError (RuntimeError)    the live monitor failed (CUPTI, writing the dump)
        ├── NoDriverError              no NVIDIA driver (libcuda.so.1) in this process
        ├── NoCuptiError               no libcupti found, or it cannot be loaded
        └── MonitorStateError          wrong state: not started, already started,
                                       owned by ``cupmon run``, no window open, ...

Argument errors are Python's own: ``TypeError`` for a wrong type, ``ValueError``
for a bad value. Files that cannot be read or written raise ``OSError``
(``FileNotFoundError``, ``PermissionError``, ...) with ``filename`` set, as
the seed's pure-Python merge did.
"""

from __future__ import annotations

import errno as _errno
import os
from typing import Optional


class CupmonError(Exception):
    """Base class of the errors cupmon reports (argument and file errors aside)."""


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
    """The call does not fit the monitor's state (not started, already started,
    started by ``cupmon run``, no trace window open, ...)."""


class CupmonWarning(UserWarning):
    """A result is usable but incomplete (dropped records, a truncated dump,
    a trace window without GPU activity)."""


# Error kind -> class. "io" builds an OSError; "bad_argument" a ValueError.
_KINDS = {
    "trace_input": TraceInputError,
    "dump_input": DumpError,
    # Live monitor (the injection library's C ABI kinds).
    "no_driver": NoDriverError,
    "no_cupti": NoCuptiError,
    "cupti": MonitorError,
    "dump": MonitorError,  # writing the dump failed
    "state": MonitorStateError,
    "internal": MonitorError,
    "bad_argument": ValueError,
}


def error_for(
    kind: str,
    message: str,
    errno: Optional[int] = None,
    filename: Optional[str] = None,
) -> BaseException:
    """The exception for an error of ``kind`` (raise it)."""
    if kind == "io":
        # OSError(errno, ...) becomes FileNotFoundError etc., as open() raises.
        # The path goes in `filename` (str() shows it), not twice in the text.
        code = errno if errno is not None else _errno.EIO
        if filename and message.startswith(filename + ": "):
            message = message[len(filename) + 2 :]
        return OSError(code, message or os.strerror(code), filename)
    return _KINDS.get(kind, MonitorError)(message)
