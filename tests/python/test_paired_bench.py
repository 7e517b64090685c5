"""bench/stacks/paired.py, the paired cost measurement of Python stacks (used by
bench/stacks/run.sh and tests/gpu/stacks.sh part 4): its figures from known blocks."""

from __future__ import annotations

import importlib.util

from conftest import ROOT

spec = importlib.util.spec_from_file_location("paired", ROOT / "bench" / "stacks" / "paired.py")
paired = importlib.util.module_from_spec(spec)
spec.loader.exec_module(paired)


def blocks(rounds: int, cost: float, launches: int, drift: float = 0.0) -> list:
    """Rounds in the module's order, a launch costing 1000 ns plus `drift` per round
    (the machine slowing down) plus `cost` with stacks on."""
    out = []
    for r in range(rounds):
        base = 1000 + drift * r
        for arm in paired.ORDER if r % 2 == 0 else paired.ORDER[::-1]:
            ns = (base + (cost if arm == "on" else 0) + (r % 3)) * launches
            out.append({"round": r, "arm": arm, "ns": ns})
    return out


def test_the_cost_is_the_median_difference_and_drift_between_rounds_cancels():
    result = {"launches_per_block": 100, "blocks": blocks(40, 250, 100, drift=37.0)}
    s = paired.summarize(result)
    assert s["rounds"] == 40
    assert s["cost"]["median"] == 250
    assert s["cost"]["iqr"] == [250, 250]
    assert s["noise"]["median"] == 0
    assert "stacks add 250 ns per launch" in paired.describe(s)


def test_the_interval_of_the_median_is_the_order_statistics_of_its_rank():
    # n = 40: P(Binomial(40, 1/2) <= 13) = 0.019 <= 0.025 < P(<= 14) = 0.040, so the
    # interval is the 14th and the 27th values.
    values = list(range(1, 41))
    assert paired.median_interval(values) == (14, 27)
    assert paired.median_interval([5, 1, 3]) == (1, 5)


def test_incomplete_runs_say_why_instead_of_a_figure():
    assert "too few" in paired.summarize({"launches_per_block": 1, "blocks": blocks(3, 1, 1)})["error"]
    s = paired.summarize({"error": "stacks were not on at the start"})
    assert paired.describe(s) == "no figure: stacks were not on at the start"


def test_kernels_per_step_are_counted_by_cupmon_under_cupmon_run(fake_cupti, tmp_path):
    # The model's step in tests/gpu/stacks_workload.py paired_model has no written-down
    # launch count: cupmon's own (the ABI's stats) gives it.
    import json
    import sys

    from conftest import cupmon_cmd, fake_env

    app = tmp_path / "app.py"
    app.write_text(
        "import ctypes, importlib.util, json, os\n"
        "assert ctypes.CDLL(os.environ['CUDA_INJECTION64_PATH']).InitializeInjection() == 1\n"
        "fake = ctypes.CDLL(os.environ['CUPMON_LIBCUPTI'])\n"
        "launch = fake.cupmonFakeLaunchKernels\n"
        "launch.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p]\n"
        f"spec = importlib.util.spec_from_file_location('paired', {str(ROOT / 'bench' / 'stacks' / 'paired.py')!r})\n"
        "paired = importlib.util.module_from_spec(spec); spec.loader.exec_module(paired)\n"
        "def step():\n"
        "    launch(2, 7, b'a'); launch(1, 9, b'b')\n"
        "print(json.dumps(paired.kernels_per_step(step, 10)))\n"
    )
    done = cupmon_cmd("run", "-o", str(tmp_path / "out"), "--", sys.executable, str(app),
                      env=fake_env(fake_cupti))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == 3.0
