#!/bin/bash
# Build what the GPU machine needs (it has no Rust toolchain) into .gpu/, which the
# `device` tool carries: the cupmon binary, the injection library and the Python
# package as the abi3 manylinux wheel (installed there with pip --no-deps --no-index),
# and the third-party wheels the GPU scripts install there (.gpu/wheels: the `nvtx`
# package for tests/gpu/nvtx.sh). The GPU machine has no network: everything it needs
# is here or a tracked file of the working tree (the scripts, .cu/.c sources, .py).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release -p cupmon-cli -p cupmon-inject
mkdir -p .gpu
rm -f .gpu/cupmon-*.whl
cp target/release/cupmon target/release/libcupmon_inject.so .gpu/
strip --strip-debug .gpu/cupmon .gpu/libcupmon_inject.so
# The manylinux wheel users get (scripts/build-wheel.sh), installed there with pip.
cp "$(bash scripts/build-wheel.sh | tail -1)" .gpu/
# The nvtx package for python3.12 on the GPU machine (kept once downloaded).
mkdir -p .gpu/wheels
if ! ls .gpu/wheels/nvtx-*.whl >/dev/null 2>&1; then
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 -d .gpu/wheels nvtx \
    || echo "gpu-bundle: warning: no nvtx wheel downloaded: tests/gpu/nvtx.sh N2 runs without the nvtx package" >&2
fi
ls -la .gpu .gpu/wheels
# What each part of tests/gpu/session.sh needs, checked here rather than on the GPU.
DRY_RUN=1 OUT=/tmp/cupmon-bundle-check bash tests/gpu/session.sh \
  core,nvtx,hang,stacks,straggler,balanced,hang_nccl,accounting,bench \
  || echo "gpu-bundle: warning: the parts above that miss a file will FAIL or say SKIPPED" >&2
