#!/bin/bash
# Tests of the Python package `cupmon` (no GPU needed): a venv with maturin,
# pytest, perfetto (for the .pftrace checks), duckdb, pyspark and prometheus_client from PyPI (Spark
# also needs Java 17+; without it test_spark.py says SKIPPED), `pip install .` (which
# builds the extension, the injection library and the cupmon binary), the fake
# libcupti, the stand-in CUDA program and bench/parquet's fleet generator, then pytest tests/python.
#
# usage: scripts/test-python.sh [PYTEST ARGS...]
# env:   CUPMON_PY_VENV   venv to use or create (default target/python-venv)
#        CUPMON_CARGO_PROFILE   cargo profile of the build (default dev: quick,
#                          and shares target/debug with `cargo test`)
#        PYTHON           interpreter for the venv (default python3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=${CUPMON_PY_VENV:-$root/target/python-venv}
export CUPMON_CARGO_PROFILE=${CUPMON_CARGO_PROFILE:-dev}
step() { echo "== test-python: $*" >&2; }
started=$SECONDS

if [ ! -x "$venv/bin/python" ]; then
  step "creating the venv $venv"
  "${PYTHON:-python3}" -m venv "$venv"
fi
# The maturin backend runs the `maturin` command: the venv's.
export PATH="$venv/bin:$PATH"
step "installing maturin, pytest, duckdb, pyspark and prometheus_client from PyPI"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.9,<2.0" pytest \
  "duckdb>=1.1" "pyspark>=3.5" "prometheus_client>=0.20"
# The .pftrace checks (tests/python/test_pftrace.py, and cupmon-pftrace's
# python_check test) read traces with Perfetto's own protos from this package;
# without it they are skipped, loudly.
step "installing perfetto and protobuf from PyPI (Perfetto's trace protos)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check perfetto protobuf ||
  echo "SKIPPED: cannot install the perfetto package: the .pftrace checks will be skipped" >&2

# Built here, visibly, so the long part shows progress (pip hides the
# backend's output); the pip build below then finds them up to date and
# builds the thin extension module.
step "cargo build: the fake libcupti, the injection library, the CLI, the fleet generator"
cargo build --profile "$CUPMON_CARGO_PROFILE" -p cupmon-inject -p cupmon-cli
# The stand-in CUDA program (tests/python/test_metrics.py), built before the fake:
# building an example alone rebuilds only what it needs.
cargo build -p cupmon-inject --example fake_cuda_app
cargo build -p cupmon-fake-cupti -p cupmon-bench-parquet
target_dir=${CARGO_TARGET_DIR:-$root/target}
case $target_dir in /*) ;; *) target_dir=$root/$target_dir ;; esac
fake=$target_dir/debug/libcupmon_fake_cupti.so

step "pip install . (profile $CUPMON_CARGO_PROFILE: extension, injection library, cupmon binary)"
# No build isolation: maturin is in the venv already, so no second download.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --no-build-isolation --force-reinstall --no-deps .

step "pytest tests/python"
# From the repository root, `import cupmon` finds the installed package
# (python/ is not on sys.path), so the test covers what `pip install` made.
status=0
# -rs: say why a test was skipped (no perfetto package, no fake libcupti, no Java).
CUPMON_FAKE_CUPTI=$fake CUPMON_BENCH_PARQUET=$target_dir/debug/bench-parquet \
  CUPMON_FAKE_CUDA_APP=$target_dir/debug/examples/fake_cuda_app \
  "$venv/bin/python" -m pytest tests/python -q -rs "$@" || status=$?
step "done in $((SECONDS - started)) s (exit $status)"
exit $status
