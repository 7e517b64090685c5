"""Trace windows between Python dicts and the JSON the native side reads.

A window is the ``trace_window`` dict of PyTorch's monitor. JSON object keys are strings,
but PyTorch's merge (and its monitor) use int keys for ``user_annotations``
(external id -> name) and ``thread_resource_map`` (pid -> {opaque thread id ->
OS thread id}); windows handed to the user get int keys back.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Union

from ._errors import ErrorCode, error_for

Window = Dict[str, Any]
WindowLike = Union[Window, str, "os.PathLike[str]"]


def _json_default(value: Any) -> Any:
    # numpy/torch scalars and int-like enums, which json does not know.
    if hasattr(value, "__index__"):
        return value.__index__()
    if hasattr(value, "__float__"):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps(window: Window) -> bytes:
    """The window as compact JSON bytes for the native merge/export."""
    try:
        text = json.dumps(window, separators=(",", ":"), default=_json_default)
    except (TypeError, ValueError) as e:
        raise error_for(ErrorCode.TraceInput, f"trace_window cannot be written as JSON: {e}") from e
    return text.encode("utf-8")


def int_keys(window: Window) -> Window:
    """Give ``user_annotations`` and ``thread_resource_map`` int keys, in place."""
    notes = window.get("user_annotations")
    if isinstance(notes, dict):
        window["user_annotations"] = {int(k): v for k, v in notes.items()}
    threads = window.get("thread_resource_map")
    if isinstance(threads, dict):
        window["thread_resource_map"] = {
            int(pid): {int(k): int(v) for k, v in m.items()} if isinstance(m, dict) else m
            for pid, m in threads.items()
        }
    return window


def loads(data: Union[bytes, str]) -> Window:
    """A window from JSON, with int keys as PyTorch's merge uses them."""
    return int_keys(json.loads(data))
