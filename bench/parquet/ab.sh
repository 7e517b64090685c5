#!/bin/bash
# Two builds of bench-parquet measured alternately on the same data, pinned to one
# core: the before/after tables of bench/parquet/RESULTS.md. Build each binary
# (cargo build --release -p cupmon-bench-parquet) and copy target/release/bench-parquet
# aside first; both need `gen --layout` and `decode` (this bench's own commands). Scratch data goes to $WORK (default /tmp/pqbench-ab).
#
# usage: bench/parquet/ab.sh BEFORE_BIN AFTER_BIN [ROUNDS]   (default 3 rounds)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
before=$1 after=$2 rounds=${3:-3}
work=${WORK:-/tmp/pqbench-ab}
mkdir -p "$work"
pin=(taskset -c 0)
say() { echo "## $* (load: $(cut -d' ' -f1-3 /proc/loadavg))"; }

say "records in, 10M (16 x 625,000), $rounds rounds"
for r in $(seq "$rounds"); do
  for b in before after; do
    bin=$before; [ $b = after ] && bin=$after
    echo "round $r $b: $("${pin[@]}" "$bin" memory "$work/m10" --kernels-per-rank 625000 --seconds 300 2>/dev/null | grep -E 'ranks,|of which' | tr '\n' ' ') (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done

say "16 dumps, 4M kernels, decode + export, $rounds rounds of 3 runs"
"$after" gen "$work/fleet4m" --ranks 16 --kernels-per-rank 250000 --seconds 360 >/dev/null
for r in $(seq "$rounds"); do
  for b in before after; do
    bin=$before; [ $b = after ] && bin=$after
    echo "round $r $b:"
    "${pin[@]}" "$bin" export "$work/fleet4m-out" "$work/fleet4m" --runs 3 | grep -E 'CPU s|rows/s|kernels '
  done
done

say "16 dumps as cupmon's segments (the monitor's default layout), 4M kernels, $rounds rounds"
"$after" gen "$work/seg4m" --ranks 16 --kernels-per-rank 250000 --seconds 360 --layout segments >/dev/null
for r in $(seq "$rounds"); do
  for b in before after; do
    bin=$before; [ $b = after ] && bin=$after
    echo "round $r $b: $("${pin[@]}" "$bin" decode "$work/seg4m" --runs 3)"
    "${pin[@]}" "$bin" export "$work/seg4m-out" "$work/seg4m" --runs 3 | grep -E 'CPU s|rows/s|kernels '
  done
done

say "H200 recordings, 10 runs each"
for b in before after; do
  bin=$before; [ $b = after ] && bin=$after
  echo "$b:"
  "${pin[@]}" "$bin" export "$work/fx" tests/fixtures/h200-cupti13.0/cuda_workload \
    tests/fixtures/h200-cupti13.0/torch_mlp --runs 10 | grep -E 'CPU s|kernels |kernel files'
done
rm -rf "$work"
