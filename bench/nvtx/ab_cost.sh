#!/bin/bash
# Two builds of the injection library, A and B, timed in turn on the same NVTX program
# (crates/cupmon-cli/tests/nvtx/nvtx_app.c's bench mode: PAIRS push/pop pairs of one
# name, then of 8 names) under `cupmon run` with no window, ROUNDS rounds of A then B,
# so that the load of a shared machine falls on both alike. Prints each run and the
# median of each. For a change to the NVTX path: build A at the base commit, B at the
# change (cargo build --release -p cupmon-inject, copying libcupmon_inject.so aside).
# usage: bench/nvtx/ab_cost.sh A.so B.so [PAIRS] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
a=$1; b=$2; n=${3:-1000000}; rounds=${4:-7}
r=$root/target/release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/nvtx_app" "$root/crates/cupmon-cli/tests/nvtx/nvtx_app.c" -ldl -lpthread
export CUPMON_LIBCUPTI=$r/libcupmon_fake_cupti.so CUPMON_LIBCUDA=$r/libcupmon_fake_cupti.so
echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); A=$a B=$b; $n pairs, $rounds rounds"
for i in $(seq "$rounds"); do
  for which in A B; do
    lib=$a; [ "$which" = B ] && lib=$b
    CUPMON_INJECT_LIBRARY=$lib "$r/cupmon" run -o "$tmp/$which$i" -- "$tmp/nvtx_app" bench "$n" \
      2>/dev/null | sed "s/^/$which /" | tee -a "$tmp/all"
  done
done
for which in A B; do
  for what in "one name" "8 names"; do
    grep "^$which push/pop pair, $what:" "$tmp/all" | awk '{print $(NF-1)}' | sort -n |
      awk -v w="$which" -v k="$what" '{v[NR]=$1} END {printf "%s %s: median %.1f ns (min %.1f, max %.1f)\n", w, k, v[int((NR+1)/2)], v[1], v[NR]}'
  done
done
