#!/bin/bash
# The cost of an NVTX push/pop pair to cupmon's own code, without a GPU: the test
# program crates/cupmon-cli/tests/nvtx/nvtx_app.c (NVTX's calling side, as the v3
# headers behave) in its bench mode, 1M pairs of one name and 1M of 8 names, against
# the fake libcupti (whose external-id push/pop is a thread-local vector's), three
# runs each: a tool that takes no call (NVTX's no-op case), `cupmon run` (no window:
# the always-on case), `cupmon run` with a trace window over the run.
# The real CUPTI's figure: bench/gpu/nvtx_cost.sh on the GPU machine.
# usage: bench/nvtx/fake_cost.sh [PAIRS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
n=${1:-1000000}
cargo build --quiet --release -p cupmon-cli -p cupmon-inject -p cupmon-fake-cupti
r=$root/target/release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/nvtx_app" crates/cupmon-cli/tests/nvtx/nvtx_app.c -ldl -lpthread
cc -O2 -shared -fPIC -o "$tmp/libother_tool.so" crates/cupmon-cli/tests/nvtx/other_tool.c
export CUPMON_LIBCUPTI=$r/libcupmon_fake_cupti.so CUPMON_LIBCUDA=$r/libcupmon_fake_cupti.so
export CUPMON_INJECT_LIBRARY=$r/libcupmon_inject.so
echo "commit $(git rev-parse --short HEAD), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in 1 2 3; do
  echo "-- run $i: no tool"
  NVTX_INJECTION64_PATH=$tmp/libother_tool.so CUDA_INJECTION64_PATH=$r/libcupmon_inject.so \
    CUPMON_ENABLE=0 "$tmp/nvtx_app" bench "$n"
  echo "-- run $i: cupmon run"
  "$r/cupmon" run -o "$tmp/run$i" -- "$tmp/nvtx_app" bench "$n" 2>/dev/null
  echo "-- run $i: cupmon run, window over the run"
  "$r/cupmon" run -o "$tmp/win$i" --window-at 0 --window-for 600 -- "$tmp/nvtx_app" bench "$n" 2>/dev/null
done
