"""`cupmon run --metrics-file/--metrics-port`: the per-rank live signals read back
with Prometheus' own parser (prometheus_client's text_string_to_metric_families).

Two ranks of one run (a shell starting the stand-in CUDA program twice, as torchrun
would) through the fake libcupti; rank 1 launches one extra kernel per step of twenty,
so it is the last minute's straggler.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, cupmon_binary, fake_env, loud_skip


def fake_app() -> Path:
    env = os.environ.get("CUPMON_FAKE_CUDA_APP")
    path = Path(env) if env else ROOT / "target" / "debug" / "examples" / "fake_cuda_app"
    if not path.is_file():
        loud_skip(f"no stand-in CUDA program at {path} (cargo build -p cupmon-inject --example fake_cuda_app)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def families(text: str) -> dict:
    from prometheus_client.parser import text_string_to_metric_families

    return {f.name: f for f in text_string_to_metric_families(text)}


def by_rank(family) -> dict:
    return {s.labels["rank"]: s.value for s in family.samples}


def test_metrics_parse_and_name_the_straggler(tmp_path, fake_cupti):
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        loud_skip("prometheus_client is not installed (scripts/test-python.sh installs it)")
    app = fake_app()
    port = free_port()
    prom = tmp_path / "cupmon.prom"
    # 1500 steps in ten bursts 300 ms apart, so the ranks are recording for
    # about 3 s (a live rate to read) and then sleep (the run stays up to be read).
    bursts = " ".join(["steps 150 20 {r} sleep 300"] * 10)
    ranks = " & ".join(
        f"RANK={r} WORLD_SIZE=2 '{app}' {bursts.format(r=r)} sleep 5000" for r in (0, 1)
    )
    run = subprocess.Popen(
        [cupmon_binary(), "run", "-o", str(tmp_path / "prof"), "--flush-period", "100ms",
         "--metrics-file", str(prom), "--metrics-port", f"127.0.0.1:{port}",
         "--metrics-interval", "200ms", "--", "sh", "-c", f"{ranks} & wait"],
        env={**os.environ, **fake_env(fake_cupti)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        got = {}
        # The rate is the process's own recent one: it falls to 0 once a rank has
        # done its steps and sleeps, which on a loaded machine can come before the
        # minute's straggler is named. So it is kept as seen while the ranks ran.
        fastest = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if prom.exists():
                got = families(prom.read_text())
                rates = got.get("cupmon_kernels_per_second")
                for rank, v in (by_rank(rates) if rates else {}).items():
                    fastest[rank] = max(v, fastest.get(rank, 0.0))
                named = got.get("cupmon_straggler")
                ran = len(fastest) == 2 and all(v > 0 for v in fastest.values())
                if named is not None and by_rank(named).get("1") == 1.0 and ran:
                    break
            time.sleep(0.2)
        assert by_rank(got["cupmon_straggler"]) == {"0": 0.0, "1": 1.0}, prom.read_text()
        score = by_rank(got["cupmon_straggler_score"])
        assert abs(score["1"] - 0.05) < 0.005, score
        assert got["cupmon_straggler_score"].type == "gauge"
        # Counters lose their _total in the family's name.
        assert got["cupmon_dropped_records"].type == "counter"
        assert by_rank(got["cupmon_dropped_records"]) == {"0": 0.0, "1": 0.0}
        for name in ("cupmon_gpu_busy_ratio", "cupmon_nccl_share_ratio"):
            for v in by_rank(got[name]).values():
                assert 0.0 <= v <= 1.0, (name, v)
        assert set(by_rank(got["cupmon_kernels_per_second"])) == {"0", "1"}
        assert all(v >= 0 for v in by_rank(got["cupmon_kernels_per_second"]).values())
        assert fastest.keys() == {"0", "1"} and all(v > 0 for v in fastest.values()), fastest
        assert all(v >= 0 for v in by_rank(got["cupmon_gpu_progress_age_seconds"]).values())
        assert set(by_rank(got["cupmon_unaccounted_kernels"])) == {"0", "1"}
        # The port serves the same metrics.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            served = families(r.read().decode())
        assert set(served) == set(got)
        assert by_rank(served["cupmon_straggler"])["1"] == 1.0
    finally:
        out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    assert not prom.exists(), "the textfile outlived the run"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".cupmon.prom")], "a temporary file was left"


def test_a_metrics_file_in_a_missing_directory_is_refused_before_the_program_starts(tmp_path):
    out = subprocess.run(
        [cupmon_binary(), "run", "--metrics-file", str(tmp_path / "no" / "m.prom"), "--",
         "sh", "-c", "touch started"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 2, out.stderr
    assert "CUPMON_METRICS_FILE" in out.stderr
    assert not (tmp_path / "started").exists()
