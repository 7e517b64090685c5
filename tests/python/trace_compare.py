"""Semantic comparison of Chrome/Kineto traces and trace windows, for the tests.

Equal means: the same keys with equal values (key order is free), lists equal
element by element in order, numbers equal by value (an int and a float of
the same value are equal). Returns the first differences as readable lines.
"""

from __future__ import annotations

import gzip
import json
import math
from typing import Any, List


def load(path) -> Any:
    path = str(path)
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        return json.load(f)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def diff(expected: Any, actual: Any, path: str = "$", limit: int = 20) -> List[str]:
    """Differences between two JSON values (empty when equal)."""
    out: List[str] = []
    _diff(expected, actual, path, out, limit)
    return out


def _diff(a: Any, b: Any, path: str, out: List[str], limit: int) -> None:
    if len(out) >= limit:
        return
    if _is_number(a) and _is_number(b):
        if a != b and not (math.isnan(a) and math.isnan(b)):
            out.append(f"{path}: {a!r} != {b!r}")
    elif type(a) is not type(b):
        out.append(f"{path}: {type(a).__name__} {a!r:.80} != {type(b).__name__} {b!r:.80}")
    elif isinstance(a, dict):
        if set(a) != set(b):
            out.append(f"{path}: keys differ: {sorted(set(a) ^ set(b))}")
            return
        for k in a:
            _diff(a[k], b[k], f"{path}.{k}", out, limit)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        out.append(f"{path}: {a!r:.120} != {b!r:.120}")


def contains(expected: Any, actual: Any, path: str = "$", limit: int = 20) -> List[str]:
    """Like :func:`diff`, but dicts in ``actual`` may have keys ``expected``
    lacks (cupmon's extra event fields: launch configuration and the like)."""
    out: List[str] = []
    _contains(expected, actual, path, out, limit)
    return out


def _contains(a: Any, b: Any, path: str, out: List[str], limit: int) -> None:
    if len(out) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        missing = [k for k in a if k not in b]
        if missing:
            out.append(f"{path}: missing keys {missing}")
            return
        for k in a:
            _contains(a[k], b[k], f"{path}.{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _contains(x, y, f"{path}[{i}]", out, limit)
    else:
        _diff(a, b, path, out, limit)
