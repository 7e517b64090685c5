#!/bin/bash
# The numbers of bench/compact/RESULTS.md: bytes per kernel and CPU per million records
# of the compact chunk encoding vs zstd on the fixtures, a synthetic training job and an
# empty-kernel burst (1M kernels each), every method, RUNS repetitions.
#
# usage: bench/compact/run.sh [OUTFILE]   (default: stdout)
# env:   RUNS (5), KERNELS (1000000), BURST (1000000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --release -p cupmon-bench-compact >&2
exec > "${1:-/dev/stdout}"
echo "# $(date -u +%FT%TZ) $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)"
target/release/bench-compact --runs "${RUNS:-5}" --kernels "${KERNELS:-1000000}" --burst "${BURST:-1000000}"
echo "# done, load: $(cut -d' ' -f1-3 /proc/loadavg)"
