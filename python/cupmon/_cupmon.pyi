"""Type stubs of the native module ``cupmon._cupmon`` (crate cupmon-python).

Low-level: windows are JSON bytes here. Use the wrappers in :mod:`cupmon`,
which take and return dicts. Every function releases the GIL while it works.
Errors: ``OSError`` for files, :class:`cupmon.TraceInputError` /
:class:`cupmon.DumpError` for unusable inputs, each made by
``cupmon._errors.error_for`` from an :class:`cupmon.ErrorCode`.
"""

import os
from typing import Any, Dict, List, Optional, Tuple, Union

_Path = Union[str, "os.PathLike[str]"]
# cpu_events_kept, cpu_events_replaced, window_events, events_written; and for a
# Perfetto trace "pftrace": {bytes, slices, instants, counter_values,
# flow_events_bound, flow_events_unbound, overlap_slices, warnings}
_Stats = Dict[str, Any]

__version__: str

def merge_json(
    cpu_trace_path: _Path,
    output_path: _Path,
    window_json: bytes,
    trace_name: Optional[str] = None,
    exact: bool = True,
    format: Optional[str] = None,
) -> _Stats:
    """Merge a window (JSON bytes) into a Kineto CPU trace; write ``output_path``
    (``format`` "json" or "pftrace"; None: by the name, ``.pftrace`` is Perfetto's)."""

def merge_file(
    cpu_trace_path: _Path,
    output_path: _Path,
    window_path: _Path,
    trace_name: Optional[str] = None,
    exact: bool = True,
    format: Optional[str] = None,
) -> _Stats:
    """Merge a window JSON file (``.gz`` allowed) into a Kineto CPU trace."""

def export_json(
    window_json: bytes,
    output_path: _Path,
    trace_name: Optional[str] = None,
    exact: bool = False,
    format: Optional[str] = None,
) -> _Stats:
    """Write a window (JSON bytes) as a standalone Chrome trace."""

def export_file(
    window_path: _Path,
    output_path: _Path,
    trace_name: Optional[str] = None,
    exact: bool = False,
    format: Optional[str] = None,
) -> _Stats:
    """Write a window JSON file as a standalone Chrome trace."""

def read_dump_json(path: _Path) -> Tuple[bytes, List[str]]:
    """Decode a raw dump directory: (window JSON bytes, warnings about damage or drops)."""

def window_trace_files(number: int) -> List[Tuple[str, str]]:
    """(format name, file name) of each trace file window ``number`` of a dump may have."""

def error_codes() -> List[Tuple[int, str, str]]:
    """The error-code table this module was built with: ``(code, kind, meaning)``
    in code order (the crate cupmon-error-code; :class:`cupmon.ErrorCode` matches it)."""

def abi_request(request_json: str) -> str:
    """The request ``{"op": ..., ...}`` (JSON) read by the enum the injection
    library decodes ``cupmon_call``'s requests with, and written back as that
    call takes it; an unknown op or a missing or mistyped field raises the
    error the library would answer (``ErrorCode.BadRequest``, a ValueError)."""
