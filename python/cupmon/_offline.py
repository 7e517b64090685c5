"""The offline functions: no GPU, no monitor; the work is done in Rust
(``cupmon._cupmon``) with the GIL released."""

from __future__ import annotations

import os
import warnings
from typing import Optional, Union

from . import _cupmon as _native
from ._errors import CupmonWarning
from ._window import Window, WindowLike, dumps, loads

PathLike = Union[str, "os.PathLike[str]"]


def _check_path(name: str, value: object) -> None:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), not {type(value).__name__}")


def _check_name(trace_name: object) -> None:
    if trace_name is not None and not isinstance(trace_name, str):
        raise TypeError(f"trace_name must be a str or None, not {type(trace_name).__name__}")


def _check_format(format: object) -> None:
    if format is not None and not isinstance(format, str):
        raise TypeError(f"format must be 'json', 'pftrace' or None, not {type(format).__name__}")


def _warn_pftrace(output_path: PathLike, stats: dict) -> None:
    """What the Perfetto conversion could not carry over, as warnings."""
    for problem in (stats or {}).get("pftrace", {}).get("warnings", []):
        warnings.warn(f"{os.fspath(output_path)}: {problem}", CupmonWarning, stacklevel=3)


def merge_trace_window_into_chrome_trace(
    cpu_trace_path: PathLike,
    output_path: PathLike,
    trace_window: WindowLike,
    *,
    trace_name: Optional[str] = None,
) -> None:
    """Splice a trace window's GPU activity into a torch.profiler (Kineto) CPU
    trace and write the merged Chrome trace to ``output_path``.

    The signature and output are exactly those of PyTorch's
    ``merge_trace_window_into_chrome_trace``; the work is cupmon's streamed Rust
    merge. :func:`merge_complete` writes the same events with the arguments
    torch.profiler's own GPU events carry besides (launch configuration,
    occupancy, bandwidth, ``External id``) and memory events. ``.gz`` paths are read and written compressed.
    An ``output_path`` ending in ``.pftrace`` (or ``.pftrace.gz``) gets the same trace in
    Perfetto's protobuf format.
    ``trace_window`` is the window dict (as :func:`end_trace_window` returns
    it), or the path of a window JSON file (``window-N.json`` of ``cupmon run``).
    ``traceName`` is ``trace_name``, or the output path when it is empty.

    Raises :class:`TraceInputError` for a trace or window the merge cannot use
    and ``OSError`` for files that cannot be read or written; the output is
    written whole or not at all.
    """
    _merge(cpu_trace_path, output_path, trace_window, trace_name, exact=True)


def merge_complete(
    cpu_trace_path: PathLike,
    output_path: PathLike,
    trace_window: WindowLike,
    *,
    trace_name: Optional[str] = None,
    format: Optional[str] = None,
) -> None:
    """:func:`merge_trace_window_into_chrome_trace`, writing cupmon's complete trace
    (as ``cupmon merge`` does): the same events at the same times, with Kineto's names
    and args for GPU ops, ``External id`` links, overlap tracks and memory events.
    ``format``: ``"json"`` (Chrome JSON) or ``"pftrace"`` (Perfetto's protobuf, the
    CPU and the GPU side in one trace); by default the output's name decides
    (``.pftrace``, ``.pftrace.gz``: Perfetto)."""
    _merge(cpu_trace_path, output_path, trace_window, trace_name, exact=False, format=format)


def _merge(cpu_trace_path, output_path, trace_window, trace_name, exact, format=None):
    _check_path("cpu_trace_path", cpu_trace_path)
    _check_path("output_path", output_path)
    _check_name(trace_name)
    _check_format(format)
    if isinstance(trace_window, dict):
        stats = _native.merge_json(
            cpu_trace_path, output_path, dumps(trace_window), trace_name, exact, format
        )
    elif isinstance(trace_window, (str, os.PathLike)):
        stats = _native.merge_file(cpu_trace_path, output_path, trace_window, trace_name, exact, format)
    else:
        raise TypeError(
            "trace_window must be a trace-window dict or the path of a window JSON file, "
            f"not {type(trace_window).__name__}"
        )
    _warn_pftrace(output_path, stats)


def export_trace_window(
    trace_window: WindowLike,
    path: PathLike,
    *,
    trace_name: Optional[str] = None,
    format: Optional[str] = None,
) -> None:
    """Write one window as a standalone Kineto-style Chrome trace (open it in
    ui.perfetto.dev). ``trace_window``: a window dict or a window JSON file.
    ``format``: ``"json"`` or ``"pftrace"`` (Perfetto's protobuf trace, the same
    events); by default ``path``'s name decides (``.pftrace``, ``.pftrace.gz``).
    Raises :class:`TraceInputError` for an empty or malformed window."""
    _check_path("path", path)
    _check_name(trace_name)
    _check_format(format)
    if isinstance(trace_window, dict):
        stats = _native.export_json(dumps(trace_window), path, trace_name, False, format)
    elif isinstance(trace_window, (str, os.PathLike)):
        stats = _native.export_file(trace_window, path, trace_name, False, format)
    else:
        raise TypeError(
            "trace_window must be a trace-window dict or the path of a window JSON file, "
            f"not {type(trace_window).__name__}"
        )
    _warn_pftrace(path, stats)


def read_dump(path: PathLike) -> Window:
    """Decode a raw dump directory (``cupmon run``'s, :func:`start_collection`'s,
    or PyTorch's CUPTI monitor's) into a trace window dict: every record in
    buffer order, kernel names resolved and demangled, ``start_ns`` 0.

    Damage that leaves the rest readable (a truncated last chunk, dropped
    records) is reported as a :class:`CupmonWarning`; a dump that cannot be
    read raises :class:`DumpError` or ``OSError``.
    """
    _check_path("path", path)
    data, problems = _native.read_dump_json(path)
    for problem in problems:
        warnings.warn(problem, CupmonWarning, stacklevel=2)
    return loads(data)
