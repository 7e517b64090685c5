#!/bin/bash
# Cost of Python stack attribution per launch against the fake libcupti (no GPU), paired
# in one process (bench/stacks/paired.py): under `cupmon run`, blocks of STEPS launches
# with stacks on and off in turn, PAIRS rounds, at stack depths 5, 30 and 90; the median
# of the rounds' differences, its spread and the noise floor (OFF against OFF).
# Needs a release build:
#   cargo build --release -p cupmon-cli -p cupmon-inject -p cupmon-fake-cupti
# usage: bash bench/stacks/run.sh [STEPS] [PAIRS] [PYTHON]
#   (DEPTHS="30" for one depth; OUT=DIR keeps each run's JSON there)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
t=${TARGET:-$root/target/release}
steps=${1:-20000}; pairs=${2:-40}; py=${3:-python3}
export CUPMON_LIBCUPTI=$t/libcupmon_fake_cupti.so CUPMON_LIBCUDA=$t/libcupmon_fake_cupti.so
export CUPMON_INJECT_LIBRARY=$t/libcupmon_inject.so CUDA_INJECTION64_PATH=$t/libcupmon_inject.so
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keep=${OUT:-}
[ -n "$keep" ] && mkdir -p "$keep"
echo "python: $($py --version 2>&1); $pairs rounds of blocks of $steps launches; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for depth in ${DEPTHS:-5 30 90}; do
  json=$work/paired-$depth.json
  "$t/cupmon" run -o "$work/dump-$depth" -- "$py" "$root/bench/stacks/launch_cost.py" paired \
    "$steps" "$pairs" "$depth" >"$json" 2>"$work/err-$depth" || { cat "$work/err-$depth" >&2; exit 1; }
  [ -n "$keep" ] && cp "$json" "$keep/"
  python3 "$root/bench/stacks/paired.py" "$json"
  rm -rf "$work/dump-$depth"
done
# Graph replays: per replay of a graph of 20 kernel nodes (blocks of STEPS/2 replays).
for depth in ${DEPTHS:-5 30}; do
  json=$work/graph-$depth.json
  "$t/cupmon" run -o "$work/graph-$depth" -- "$py" "$root/bench/stacks/launch_cost.py" paired-graph \
    "$((steps / 2))" "$pairs" "$depth" >"$json" 2>"$work/err-graph-$depth" || { cat "$work/err-graph-$depth" >&2; exit 1; }
  [ -n "$keep" ] && cp "$json" "$keep/"
  echo -n "graph replays, "; python3 "$root/bench/stacks/paired.py" "$json" | sed 's/per launch/per replay/g'
  rm -rf "$work/graph-$depth"
done
