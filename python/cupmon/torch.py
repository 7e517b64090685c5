"""torch.profiler for the CPU side, cupmon for the GPU side, one merged trace.

    with cupmon.torch.profile("trace.json.gz", record_shapes=True):
        train_step()

:func:`profile` is ``torch.profiler.profile`` restricted to CPU activities
(aten ops, user annotations, Python stacks: whatever its keyword arguments
ask for), plus a cupmon trace window over exactly the span the profiler
records. When a trace is ready the CPU trace is exported to a temporary file
next to ``path`` and merged with the window by cupmon's Rust merge into
``path``: kernels, copies, memsets, runtime/driver calls and ``ac2g`` arrows
from cupmon, in Kineto's format.

Schedules work as in torch.profiler: with ``schedule=torch.profiler.schedule(
wait=1, warmup=1, active=2)`` the cupmon window is prepared in the warm-up
(the extra CUPTI kinds are enabled early, as Kineto does), opened when
recording starts and closed when it stops, and one merged trace is written
per cycle. ``path`` may hold ``{cycle}`` and ``{step}`` fields; without them
cycles after the first go to ``NAME-1.json``, ``NAME-2.json``, ...

Where the monitor comes from: under ``cupmon run`` the process's monitor is
used (CUDA is initialised first if needed, since that is when ``cupmon run``
starts it); otherwise a collection is started for the profiler's lifetime
(in ``cupmon_output_dir``, or a temporary directory removed at the end) and
stopped after it.

Sharing CUPTI with torch.profiler: torch.profiler, even with CPU activities
only, enables CUPTI runtime/driver records and registers its own activity
callbacks.

- Under ``cupmon run`` cupmon shares CUPTI with it; while the window is open,
  runtime/driver records are withheld from torch.profiler, so that each
  runtime call appears once in the merged trace (cupmon's).
- Started from plain Python, torch.profiler's registration would take
  CUPTI's callbacks from cupmon. Right after torch.profiler has set up
  (``prepare_trace``), :func:`cupmon.rearm` takes them back: cupmon keeps
  recording, and torch.profiler gets no GPU-side records (it needs none for a
  CPU trace). ``TEARDOWN_CUPTI`` is set to ``0`` unless set already, so that
  torch.profiler does not finalise CUPTI under cupmon. If the window still
  comes back without GPU activity, a :class:`~cupmon.CupmonWarning` says so.
- Should torch.profiler's CPU trace hold GPU-side events of its own
  (``cuda_runtime``, ``kernel``, ``ac2g``, ...), they are dropped before the
  merge, so that each runtime call and kernel appears once.

Other limitations: at the end of each recording span the current CUDA
device is synchronised, as torch.profiler does with CUDA activities, so that
the window holds the kernels launched in it. ``activities`` may only contain
``ProfilerActivity.CPU``; ``use_cuda=True`` is refused. The profiler's own
``on_trace_ready`` runs after the merge.

Importing this module does not import torch; calling :func:`profile` does.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
import time
import warnings
import weakref
from typing import Any, Optional

from . import _monitor, _offline
from ._errors import CupmonError, CupmonWarning, ErrorCode, error_for

# Categories of torch.profiler trace events that cupmon's window provides.
GPU_SIDE_CATEGORIES = frozenset(
    {
        "cuda_runtime",
        "cuda_driver",
        "kernel",
        "gpu_memcpy",
        "gpu_memset",
        "gpu_user_annotation",
        "ac2g",
        "overhead",
        "cuda_sync",
    }
)
_GPU_KINDS = ("kernel", "gpu_memcpy", "gpu_memset")
_EMPTY_WINDOW: dict = {"events": [], "user_annotations": {}, "thread_resource_map": {}}
_profile_class: Optional[type] = None


def profile(
    path: "str | os.PathLike[str]",
    *,
    trace_name: Optional[str] = None,
    cupmon_output_dir: "Optional[str | os.PathLike[str]]" = None,
    **torch_profiler_kwargs: Any,
):
    """A ``torch.profiler.profile`` (CPU activities) whose traces come out merged
    with cupmon's GPU activity into ``path`` (``.gz`` to compress; ``.pftrace``
    or ``.pftrace.gz`` for one Perfetto protobuf trace of both sides).

    ``torch_profiler_kwargs`` go to ``torch.profiler.profile`` (``schedule``,
    ``on_trace_ready``, ``record_shapes``, ``with_stack``, ...). ``trace_name``:
    the merged trace's ``traceName`` (default: its path). ``cupmon_output_dir``:
    where to keep the dump when no cupmon monitor is running yet (default: a
    temporary directory, removed afterwards).

    The returned object is the profiler (use ``prof.step()`` with schedules);
    after each trace, ``prof.cupmon_traces`` lists the files written,
    ``prof.cupmon_window`` holds the last window and
    ``prof.cupmon_merge_seconds`` the time the export and merge took.
    """
    return _get_profile_class()(
        path,
        trace_name=trace_name,
        cupmon_output_dir=cupmon_output_dir,
        **torch_profiler_kwargs,
    )


def __getattr__(name: str) -> Any:
    # `cupmon.torch.Profile`, the class, made on first use (it needs torch).
    if name == "Profile":
        return _get_profile_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _get_profile_class() -> type:
    global _profile_class
    if _profile_class is None:
        try:
            import torch.profiler  # noqa: F401
        except ImportError as e:
            raise ImportError("cupmon.torch.profile needs PyTorch (import torch failed)") from e
        _profile_class = _make_profile_class()
    return _profile_class


def _make_profile_class() -> type:
    import torch
    import torch.profiler as tp

    class CupmonProfile(tp.profile):
        """torch.profiler.profile + a cupmon trace window; see :mod:`cupmon.torch`."""

        def __init__(
            self,
            path: "str | os.PathLike[str]",
            *,
            trace_name: Optional[str] = None,
            cupmon_output_dir: "Optional[str | os.PathLike[str]]" = None,
            activities: Any = None,
            on_trace_ready: Any = None,
            **kwargs: Any,
        ) -> None:
            if not isinstance(path, (str, os.PathLike)):
                raise TypeError(f"path must be a path, not {type(path).__name__}")
            if activities is not None and set(activities) - {tp.ProfilerActivity.CPU}:
                raise ValueError(
                    "cupmon.torch.profile records GPU activity with cupmon: "
                    "pass activities=[ProfilerActivity.CPU] or leave activities out"
                )
            if kwargs.get("use_cuda"):
                raise ValueError(
                    "cupmon.torch.profile records GPU activity with cupmon: drop use_cuda"
                )
            self.cupmon_path = os.fspath(path)
            self.cupmon_trace_name = trace_name
            self.cupmon_output_dir = (
                None if cupmon_output_dir is None else os.fspath(cupmon_output_dir)
            )
            self.cupmon_traces: list = []
            self.cupmon_window: Optional[dict] = None
            self.cupmon_merge_seconds: Optional[float] = None
            self.cupmon_stats: Optional[dict] = None
            self._cupmon_user_ready = on_trace_ready
            self._cupmon_phase = "idle"  # idle -> prepared -> open -> idle
            self._cupmon_pending: Optional[dict] = None  # ended, not merged yet
            self._cupmon_collection: Optional[str] = None  # dump we started
            self._cupmon_temporary = False
            self._cupmon_shared = False  # CUPTI shared by cupmon run's multiplexer
            self._cupmon_export: Optional[str] = None  # last cycle's CPU trace, kept
            super().__init__(
                activities=[tp.ProfilerActivity.CPU],
                on_trace_ready=self._cupmon_trace_ready,
                **kwargs,
            )

        # -- the monitor for the profiler's lifetime --

        def start(self) -> None:
            self._cupmon_attach()
            try:
                super().start()
            except BaseException:
                self._cupmon_detach()
                raise

        def stop(self) -> None:
            try:
                super().stop()
            finally:
                self._cupmon_detach()

        def step(self) -> None:
            super().step()
            # A window opened from outside with `cupmon window --steps N` counts these.
            _monitor.step()

        def _cupmon_attach(self) -> None:
            # Kineto's teardown would cuptiFinalize (and force-flush) under cupmon.
            os.environ.setdefault("TEARDOWN_CUPTI", "0")
            status = _monitor.status()
            if status.get("running"):
                self._cupmon_shared = bool(status.get("injected"))
                return
            if _monitor.under_cupmon_run():
                # cupmon run starts its monitor at cuInit: make that happen now.
                if torch.cuda.is_available():
                    torch.cuda.init()
                if _monitor.status().get("running"):
                    self._cupmon_shared = True
                    return
                raise error_for(
                    ErrorCode.NotMonitoring,
                    "this process runs under `cupmon run` but its monitor is not running "
                    "(no CUDA device, or cupmon said why on stderr)",
                )
            out = self.cupmon_output_dir
            if out is None:
                out = tempfile.mkdtemp(prefix="cupmon-dump-")
                self._cupmon_temporary = True
            self._cupmon_collection = _monitor.start_collection(out)

        def _cupmon_detach(self) -> None:
            if self._cupmon_phase != "idle":  # the profiler failed half-way
                self._cupmon_phase = "idle"
                try:
                    _monitor.end_trace_window()
                except CupmonError:
                    pass
            if self._cupmon_collection is not None:
                dump, self._cupmon_collection = self._cupmon_collection, None
                self.cupmon_stats = _monitor.stop_collection()
                if self._cupmon_temporary:
                    shutil.rmtree(dump, ignore_errors=True)

        # -- the window follows the profiler's recording span --

        def prepare_trace(self) -> None:
            super().prepare_trace()
            if not self._cupmon_shared:
                # torch.profiler has just registered its CUPTI callbacks.
                _monitor.rearm()
            if self._cupmon_phase == "idle":
                _monitor.prepare_trace_window()
                self._cupmon_phase = "prepared"

        def start_trace(self) -> None:
            # Open the window first, so it covers every op the CPU trace records.
            if self._cupmon_phase == "idle":
                _monitor.prepare_trace_window()
                self._cupmon_phase = "prepared"
            if self._cupmon_phase == "prepared":
                _monitor.start_trace_window(withhold_api_from_clients=True)
                self._cupmon_phase = "open"
            super().start_trace()

        def stop_trace(self) -> None:
            # The window closes before torch.profiler stops: stopping makes
            # CUDA runtime calls of its own (cudaGetDeviceProperties for the
            # trace's metadata) that are not the profiled program's.
            try:
                if self._cupmon_phase == "open":
                    _synchronize_cuda()
                    self._cupmon_phase = "idle"
                    self._cupmon_pending = _monitor.end_trace_window()
            finally:
                super().stop_trace()

        # -- one merged trace per recording span --

        def _cupmon_trace_ready(self, prof: Any) -> None:
            window, self._cupmon_pending = self._cupmon_pending, None
            out = _output_path(self.cupmon_path, len(self.cupmon_traces), self.step_num)
            started = time.perf_counter()
            fd, cpu_trace = tempfile.mkstemp(
                prefix=".cupmon-cpu-", suffix=".json", dir=os.path.dirname(os.path.abspath(out))
            )
            os.close(fd)
            try:
                # Kineto saves a cycle's trace once ("Trace is already saved" after):
                # the export is kept for the user's own export_chrome_trace calls
                # (on_trace_ready handlers such as tensorboard_trace_handler).
                self._cupmon_keep_export(cpu_trace)
                shutil.copyfile(self._cupmon_export, cpu_trace)
                drop_gpu_side_events(cpu_trace)
                _offline.merge_complete(
                    cpu_trace, out, window or _EMPTY_WINDOW, trace_name=self.cupmon_trace_name
                )
            finally:
                os.unlink(cpu_trace)
            self.cupmon_merge_seconds = time.perf_counter() - started
            self.cupmon_window = window
            self.cupmon_traces.append(out)
            if not any(e.get("kind") in _GPU_KINDS for e in (window or _EMPTY_WINDOW)["events"]):
                warnings.warn(
                    f"{out}: cupmon's trace window holds no GPU activity. If GPU work ran in "
                    "the profiled steps, torch.profiler took CUPTI's activity callbacks from "
                    "cupmon: run the program under `cupmon run` to share CUPTI",
                    CupmonWarning,
                    stacklevel=2,
                )
            if self._cupmon_user_ready is not None:
                self._cupmon_user_ready(prof)

        # -- torch.profiler's own export, served from the kept copy --

        def _cupmon_keep_export(self, scratch: str) -> None:
            super().export_chrome_trace(scratch)
            if self._cupmon_export is None:
                fd, kept = tempfile.mkstemp(prefix="cupmon-torch-cpu-", suffix=".json")
                os.close(fd)
                self._cupmon_export = kept
                weakref.finalize(self, _unlink_quietly, kept)
            os.replace(scratch, self._cupmon_export)

        def export_chrome_trace(self, path: "str | os.PathLike[str]") -> None:
            """torch.profiler's CPU trace of the last cycle, as torch.profiler writes
            it (gzip-compressed for a ``.gz`` path); callable any number of times."""
            kept = self._cupmon_export
            if kept is None:
                return super().export_chrome_trace(path)
            path = os.fspath(path)
            if path.endswith(".gz"):
                with open(kept, "rb") as src, gzip.open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            else:
                shutil.copyfile(kept, path)
            return None

    return CupmonProfile


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _synchronize_cuda() -> None:
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _output_path(path: str, cycle: int, step: int) -> str:
    if "{" in path:
        return path.format(cycle=cycle, step=step)
    if cycle == 0:
        return path
    for ext in (".json.gz", ".json", ".pftrace.gz", ".pftrace"):
        if path.endswith(ext):
            return f"{path[: -len(ext)]}-{cycle}{ext}"
    return f"{path}-{cycle}"


def drop_gpu_side_events(path: str) -> int:
    """Remove torch.profiler's own GPU-side events (:data:`GPU_SIDE_CATEGORIES`)
    from the Chrome trace at ``path``; returns how many. A quick byte scan
    skips the rewrite in the usual case of a CPU-only trace."""
    with open(path, "rb") as f:
        data = f.read()
    if not any(f'"{c}"'.encode() in data for c in GPU_SIDE_CATEGORIES):
        return 0
    trace = json.loads(data)
    events = trace.get("traceEvents", [])
    kept = [e for e in events if not (isinstance(e, dict) and e.get("cat") in GPU_SIDE_CATEGORIES)]
    if len(kept) == len(events):
        return 0
    trace["traceEvents"] = kept
    with open(path, "w") as f:
        json.dump(trace, f, separators=(",", ":"))
    return len(events) - len(kept)
