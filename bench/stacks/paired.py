"""What noting Python stacks costs per launch, measured in one process: the launch loop
runs in blocks with stacks on and off in turn, switched between blocks through the
injection library's C ABI (op `python_stacks`, the call behind
`cupmon.python_stacks(on)`), so both arms share the process, its caches, its clocks and
the machine's state of the moment. Whole runs compared against each other differ by as
much as the effect (+-900 ns per launch between runs of one configuration on the
H200); blocks next to each other do not.

Design: PAIRS rounds of three blocks of STEPS steps, each block timed alone:
    even rounds  ON  OFF OFF2        odd rounds  OFF2 OFF ON
ON and OFF2 each sit next to OFF and take the first and the last place in turn, so the
round's ON - OFF is the cost and its OFF2 - OFF, an A/A pair of the same shape, the
noise floor. Between blocks (untimed): the switch, `before_block` (the GPU workload
synchronises there, so every block starts with an empty queue) and a few warm steps.
Reported per launch: the median of each difference, its interquartile range, and a
95 % interval of the median from order statistics (no assumption about the spread).

Used by bench/stacks/launch_cost.py (fake libcupti) and tests/gpu/stacks_workload.py
(torch on the GPU); `python3 paired.py FILE...` summarises their JSON output.
"""

from __future__ import annotations

import ctypes
import gc
import json
import math
import os
import statistics
import sys
import time
from typing import Callable, Optional

#: A round's blocks, in the order even rounds run them (odd rounds reverse it).
ORDER = ("on", "off", "off2")


def abi_call(library: Optional[str] = None) -> Callable[..., dict]:
    """`call(op, **args) -> result` through `cupmon_call` of the injection library in
    this process (`CUPMON_INJECT_LIBRARY`, set by `cupmon run`; loading it again returns
    the instance already loaded). Raises RuntimeError with the library's answer on
    failure. Straight through ctypes: the GPU machine's bundle has the library, not the
    package."""
    path = library or os.environ.get("CUPMON_INJECT_LIBRARY")
    if not path:
        raise RuntimeError("CUPMON_INJECT_LIBRARY is not set: run this under `cupmon run`")
    lib = ctypes.CDLL(path)
    lib.cupmon_call.argtypes = [ctypes.c_char_p]
    lib.cupmon_call.restype = ctypes.c_void_p
    lib.cupmon_free.argtypes = [ctypes.c_void_p]
    lib.cupmon_free.restype = None

    def call(op: str, **args) -> dict:
        answer_ptr = lib.cupmon_call(json.dumps({"op": op, **args}).encode())
        try:
            answer = json.loads(ctypes.string_at(answer_ptr))
        finally:
            lib.cupmon_free(answer_ptr)
        if not answer.get("ok"):
            raise RuntimeError(f"{op}{args or ''}: {answer.get('error')}")
        return answer["result"]

    return call


def abi_switch(library: Optional[str] = None) -> Callable[[bool], bool]:
    """`switch(on) -> was_on`: the ABI's `python_stacks` op (see `abi_call`)."""
    call = abi_call(library)
    return lambda on: bool(call("python_stacks", on=bool(on))["was_on"])


def kernels_per_step(step: Callable[[], object], steps: int = 20,
                     library: Optional[str] = None,
                     sync: Callable[[], object] = lambda: None) -> float:
    """Kernels one call of `step` launches, as cupmon counts them (the ABI's `stats`,
    `kernels_launched`): for a workload whose launches per step are not written down (a
    model's training step)."""
    call = abi_call(library)
    sync()
    before = call("stats").get("kernels_launched")
    for _ in range(steps):
        step()
    sync()
    after = call("stats").get("kernels_launched")
    if before is None or after is None:
        raise RuntimeError("cupmon does not count launches in this process (stats: "
                           "kernels_launched is null)")
    return (after - before) / steps


def nested(depth: int, fn: Callable[[], object]) -> object:
    """`fn()` called from `depth` more Python frames (a model's module nesting)."""
    if depth > 0:
        return nested(depth - 1, fn)
    return fn()


def run(
    step: Callable[[], object],
    launches_per_step: int,
    steps: int,
    pairs: int,
    switch: Callable[[bool], bool],
    before_block: Callable[[], object] = lambda: None,
    warm_steps: int = 20,
) -> dict:
    """The rounds (see the module's comment); stacks are left on at the end.
    `{"blocks": [{"round", "arm", "ns"}...], ...}`, or `{"error": why}` when stacks
    were not on at the start or cannot be switched."""
    try:
        if not switch(True):
            return {"error": "stacks were not on at the start (the dump's meta says why: "
                    "python_stacks)"}
    except RuntimeError as e:
        return {"error": str(e)}
    blocks = []
    collect = gc.isenabled()
    gc.disable()
    try:
        for r in range(pairs):
            for arm in ORDER if r % 2 == 0 else ORDER[::-1]:
                switch(arm == "on")
                before_block()
                for _ in range(warm_steps):
                    step()
                before_block()
                t0 = time.perf_counter_ns()
                for _ in range(steps):
                    step()
                blocks.append({"round": r, "arm": arm, "ns": time.perf_counter_ns() - t0})
    finally:
        switch(True)
        if collect:
            gc.enable()
    return {
        "method": "paired",
        "steps": steps,
        "pairs": pairs,
        "launches_per_block": steps * launches_per_step,
        "blocks": blocks,
    }


def median_interval(values: list, level: float = 0.95) -> tuple:
    """A distribution-free interval of the median: the order statistics (k, n+1-k) with
    P(Binomial(n, 1/2) < k) <= (1 - level) / 2."""
    v = sorted(values)
    n = len(v)
    tail = (1 - level) / 2
    k, below = 0, 0.0
    while k < n and below + math.comb(n, k) / 2**n <= tail:
        below += math.comb(n, k) / 2**n
        k += 1
    if k == 0:
        return (v[0], v[-1])
    return (v[k - 1], v[n - k])


def quartiles(values: list) -> tuple:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return (q[0], q[2])


def summarize(result: dict) -> dict:
    """Per launch (ns): the rounds' ON - OFF (`cost`) and OFF2 - OFF (`noise`), each
    `{"median", "iqr": [q1, q3], "ci95": [lo, hi]}`, and the OFF blocks' median
    (`off_ns`: a launch under cupmon without stacks)."""
    if "error" in result:
        return {"error": result["error"]}
    per = result["launches_per_block"]
    by_round: dict = {}
    for b in result["blocks"]:
        by_round.setdefault(b["round"], {})[b["arm"]] = b["ns"] / per
    rounds = [r for r in by_round.values() if len(r) == len(ORDER)]
    if len(rounds) < 4:
        return {"error": f"{len(rounds)} complete rounds: too few to summarise"}

    def stats(values: list) -> dict:
        return {
            "median": statistics.median(values),
            "iqr": list(quartiles(values)),
            "ci95": list(median_interval(values)),
        }

    return {
        "rounds": len(rounds),
        "launches_per_block": per,
        "off_ns": statistics.median(r["off"] for r in rounds),
        "on_ns": statistics.median(r["on"] for r in rounds),
        "cost": stats([r["on"] - r["off"] for r in rounds]),
        "noise": stats([r["off2"] - r["off"] for r in rounds]),
    }


def describe(s: dict) -> str:
    """One line: the cost with its spread, the noise floor, the base."""
    if "error" in s:
        return f"no figure: {s['error']}"
    c, n = s["cost"], s["noise"]
    return (
        f"stacks add {c['median']:.0f} ns per launch (IQR {c['iqr'][0]:.0f}..{c['iqr'][1]:.0f}, "
        f"95% CI of the median {c['ci95'][0]:.0f}..{c['ci95'][1]:.0f}); noise floor (OFF vs "
        f"OFF) {n['median']:.0f} ns (IQR {n['iqr'][0]:.0f}..{n['iqr'][1]:.0f}); "
        f"{s['rounds']} rounds of {s['launches_per_block']} launches a block; "
        f"a launch without stacks {s['off_ns']:.0f} ns, with {s['on_ns']:.0f} ns"
    )


def load(path: str) -> dict:
    """The last JSON line of a workload's output."""
    with open(path) as f:
        lines = [line for line in f if line.startswith("{")]
    if not lines:
        raise ValueError(f"{path}: no JSON line (did the workload run?)")
    return json.loads(lines[-1])


if __name__ == "__main__":
    for path in sys.argv[1:]:
        result = load(path)
        print(f"{os.path.basename(path)} (depth {result.get('depth', '?')}): "
              f"{describe(summarize(result))}")
