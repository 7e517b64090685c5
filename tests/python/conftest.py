"""Shared fixtures of the Python package's tests (no GPU needed).

The live API is tested in subprocesses against the fake libcupti
(``crates/cupmon-fake-cupti``): the monitor is one per process, and the
fake is chosen through environment variables read when the monitor starts.
"""

from __future__ import annotations

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
