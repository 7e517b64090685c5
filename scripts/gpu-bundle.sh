#!/bin/bash
# Build what the GPU machine needs (it has no Rust toolchain) into .gpu/, which the
# `device` tool carries: the cupmon binary, the injection library and the Python
# package as the abi3 manylinux wheel (installed there with pip --no-deps --no-index).
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
ls -la .gpu
