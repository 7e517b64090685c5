#!/bin/bash
# Build what the GPU machine needs (it has no Rust toolchain) into .gpu/,
# which the `device` tool carries: the cupmon binary and the injection library.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release -p cupmon-cli -p cupmon-inject
mkdir -p .gpu
cp target/release/cupmon target/release/libcupmon_inject.so .gpu/
ls -la .gpu
