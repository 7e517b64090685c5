#!/bin/bash
# Whether the stall of the first 10-minute runs (the dump writer behind, CUPTI holding
# every buffer, recording stopped for good) comes back, and whether the forced flush
# ends it: 8 threads of varied 512-node graphs at full rate for SECONDS under --keep
# KEEP, in one device call. Prints the workload's count, the meta's records, drops and
# forced flushes (starvation_flushes), the kernels unaccounted for, the flusher's
# longest quiet stretch (flusher_quiet), the kept part's timeline in 10-s bins
# (a stall shows as bins with no kernels) and the longest periodic flush. With
# CUPMON_LOG=debug set, run.err also gets one line a flush period from the flusher.
# usage: bench/recorder/stall_check.sh [SECONDS] [KEEP]   (default 300 256MiB)
# The device tool must carry .gpu (scripts/gpu-bundle.sh).
set -u
seconds=${1:-300}
keep=${2:-256MiB}
root=$(cd "$(dirname "$0")/../.." && pwd)
cupmon=$root/.gpu/cupmon
[ -x "$cupmon" ] || { echo "FAIL: no $cupmon: run scripts/gpu-bundle.sh and carry .gpu"; exit 1; }
export CUPMON_INJECT_LIBRARY=$root/.gpu/libcupmon_inject.so
out=${OUT:-/tmp/stall-out}
work=/tmp/stall
rm -rf "$work"; mkdir -p "$work" "$out"
nvcc -O2 -arch=sm_90 -std=c++17 -o "$work/empty_kernel" "$root/bench/gpu/empty_kernel.cu" || exit 1
echo "stall_check: start unix $(date +%s), $seconds s at full rate, --keep $keep"
"$cupmon" run --keep "$keep" -o "$work/run" -- "$work/empty_kernel" --burst "$seconds" \
  --threads 8 --graph 512 --rate 0 --vary >"$work/workload.out" 2>"$work/run.err"
echo "stall_check: exit $?, end unix $(date +%s)"
cp "$work/run.err" "$out/run.err"; tail -6 "$work/run.err"
dump=$(ls -d "$work"/run/*/ | head -1)
grep '^BENCH ' "$work/workload.out" | tail -1 > "$out/bench.json"
python3 - "$dump" "$out/bench.json" <<'PY'
import json, sys
raw = open(sys.argv[1] + "/cupti_monitor_meta.bin", "rb").read()
m = json.loads(raw[16:])
w = json.loads(open(sys.argv[2]).read()[len("BENCH "):])
rec, drop = m.get("records", 0), m.get("dropped_records", 0)
print("launched", w["total_kernels"], "rate", w["rate"], "max_behind_schedule_s", w.get("max_behind_schedule_s"))
print("records", rec, "dropped", drop, "forced flushes", m.get("starvation_flushes", 0),
      "unaccounted", w["total_kernels"] - rec - drop, "retired", m.get("retired"))
# The flusher's longest stretch of periods with buffers lent to CUPTI and none back:
# its buffers held and the requests refused meanwhile tell how CUPTI stalled.
print("flusher_quiet", m.get("flusher_quiet"), "buffer_requests_refused", m.get("buffer_requests_refused"))
# The longest periodic cuptiActivityFlushAll: it grew to 37 s before recording stopped.
print("flush_longest_ms", m.get("flush_longest_ms"))
PY
"$cupmon" stats "$dump" --timeline 10s 2>&1 | tail -60 | tee "$out/timeline.txt"
