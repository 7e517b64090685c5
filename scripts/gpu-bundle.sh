#!/bin/bash
# Build what the GPU machine needs (it has no Rust toolchain) into .gpu/, which the
# `device` tool carries: the cupmon binary, the injection library and the Python
# package as an abi3 wheel (installed there with pip --no-deps --no-index).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release -p cupmon-cli -p cupmon-inject
mkdir -p .gpu
rm -f .gpu/cupmon-*.whl
cp target/release/cupmon target/release/libcupmon_inject.so .gpu/
strip --strip-debug .gpu/cupmon .gpu/libcupmon_inject.so
venv=${CUPMON_PY_VENV:-$root/target/python-venv}
if [ ! -x "$venv/bin/maturin" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "maturin>=1.9,<2.0"
fi
PATH="$venv/bin:$PATH" CUPMON_CARGO_PROFILE=release \
  "$venv/bin/python" -m pip wheel --quiet --no-deps --no-build-isolation -w .gpu .
ls -la .gpu
