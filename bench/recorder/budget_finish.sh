#!/bin/bash
# Second device call of the budget run (see budget_start.sh): waits for bench.py (by
# its pid), then copies its log into $OUT and prints the RESULT line's main figures.
# usage: bench/recorder/budget_finish.sh [WAIT_S]   (default 400)
set -u
wait_s=${1:-400}
out=${OUT:-/tmp/budget-out}
mkdir -p "$out"
[ -f /tmp/budget.pid ] || { echo "FAIL: no /tmp/budget.pid: budget_start.sh did not run on this machine (a fresh machine?)"; exit 1; }
pid=$(cat /tmp/budget.pid)
# When this call began: set against budget_start.sh's last sample, the gap between the calls.
echo "budget_finish: started at unix $(date +%s)"
start=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
  if [ $((SECONDS - start)) -ge "$wait_s" ]; then
    echo "FAIL: bench.py (pid $pid) still running after ${wait_s} s"
    cp /tmp/budget.log "$out/budget.log"
    exit 1
  fi
  sleep 2
done
echo "budget_finish: bench.py ended after waiting $((SECONDS - start)) s"
cp /tmp/budget.log "$out/budget.log"
python3 - /tmp/budget.log <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        r = json.loads(line[7:])
        keys = ["exit", "max_sample_gap_s", "end_unix_s", "records", "dropped", "starvation_flushes", "final_bytes", "max_sampled_bytes",
                "keep_bytes", "retired", "workload", "unaccounted_kernels", "stats_last_2m_s", "slice_last_1s_s", "slice_kernels",
                "stats_all_s", "report_s", "digests", "segments"]
        for k in keys:
            print(f"{k}: {r.get(k)}")
        break
else:
    print("FAIL: no RESULT line in the log")
PY
