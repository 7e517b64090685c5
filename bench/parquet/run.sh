#!/bin/bash
# The runs behind bench/parquet/RESULTS.md. Needs the duckdb Python package
# (scripts/test-python.sh puts it in target/python-venv). Scratch data goes to
# $WORK (default /tmp/pqbench): about 1 GB of dumps and 0.7 GB of Parquet.
#
# usage: bench/parquet/run.sh [quick]   (quick: no 100M-row run)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=${WORK:-/tmp/pqbench}
py=${PYTHON:-$root/target/python-venv/bin/python}
bench=target/release/bench-parquet
mkdir -p "$work"
cargo build --release -p cupmon-bench-parquet
say() { echo "## $* (load: $(cut -d' ' -f1-3 /proc/loadavg))"; }

say "export: the two H200 recordings"
$bench export "$work/fx" tests/fixtures/h200-cupti13.0/cuda_workload \
  tests/fixtures/h200-cupti13.0/torch_mlp --runs 10

say "export: a synthetic 16-rank run as dumps (decode + export)"
$bench gen "$work/fleet4m" --ranks 16 --kernels-per-rank 250000 --seconds 360
$bench export "$work/fleet4m-out" "$work/fleet4m" --runs 5
rm -rf "$work/fleet4m" "$work/fleet4m-out" "$work/fx"

say "export without dumps (records straight in), 10M rows, then DuckDB's queries"
$bench memory "$work/m10" --kernels-per-rank 625000 --seconds 300
"$py" bench/parquet/duckdb_bench.py "$work/m10" --runs 3

if [ "${1:-}" != quick ]; then
  say "export without dumps, 100M rows, then DuckDB's top kernels and stragglers"
  $bench memory "$work/m100"
  "$py" bench/parquet/duckdb_bench.py "$work/m100" --runs 3 --queries count,top
  "$py" bench/parquet/duckdb_bench.py "$work/m100" --runs 1 --queries stragglers
fi
