#!/bin/bash
# Cost of Python stack attribution per launch against the fake libcupti (no GPU): the
# same loop under `cupmon run` with CUPMON_PYTHON_STACKS=0 and =1, at stack depths 5,
# 30 and 90, each REPS times (the median kept). Needs a release build:
#   cargo build --release -p cupmon-cli -p cupmon-inject -p cupmon-fake-cupti
# usage: bash bench/stacks/run.sh [LAUNCHES] [REPS] [PYTHON]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
t=${TARGET:-$root/target/release}
n=${1:-300000}; reps=${2:-5}; py=${3:-python3}
export CUPMON_LIBCUPTI=$t/libcupmon_fake_cupti.so CUPMON_LIBCUDA=$t/libcupmon_fake_cupti.so
export CUPMON_INJECT_LIBRARY=$t/libcupmon_inject.so CUDA_INJECTION64_PATH=$t/libcupmon_inject.so
out=$(mktemp -d)
echo "python: $($py --version 2>&1); launches per run: $n; median of $reps runs; ns per launch"
printf '%6s %12s %12s %10s\n' depth stacks=0 stacks=1 added
for depth in 5 30 90; do
  med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  for s in 0 1; do
    for r in $(seq "$reps"); do
      CUPMON_PYTHON_STACKS=$s "$t/cupmon" run -o "$out/$s-$depth-$r" -- "$py" "$root/bench/stacks/launch_cost.py" "$n" "$depth" 2>/dev/null \
        | python3 -c 'import json,sys; print(json.loads(sys.stdin.readlines()[-1])["ns_per_launch"])'
    done | med >"$out/med-$s-$depth"
  done
  off=$(cat "$out/med-0-$depth"); on=$(cat "$out/med-1-$depth")
  printf '%6s %12.0f %12.0f %10.0f\n' "$depth" "$off" "$on" "$(python3 -c "print($on - $off)")"
done
rm -rf "$out"
