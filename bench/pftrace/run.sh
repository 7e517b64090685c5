#!/bin/bash
# The numbers of bench/pftrace/RESULTS.md: every mode at 1M and 10M slices,
# one process per (mode, size) so that each peak RSS is that mode's alone.
#
# usage: bench/pftrace/run.sh [OUTFILE]   (default: stdout)
# env:   RUNS_1M (5), RUNS_10M (3), MODES ("gen hand gz json json-gz prost")
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --release -p cupmon-bench-pftrace --features prost >&2
bin=target/release/bench-pftrace
exec > "${1:-/dev/stdout}"
echo "# $(date -u +%FT%TZ) $(uname -m) $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for size in 1000000 10000000; do
  runs=$([ "$size" = 1000000 ] && echo "${RUNS_1M:-5}" || echo "${RUNS_10M:-3}")
  for mode in ${MODES:-gen hand gz json json-gz prost}; do
    "$bin" --mode "$mode" --slices "$size" --runs "$runs"
  done
done
echo "# done, load: $(cut -d' ' -f1-3 /proc/loadavg)"
