#!/bin/bash
# Every kernel accounted for (issue 27): runs bench/gpu/empty_kernel.cu at a given rate
# and mode for a given time under `cupmon run` (or the minimal CUPTI consumer), samples
# the traced process's memory, and prints one line:
#   ACCOUNT <label> workload_launched=N cupmon_launched=N recorded=N dropped=N
#           unaccounted=N counter_error=N recoveries=N gaps=N ... rss_first_kb=..
#           rss_last_kb=.. rss_max_kb=.. hwm_kb=.. rate=..
# (see bench/recorder/account_line.py for every field). The line also goes to
# $OUT/accounting.txt (appended), the dump's meta and stats to $OUT/<label>.*.
#
# usage: bench/recorder/accounting.sh RATE MODE SECONDS [KEEP]
#   RATE     kernels/s over all threads; 0 = as fast as the threads go
#   MODE     graph (THREADS threads replaying varied GRAPH_NODES-node CUDA graphs)
#            | eager (THREADS threads, one launch per kernel)
#   SECONDS  how long the workload launches
#   KEEP     cupmon's --keep (default 256MiB)
# environment:
#   CONSUMER=cupmon (default) | floor (bench/gpu/minimal_consumer.c, built here; its
#            MINCON_* knobs, e.g. MINCON_FLUSH_MS=1000, pass through the environment)
#   THREADS=8  GRAPH_NODES=512  OUT=/tmp/accounting-out  SAMPLE_S=5 (memory sampling)
#   any CUPMON_* setting is passed to cupmon, e.g. CUPMON_CUPTI_FLUSH_PERIOD=100ms,
#   CUPMON_CUPTI_DEVICE_BUFFER_SIZE=16MiB, CUPMON_CUPTI_DEVICE_BUFFER_POOL_LIMIT=1000,
#   CUPMON_FLUSH_OVERLAP=1, CUPMON_RECOVER=0, CUPMON_COUNT_LAUNCHES=0, CUPMON_LOG=debug
#   DRY_RUN=1: print the commands, run nothing (no GPU needed)
# The device tool must carry .gpu (scripts/gpu-bundle.sh). Examples:
#   bench/recorder/accounting.sh 500000 graph 480          # the sweep's 500 k/s point
#   CONSUMER=floor bench/recorder/accounting.sh 500000 graph 480
#   bench/recorder/accounting.sh 0 graph 540 256MiB        # the 9-minute full-rate burst
set -u
rate=${1:?usage: accounting.sh RATE MODE SECONDS [KEEP]}
mode=${2:?usage: accounting.sh RATE MODE SECONDS [KEEP]}
seconds=${3:?usage: accounting.sh RATE MODE SECONDS [KEEP]}
keep=${4:-256MiB}
consumer=${CONSUMER:-cupmon}
threads=${THREADS:-8}
nodes=${GRAPH_NODES:-512}
sample_s=${SAMPLE_S:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
out=${OUT:-/tmp/accounting-out}
work=${ACCOUNTING_WORK:-/tmp/accounting}
case $mode in
  graph) shape=(--graph "$nodes" --vary) ;;
  eager) shape=(--graph 0) ;;
  *) echo "accounting.sh: MODE must be graph or eager, not '$mode'" >&2; exit 2 ;;
esac
case $consumer in cupmon|floor) ;; *) echo "accounting.sh: CONSUMER must be cupmon or floor" >&2; exit 2 ;; esac
label="${consumer}-${mode}-rate${rate}-${seconds}s"
workload=(--burst "$seconds" --threads "$threads" "${shape[@]}" --rate "$rate")
run() { if [ -n "${DRY_RUN:-}" ]; then echo "+ $*"; else "$@"; fi; }
mkdir -p "$out"
if [ -z "${DRY_RUN:-}" ]; then
  [ "$consumer" = floor ] || [ -x "$cupmon" ] || { echo "FAIL: no $cupmon: run scripts/gpu-bundle.sh and carry .gpu" >&2; exit 1; }
  rm -rf "$work"; mkdir -p "$work"
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
run nvcc -O2 -arch=sm_90 -std=c++17 -o "$work/empty_kernel" "$root/bench/gpu/empty_kernel.cu" || exit 1
if [ "$consumer" = floor ]; then
  # Where bench/gpu/run.sh finds CUPTI (the same floor as the overhead benchmark).
  cupti_inc=$cuda/include; cupti_lib=$cuda/lib64
  for d in "$cuda/targets/x86_64-linux/include" "$cuda/extras/CUPTI/include" "$cuda/include"; do
    [ -f "$d/cupti.h" ] && { cupti_inc=$d; break; }
  done
  for d in ${CUPTI_LIB:-} "$cuda/targets/x86_64-linux/lib" "$cuda/lib64" "$cuda/extras/CUPTI/lib64"; do
    compgen -G "$d/libcupti.so*" >/dev/null && { cupti_lib=$d; break; }
  done
  link=-lcupti
  [ -e "$cupti_lib/libcupti.so" ] || link=-l:$(basename "$(compgen -G "$cupti_lib/libcupti.so.*" | sort | head -1)")
  run gcc -O2 -Wall -shared -fPIC -o "$work/libminimal_consumer.so" "$root/bench/gpu/minimal_consumer.c" \
    -I"$cupti_inc" -L"$cupti_lib" "$link" -Wl,-rpath,"$cupti_lib" -pthread || exit 1
  # MINCON_COUNT: the consumer counts its kernel records itself (not bytes / record size).
  cmd=(env CUDA_INJECTION64_PATH="$work/libminimal_consumer.so" MINCON_INFO="$work/mincon.json" MINCON_COUNT=1 "$work/empty_kernel" "${workload[@]}")
else
  export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
  cmd=("$cupmon" run --keep "$keep" -o "$work/run" -- "$work/empty_kernel" "${workload[@]}")
fi
echo "accounting: $label start unix $(date +%s); $(env | grep '^CUPMON_' | grep -v INJECT | tr '\n' ' ')"
if [ -n "${DRY_RUN:-}" ]; then
  run "${cmd[@]}"
  echo "+ python3 $root/bench/recorder/account_line.py DUMP $work/workload.out --rss $work/rss.txt --label $label"
  exit 0
fi
"${cmd[@]}" >"$work/workload.out" 2>"$work/run.err" &
runner=$!
# The traced process: the empty_kernel of this run (its path is unique to this script).
: >"$work/rss.txt"
while kill -0 "$runner" 2>/dev/null; do
  pid=$(pgrep -n -f "^$work/empty_kernel " || true)
  if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
    awk -v t="$(date +%s)" '/^VmRSS:/{r=$2} /^VmHWM:/{h=$2} END{if (r) print t, r, h}' "/proc/$pid/status" >>"$work/rss.txt"
  fi
  sleep "$sample_s"
done
wait "$runner"; rc=$?
echo "accounting: $label exit $rc, end unix $(date +%s)"
tail -12 "$work/run.err"
if [ "$consumer" = floor ]; then
  line=$(python3 "$root/bench/recorder/account_line.py" - "$work/workload.out" --floor "$work/mincon.json" --rss "$work/rss.txt" --label "$label")
else
  dump=$(ls -d "$work"/run/*/ 2>/dev/null | head -1)
  [ -n "$dump" ] || { echo "FAIL: no dump under $work/run" >&2; exit 1; }
  cp "$dump/cupti_monitor_meta.bin" "$out/$label.meta.bin"
  "$cupmon" stats "$dump" --timeline 30s >"$out/$label.stats.txt" 2>&1
  line=$(python3 "$root/bench/recorder/account_line.py" "$dump" "$work/workload.out" --rss "$work/rss.txt" --label "$label")
fi
echo "$line" | tee -a "$out/accounting.txt"
cp "$work/rss.txt" "$out/$label.rss.txt"
