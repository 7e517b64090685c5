"""Shared fixtures of the Python package's tests (no GPU needed).

The live API is tested in subprocesses against the fake libcupti
(``crates/cupmon-fake-cupti``): the monitor is one per process, and the
fake is chosen through environment variables read when the monitor starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "h200-cupti13.0"
FIXTURE_NAMES = ["cuda_workload", "torch_mlp"]


def cpu_trace(fixture: str) -> Path:
    """The CPU trace each fixture's expected merge was made from."""
    d = FIXTURES / fixture
    kineto = d / "kineto_cpu_trace.json"
    return kineto if kineto.exists() else d / "cpu_trace_empty.json"


@pytest.fixture(scope="session")
def fake_cupti() -> Path:
    """The fake libcupti: ``$CUPMON_FAKE_CUPTI``, else target/debug's build."""
    env = os.environ.get("CUPMON_FAKE_CUPTI")
    path = Path(env) if env else ROOT / "target" / "debug" / "libcupmon_fake_cupti.so"
    if not path.is_file():
        pytest.skip(f"no fake libcupti at {path} (cargo build -p cupmon-fake-cupti)")
    return path


def run_python(code: str, env: dict, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with ``env`` added to the environment."""
    full_env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def fake_env(fake: Path) -> dict:
    """Environment that makes the monitor load the fake as libcupti and driver."""
    return {"CUPMON_LIBCUPTI": str(fake), "CUPMON_LIBCUDA": str(fake)}


def loud_skip(why: str) -> None:
    """A test that cannot run says so on stderr (not only in pytest's summary)."""
    print(f"SKIPPED: {why}", file=sys.stderr)
    pytest.skip(why)


def cupmon_binary() -> str:
    """The cupmon binary of the installed package."""
    from cupmon import _cli

    return _cli.binary_path()


def cupmon_cmd(*args: str, **kw) -> subprocess.CompletedProcess:
    """Run the installed cupmon binary; ``cupmon sql`` uses this Python (and its duckdb)."""
    env = {**os.environ, "CUPMON_PYTHON": sys.executable, **kw.pop("env", {})}
    return subprocess.run(
        [cupmon_binary(), *args], env=env, capture_output=True, text=True, timeout=600, **kw
    )


def bench_parquet() -> Path:
    """bench/parquet's generator (``CUPMON_BENCH_PARQUET`` or the debug build); the
    test is SKIPPED, loudly, without it."""
    env = os.environ.get("CUPMON_BENCH_PARQUET")
    gen = Path(env) if env else ROOT / "target" / "debug" / "bench-parquet"
    if not gen.is_file():
        loud_skip(f"no bench-parquet at {gen} (cargo build -p cupmon-bench-parquet)")
    return gen


@pytest.fixture(scope="session")
def fleet_export(tmp_path_factory) -> tuple[Path, dict]:
    """A synthetic 16-rank run (bench/parquet's generator: 6 minutes, a planted slow
    rank per minute) exported with ``cupmon export-parquet``: (OUT, planted.json)."""
    gen = bench_parquet()
    base = tmp_path_factory.mktemp("fleet")
    run, out = base / "run", base / "out"
    subprocess.run(
        [str(gen), "gen", str(run), "--ranks", "16", "--kernels-per-rank", "3000", "--seconds", "360"],
        check=True,
        capture_output=True,
    )
    done = cupmon_cmd("export-parquet", str(run), "-o", str(out), "--job", "fleet-ci")
    assert done.returncode == 0, done.stderr
    planted = json.loads((run / "planted.json").read_text())
    return out, planted


@pytest.fixture(scope="session")
def fixtures_export(tmp_path_factory) -> Path:
    """Both H200 recordings exported (host `h200`, job `golden`)."""
    out = tmp_path_factory.mktemp("fixtures") / "out"
    dumps = [str(FIXTURES / f) for f in FIXTURE_NAMES]
    done = cupmon_cmd("export-parquet", *dumps, "-o", str(out), "--job", "golden", "--host", "h200")
    assert done.returncode == 0, done.stderr
    return out


def _list_skip(nodeid: str, longrepr) -> None:
    """A skipped test (or module) goes into ``$CUPMON_SKIPPED_FILE``, which
    scripts/test.sh lists, with its reason, at the end of the run."""
    path = os.environ.get("CUPMON_SKIPPED_FILE")
    if not path:
        return
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    reason = " ".join(str(reason).split())
    reason = reason.removeprefix("Skipped: ")
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"pytest\t{nodeid}\t{reason}\n")


def pytest_runtest_logreport(report) -> None:
    if report.skipped:
        _list_skip(report.nodeid, report.longrepr)


def pytest_collectreport(report) -> None:
    if report.skipped:
        _list_skip(report.nodeid, report.longrepr)
