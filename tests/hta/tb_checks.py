"""torch-tb-profiler 0.4.3 (the TensorBoard plugin's parser) reads cupmon's
traces: `RunProfileData.parse` on each file, its kernel table against the
file's own kernel events, and the occupancy args it compares with numbers.
Its parser imports neither torch nor tensorboard (REQUIREMENTS.md)."""

from __future__ import annotations

import sys
import tempfile
from typing import Optional, Tuple

from tracefacts import TraceFile

Result = Tuple[bool, str]


def tb_profiler_missing() -> Optional[str]:
    """Why torch-tb-profiler cannot be used here, or None."""
    # The plugin's package would import tensorboard only for its web side.
    blocked = "tensorboard" not in sys.modules
    if blocked:
        sys.modules["tensorboard"] = None  # type: ignore[assignment]
    try:
        import torch_tb_profiler.profiler.data  # noqa: F401
    except ImportError as e:
        return f"cannot import torch_tb_profiler ({e}); pip install --no-deps torch-tb-profiler==0.4.3"
    finally:
        if blocked:
            del sys.modules["tensorboard"]
    return None


def check_tb_profiler(path: str) -> Result:
    from torch_tb_profiler.profiler.data import RunProfileData

    f = TraceFile(path)
    kernels = f.by_cat("kernel")
    with tempfile.TemporaryDirectory(prefix="cupmon-tb-") as cache:
        profile = RunProfileData.parse("worker0", "1", path, cache)
    problems = []
    stat = profile.kernel_stat
    counted = 0 if stat is None else int(stat["count"].sum())
    if counted != len(kernels):
        problems.append(f"its kernel table counts {counted} launches, the file has {len(kernels)}")
    # Kineto's occupancy args are numbers; torch-tb-profiler compares them with
    # 0.0 and raises TypeError on a string ("inf").
    numeric = [a for a in kernels if isinstance(a.args.get("blocks per SM"), (int, float))]
    strings = [
        (key, a.args[key])
        for a in kernels
        for key in ("blocks per SM", "warps per SM", "est. achieved occupancy %")
        if isinstance(a.args.get(key), str)
    ]
    if strings:
        problems.append(f"{len(strings)} occupancy args are strings, e.g. {strings[0]}")
    has_blocks = profile.gpu_metrics_parser.has_blocks_per_sm
    if has_blocks != bool(numeric):
        problems.append(f"blocks per SM shown: {has_blocks}, the file has {len(numeric)} numeric ones")
    info = f.top.get("distributedInfo")
    if (profile.distributed_info or None) != (info or None):
        problems.append(f"distributedInfo {profile.distributed_info!r} != the file's {info!r}")
    if problems:
        return False, "; ".join(problems)
    return True, (
        f"{counted} kernels in its table, blocks per SM on {len(numeric)} "
        f"(the others on a device the trace has no properties of)"
    )


def main(paths) -> int:
    """`python tb_checks.py TRACE...`: the check on given files."""
    missing = tb_profiler_missing()
    if missing:
        print(f"SKIPPED: {missing}", file=sys.stderr)
        return 0
    status = 0
    for p in paths:
        ok, detail = check_tb_profiler(p)
        print(f"{'PASS' if ok else 'FAIL'}  {p}: {detail}")
        status |= not ok
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
