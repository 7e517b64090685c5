#!/bin/bash
# bench/nvtx/fake_cost.sh's measurement for two builds of the injection library side
# by side (e.g. before and after a change to the NVTX path), runs interleaved so that
# the machine's load falls on both alike: `cupmon run` without a window (always on)
# and with a window over the run, 1M pairs (and 1M marks) each, three rounds.
# usage: bench/nvtx/compare_libs.sh BEFORE.so AFTER.so [PAIRS]
# (build each with `cargo build --release -p cupmon-inject` at its commit and copy
# target/release/libcupmon_inject.so away.)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
before=$1 after=$2 n=${3:-1000000}
cargo build --quiet --release -p cupmon-cli -p cupmon-fake-cupti
r=$root/target/release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/nvtx_app" crates/cupmon-cli/tests/nvtx/nvtx_app.c -ldl -lpthread
export CUPMON_LIBCUPTI=$r/libcupmon_fake_cupti.so CUPMON_LIBCUDA=$r/libcupmon_fake_cupti.so
echo "commit $(git rev-parse --short HEAD), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in 1 2 3; do
  for which in before after; do
    lib=$before; [ "$which" = after ] && lib=$after
    echo "-- round $i, $which: cupmon run"
    CUPMON_INJECT_LIBRARY=$lib "$r/cupmon" run -o "$tmp/run-$which$i" -- \
      "$tmp/nvtx_app" bench "$n" 2>/dev/null
    echo "-- round $i, $which: cupmon run, window over the run"
    CUPMON_INJECT_LIBRARY=$lib "$r/cupmon" run -o "$tmp/win-$which$i" --window-at 0 \
      --window-for 600 -- "$tmp/nvtx_app" bench "$n" 2>/dev/null
  done
done
