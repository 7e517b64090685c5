#!/bin/bash
# Hang detection and `cupmon diagnose` on the real GPU: two ranks on the one GPU
# (independent processes, no NCCL), rank 0 healthy, rank 1 hanging:
#   spin: rank 1 runs a compute kernel that does not end;
#   stop: rank 1's host thread stops launching.
# For each: the time from the threshold (last progress + --hang-after) to rank 1's
# hang record, the time `cupmon diagnose` takes, and whether it names rank 1 (and
# only rank 1) with the right state. Prints PASS/FAIL lines; exits 1 on a failure.
#
# Needs .gpu/cupmon and .gpu/libcupmon_inject.so (scripts/gpu-bundle.sh) and nvcc.
# usage: tests/gpu/hang.sh [HANG_AFTER_S]   (default 5)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FINAL=${OUT:-$root/tests/gpu/out}
work=${GPU_SCRATCH:-/tmp/cupmon-hang}
rm -rf "$work"; mkdir -p "$work" "$FINAL"
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
after=${1:-5}
results=$FINAL/hang-results.txt
: >"$results"
say() { echo "$*" | tee -a "$results"; }
failed=0
[ -x "$cupmon" ] || { say "FAIL missing $cupmon"; exit 1; }
nvcc -O2 -arch=sm_90 -o "$work/hang" "$here/hang.cu" >"$work/nvcc.log" 2>&1 \
  || { say "FAIL nvcc: $(tail -3 "$work/nvcc.log")"; exit 1; }
say "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); hang-after ${after}s"

for mode in spin stop; do
  run=$work/$mode
  mkdir -p "$run"
  # Rank 0 launches for 40 s; rank 1 warms up 4 s, then hangs for 60 s.
  RANK=0 WORLD_SIZE=2 "$cupmon" run -o "$run" --hang-after "${after}s" -- "$work/hang" healthy 4 40 \
    >"$run/rank0.out" 2>"$run/rank0.err" &
  p0=$!
  RANK=1 WORLD_SIZE=2 "$cupmon" run -o "$run" --hang-after "${after}s" -- "$work/hang" "$mode" 4 60 \
    >"$run/rank1.out" 2>"$run/rank1.err" &
  p1=$!
  record=""
  for _ in $(seq 1 300); do
    record=$(ls "$run"/rank1-*/hang-1.json 2>/dev/null | head -1)
    [ -n "$record" ] && break
    sleep 0.1
  done
  if [ -z "$record" ]; then
    say "FAIL $mode: no hang record from rank 1 within 30 s"
    failed=1
  else
    t0=$(date +%s.%N)
    "$cupmon" diagnose --json "$run" >"$run/diagnosis.json" 2>"$run/diagnose.err"
    rc=$?
    t1=$(date +%s.%N)
    "$cupmon" diagnose "$run" >"$run/diagnosis.txt" 2>&1
    python3 - "$record" "$run/diagnosis.json" "$mode" "$after" "$t0" "$t1" "$rc" <<'PY' | tee -a "$results"
import json, sys
record_path, diag_path, mode, after, t0, t1, rc = sys.argv[1:]
record = json.load(open(record_path))
threshold = (record["last_progress_ns"] or 0) / 1e9 + float(after)
to_record = record["written_ns"] / 1e9 - threshold
took = float(t1) - float(t0)
ok = rc == "0"
d = json.load(open(diag_path)) if ok else {}
culprits = sorted({c["rank"] for c in d.get("culprits", [])})
want = {"spin": "compute-kernel", "stop": "host-stopped"}[mode]
state = next((r["state"]["state"] for r in d.get("ranks", []) if r["rank"] == 1), None)
# The culprit's line must give a time: a start, or (CUPTI's forced flush can give a
# running kernel no times) the launch from the thread's ring, never "at -".
why = " ".join(c.get("why", "") for c in d.get("culprits", []))
timed = " at - " not in why and "since -" not in why and "launch -" not in why
good = ok and culprits == [1] and state == want and timed
print(f"{'PASS' if good else 'FAIL'} {mode}: culprit {culprits} state {state} (want [1] {want}); "
      f"record {to_record:.2f} s after the threshold, diagnose took {took:.2f} s; "
      f"threshold to diagnosis {to_record + took:.2f} s; {d.get('headline', '')}"
      f"{'' if timed else '; the culprit line has no time: ' + why}")
PY
    grep -q "^PASS $mode" "$results" || failed=1
    sed 's/^/    /' "$run/diagnosis.txt" >>"$results"
  fi
  kill "$p0" "$p1" 2>/dev/null
  wait "$p0" "$p1" 2>/dev/null
done
for m in spin stop; do cp "$work/$m/diagnosis.json" "$FINAL/hang-$m-diagnosis.json" 2>/dev/null; done
exit $failed
