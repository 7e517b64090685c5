#!/bin/bash
# `cupmon report` against `cupmon stats` on synthetic flight-recorder dumps (release
# build): one dump of the training job of bench/slice (make-dump) at 1x and 4x the
# size, and an 8-rank run (make-run). Each command REPS times, interleaved, on a warm
# page cache; prints every time, the median, min and max, and the records per second.
#
# x1/x4 come from bench/slice's make-dump, which writes no digests: their figures are
# the record walk. With BIG=1 it also makes `big`, a 24-hour dump of about 20 GB
# (make-run --stored: frames stored uncompressed, with the digests the monitor
# writes) and times report and stats on it with the digests and with them moved away.
#
# usage: bench/report/bench.sh [RAW_MIB (default 512)] [REPS (default 5)]
# env:   BENCH_DIR  where the dumps go (default target/bench-report; reused if there)
#        BIG=1      the 20 GB dump too (needs 21 GB of disk)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
raw=${1:-512}
reps=${2:-5}
dir=${BENCH_DIR:-$root/target/bench-report}
bin=${CARGO_TARGET_DIR:-$root/target}/release
cargo build --release -q -p cupmon-cli -p cupmon-bench-report -p cupmon-bench-slice
mkdir -p "$dir"
[ -d "$dir/x1" ] || "$bin/make-dump" "$dir/x1" "$raw"
[ -d "$dir/x4" ] || "$bin/make-dump" "$dir/x4" $((raw * 4))
[ -d "$dir/run8" ] || "$bin/make-run" "$dir/run8" 8 1800 100

seconds() { # the wall time of "$@" in seconds
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
summary() { # NAME TIMES...: median, min, max
  local name=$1; shift
  printf '%s\n' "$@" | sort -g | awk -v n="$name" '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "  %-22s median %7.2f s  min %7.2f  max %7.2f  (%d runs)\n", n, m, v[1], v[NR], NR }'
}
records() { "$bin/cupmon" stats "$1" | awk '/^records:/ { print $2 }'; }

echo "cupmon report vs stats, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), reps $reps"
for d in x1 x4 run8; do
  target=$dir/$d
  if [ "$d" = run8 ]; then
    n=0
    for r in "$target"/rank*; do n=$((n + $(records "$r"))); done
    stats_cmd=()
  else
    n=$(records "$target")
    stats_cmd=("$bin/cupmon" stats "$target")
  fi
  bytes=$(du -sb "$target" | cut -f1)
  echo "$d: $n records, $((bytes >> 20)) MiB on disk"
  rep=() st=()
  for _ in $(seq "$reps"); do
    rep+=("$(seconds "$bin/cupmon" report "$target" -o "$dir/$d.html")")
    [ ${#stats_cmd[@]} -gt 0 ] && st+=("$(seconds "${stats_cmd[@]}")")
  done
  echo "  report times: ${rep[*]}"
  summary "cupmon report" "${rep[@]}"
  [ ${#st[@]} -gt 0 ] && { echo "  stats times:  ${st[*]}"; summary "cupmon stats" "${st[@]}"; }
  med=$(printf '%s\n' "${rep[@]}" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  echo "  report: $(echo "$n / $med / 1000000" | bc -l | xargs printf '%.2f') M records/s, page $(stat -c %s "$dir/$d.html") bytes"
done
if [ "${BIG:-0}" = 1 ]; then
  [ -d "$dir/big" ] || "$bin/make-run" "$dir/big" 1 86400 38 --stored
  target=$(ls -d "$dir"/big/*/)
  bytes=$(du -sb "$target" | cut -f1)
  echo "big: $(records "$target") records, $((bytes >> 20)) MiB on disk, $(ls "$target"/segments/*.digest | wc -l) digests"
  rep=() st=()
  for _ in $(seq "$reps"); do
    rep+=("$(seconds "$bin/cupmon" report "$target" -o "$dir/big.html")")
    st+=("$(seconds "$bin/cupmon" stats "$target")")
  done
  summary "report (digests)" "${rep[@]}"
  summary "stats (digests)" "${st[@]}"
  aside=$(mktemp -d)
  mv "$target"/segments/*.digest "$aside"/
  "$bin/cupmon" report "$target" -o "$dir/big-walk.html" >/dev/null 2>&1
  walk=$(seconds "$bin/cupmon" report "$target" -o "$dir/big-walk.html")
  mv "$aside"/*.digest "$target"/segments/ && rmdir "$aside"
  echo "  report without digests (every record read): $walk s"
  cmp -s "$dir/big.html" "$dir/big-walk.html" && echo "  the two pages are identical" || echo "  the two pages DIFFER"
fi
