#!/bin/bash
# The runs behind bench/parquet/RESULTS.md. Needs the duckdb Python package
# (scripts/test-python.sh puts it in target/python-venv). Scratch data goes to
# $WORK (default /tmp/pqbench): about 1 GB of dumps and 0.7 GB of Parquet.
#
# usage: bench/parquet/run.sh [quick]   (quick: no 100M-row run)
#        bench/parquet/run.sh ab BEFORE_BIN AFTER_BIN [ROUNDS]
#            two builds alternately, pinned to core 0 (bench/parquet/ab.sh): the
#            before/after tables of RESULTS.md
#        bench/parquet/run.sh profile
#            perf (cpu-clock, dwarf call graphs) of records in, 6 x 625,000 rows,
#            split by bench/parquet/perf_buckets.py
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=${WORK:-/tmp/pqbench}
py=${PYTHON:-$root/target/python-venv/bin/python}
bench=target/release/bench-parquet
mkdir -p "$work"
if [ "${1:-}" = ab ]; then
  shift
  exec bench/parquet/ab.sh "$@"
fi
cargo build --release -p cupmon-bench-parquet
say() { echo "## $* (load: $(cut -d' ' -f1-3 /proc/loadavg))"; }

if [ "${1:-}" = profile ]; then
  say "profile: records in, 6 x 625,000"
  taskset -c 0 perf record -F 1000 --call-graph dwarf,16384 -o "$work/perf.data" \
    $bench memory "$work/m6" --ranks 6 --kernels-per-rank 625000 --seconds 300
  perf script -i "$work/perf.data" > "$work/perf.txt"
  python3 bench/parquet/perf_buckets.py "$work/perf.txt"
  rm -rf "$work/m6" "$work/perf.data" "$work/perf.txt"
  exit 0
fi

say "export: the two H200 recordings"
$bench export "$work/fx" tests/fixtures/h200-cupti13.0/cuda_workload \
  tests/fixtures/h200-cupti13.0/torch_mlp --runs 10

say "export: a synthetic 16-rank run as dumps (decode + export)"
$bench gen "$work/fleet4m" --ranks 16 --kernels-per-rank 250000 --seconds 360
$bench export "$work/fleet4m-out" "$work/fleet4m" --runs 5
rm -rf "$work/fleet4m" "$work/fleet4m-out" "$work/fx"

say "export without dumps (records straight in), 10M rows, then DuckDB's queries"
taskset -c 0 $bench memory "$work/m10" --kernels-per-rank 625000 --seconds 300
"$py" bench/parquet/duckdb_bench.py "$work/m10" --runs 3

if [ "${1:-}" != quick ]; then
  say "export without dumps, 100M rows, then DuckDB's top kernels and stragglers"
  /usr/bin/time -v taskset -c 0 $bench memory "$work/m100" 2> "$work/m100.time"
  grep -E "Maximum resident|Elapsed" "$work/m100.time"
  "$py" bench/parquet/duckdb_bench.py "$work/m100" --runs 3 --queries count,top
  "$py" bench/parquet/duckdb_bench.py "$work/m100" --runs 1 --queries stragglers
fi
