#!/bin/bash
# Issue 18's measurement on a real training job: record tests/gpu/train_big.py (a
# 4-layer transformer, bf16 autocast, AdamW) under `cupmon run` on the GPU machine,
# then time `cupmon export-parquet` of that dump on one core, RUNS times. Prints the
# export's own rows / bytes / B-per-row lines and the CPU time of each run, and puts
# the dump into $OUT as one tar when it fits the device tool's 16 MiB per file (for
# bench-parquet on this machine later). Needs .gpu/ (scripts/gpu-bundle.sh), carried.
#
# usage: bench/parquet/h200_train.sh [STEPS] [RUNS]   (default 3000 steps, 3 runs)
set -euo pipefail
steps=${1:-3000}
runs=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
cupmon=$root/.gpu/cupmon
[ -x "$cupmon" ] || { echo "FAIL: no $cupmon: run scripts/gpu-bundle.sh and carry .gpu"; exit 1; }
export CUPMON_INJECT_LIBRARY=$root/.gpu/libcupmon_inject.so
out=${OUT:-/tmp/h200-train-out}
work=/tmp/h200-train
rm -rf "$work"; mkdir -p "$work/run" "$out"
echo "== record: train_big.py $steps steps under cupmon run"
"$cupmon" run -o "$work/run" -- python3 "$root/tests/gpu/train_big.py" "$steps" 2>"$work/run.err"
tail -4 "$work/run.err"
dump=$(ls -d "$work"/run/*/ | head -1)
echo "dump: $dump ($(du -sb "$dump" | cut -f1) bytes)"
"$cupmon" stats "$dump" | head -8
TIMEFORMAT='cpu: %U s user + %S s sys, wall %R s'
for r in $(seq 1 "$runs"); do
  rm -rf "$work/pq"
  echo "== export run $r (taskset -c 0)"
  { time taskset -c 0 "$cupmon" export-parquet "$dump" -o "$work/pq" 2>&1 | tail -8; } 2>&1
done
echo "parquet bytes: $(du -sb "$work/pq" | cut -f1)"
tar -C "$work/run" -cf "$work/dump.tar" .
size=$(stat -c %s "$work/dump.tar")
if [ "$size" -le $((16 << 20)) ]; then
  cp "$work/dump.tar" "$out/h200_train_dump.tar"
  echo "dump copied to \$OUT/h200_train_dump.tar ($size bytes)"
else
  echo "dump not copied: $size bytes is over the device tool's 16 MiB per file (fewer STEPS)"
fi
