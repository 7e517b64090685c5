#!/bin/bash
# What a range named with torch's autograd sequence number costs on a Python thread
# (bench/nvtx/seq_cost.py: unique names with and without the number, pushed and popped
# from Python under `cupmon run`, against the fake libcupti). Needs a release build:
#   cargo build --release -p cupmon-cli -p cupmon-inject -p cupmon-fake-cupti
# usage: bench/nvtx/seq_cost.sh [OPS] [DEPTH] [PYTHON]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
r=${TARGET:-$root/target/release}
ops=${1:-200000}; depth=${2:-20}; py=${3:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC -o "$tmp/libnvtx_autograd.so" \
  "$root/crates/cupmon-cli/tests/nvtx/nvtx_autograd.c" -ldl -lpthread
export CUPMON_LIBCUPTI=$r/libcupmon_fake_cupti.so CUPMON_LIBCUDA=$r/libcupmon_fake_cupti.so
export CUPMON_INJECT_LIBRARY=$r/libcupmon_inject.so CUDA_INJECTION64_PATH=$r/libcupmon_inject.so
echo "commit $(git -C "$root" rev-parse --short HEAD), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $($py --version 2>&1)"
"$r/cupmon" run -o "$tmp/run" -- "$py" "$root/bench/nvtx/seq_cost.py" "$tmp/libnvtx_autograd.so" "$ops" "$depth" 2>/dev/null
