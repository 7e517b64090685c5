#!/bin/bash
# Two builds of the `cupmon` binary timed alternately on `cupmon export-parquet` of
# one dump, each run a fresh process pinned to one core, as a user runs it (process
# start, first-touch page faults and the files' fsync included). Prints one line per
# run (build, wall, user, sys, minor faults) and then, per build, the median and the
# range of the wall times and the kernel rows per second at the median.
#
# usage: bench/parquet/cli_ab.sh BEFORE_BIN AFTER_BIN DUMP_OR_RUN_DIR [PAIRS] [CORE]
#        (default 10 pairs on core 1; scratch output in ${WORK:-/tmp/cli-ab})
set -euo pipefail
before=$1 after=$2 dump=$3 pairs=${4:-10} core=${5:-1}
work=${WORK:-/tmp/cli-ab}
mkdir -p "$work"
# DUMP may be one dump or a run directory of several (one per rank).
if [ -f "$dump/cupti_monitor_meta.bin" ]; then dumps=("$dump"); else dumps=("$dump"/*/); fi
kernels=0
for d in "${dumps[@]}"; do
  [ -f "$d/cupti_monitor_meta.bin" ] || continue
  n=$("$after" stats "$d" | awk '$1 == "CONCURRENT_KERNEL" || $1 == "KERNEL" {n += $2} END {print n + 0}')
  kernels=$((kernels + n))
done
echo "# dump $dump: $kernels kernel records; $pairs interleaved pairs on core $core; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# build wall_s user_s sys_s minor_faults"
TIMEFORMAT='%3R %3U %3S'
one() {
  rm -rf "$work/out"
  { time /usr/bin/time -f "%R" -o "$work/faults" taskset -c "$core" "$2" export-parquet "$dump" -o "$work/out" >/dev/null 2>"$work/err"; } 2>"$work/time" \
    || { echo "FAIL: $2 export-parquet: $(tail -3 "$work/err")"; exit 1; }
  echo "$1 $(cat "$work/time") $(cat "$work/faults")"
}
for p in $(seq "$pairs"); do
  # Alternate which build goes first, so that neither always runs on a warmer cache.
  if [ $((p % 2)) = 1 ]; then one before "$before"; one after "$after"; else one after "$after"; one before "$before"; fi
done | tee "$work/runs"
for b in before after; do
  awk -v b="$b" '$1 == b {print $2}' "$work/runs" | sort -n | awk -v b="$b" -v k="$kernels" '{w[++n] = $1} END {
    m = (n % 2) ? w[(n + 1) / 2] : (w[n / 2] + w[n / 2 + 1]) / 2;
    printf "%s: wall median %.3f s [%.3f..%.3f] over %d runs: %.2f M kernel rows/s at the median\n", b, m, w[1], w[n], n, k / m / 1e6
  }'
done
