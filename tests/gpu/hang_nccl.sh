#!/bin/bash
# NCCL hangs on a machine of 2 or more GPUs (the device tool's nvidia-h200-x2 or -x4):
# torchrun, one rank per GPU (at most 4); rank 1 makes each kind of hang (tests/gpu/hang_nccl.py: compute, stop,
# missing, extra, sizes). For each: whether `cupmon diagnose` names rank 1 (and only
# rank 1), the time from the threshold (last progress + --hang-after) to the last
# rank's hang record, and the time the diagnosis takes. PASS/FAIL lines; exit 1 on a
# failure. Needs .gpu/cupmon and .gpu/libcupmon_inject.so (scripts/gpu-bundle.sh),
# torch with NCCL and 2 GPUs.
#
# With two ranks, a missing, an extra or a mismatched collective cannot be pinned on one
# of them from the kernel sequences alone (rank 1 skipping an all-reduce looks exactly
# like rank 0 launching an extra one): there a PASS needs rank 1 among the culprits and
# the divergence marked ambiguous; with 3 or more ranks, rank 1 alone.
#
# usage: tests/gpu/hang_nccl.sh [HANG_AFTER_S] [MODE,...]   (default 10, all modes)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FINAL=${OUT:-$root/tests/gpu/out}
work=${GPU_SCRATCH:-/tmp/cupmon-hang-nccl}
rm -rf "$work"; mkdir -p "$work" "$FINAL"
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
export PYTHONUNBUFFERED=1
after=${1:-10}
modes=${2:-compute,stop,missing,extra,sizes}
results=$FINAL/hang-nccl-results.txt
: >"$results"
say() { echo "$*" | tee -a "$results"; }
[ -x "$cupmon" ] || { say "FAIL missing $cupmon"; exit 1; }
gpus=$(nvidia-smi -L | wc -l)
[ "$gpus" -ge 2 ] || { say "SKIPPED: $gpus GPU(s); the NCCL hangs need 2"; exit 0; }
nproc=$(( gpus < 4 ? gpus : 4 ))
say "machine: $gpus x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); hang-after ${after}s, $nproc ranks"
failed=0
for mode in ${modes//,/ }; do
  run=$work/$mode
  mkdir -p "$run"
  setsid "$cupmon" run -o "$run" --hang-after "${after}s" -- \
    torchrun --nproc-per-node "$nproc" "$here/hang_nccl.py" "$mode" >"$run/job.out" 2>"$run/job.err" &
  job=$!
  # Every rank writes a record when its GPU stops making progress (the others wait in
  # a collective that never completes).
  for _ in $(seq 1 900); do
    [ "$(ls "$run"/rank*/hang-1.json 2>/dev/null | wc -l)" -ge "$nproc" ] && break
    sleep 0.1
  done
  records=$(ls "$run"/rank*/hang-1.json 2>/dev/null | wc -l)
  t0=$(date +%s.%N)
  "$cupmon" diagnose --json "$run" >"$run/diagnosis.json" 2>"$run/diagnose.err"
  rc=$?
  t1=$(date +%s.%N)
  "$cupmon" diagnose "$run" >"$run/diagnosis.txt" 2>&1
  python3 - "$run" "$mode" "$after" "$t0" "$t1" "$rc" "$records" "$nproc" <<'PY' | tee -a "$results"
import glob, json, sys
run, mode, after, t0, t1, rc, records, nproc = sys.argv[1:]
late = []
for path in glob.glob(f"{run}/rank*/hang-1.json"):
    r = json.load(open(path))
    if r.get("last_progress_ns"):
        late.append(r["written_ns"] / 1e9 - (r["last_progress_ns"] / 1e9 + float(after)))
d = json.load(open(f"{run}/diagnosis.json")) if rc == "0" else {}
culprits = sorted({c["rank"] for c in d.get("culprits", [])})
ambiguous = any(v.get("ambiguous") for v in d.get("divergences", []))
if nproc == "2" and mode in ("missing", "extra", "sizes"):
    good = rc == "0" and 1 in culprits and ambiguous
else:
    good = rc == "0" and culprits == [1]
took = float(t1) - float(t0)
worst = max(late) if late else float("nan")
print(f"{'PASS' if good else 'FAIL'} {mode}: culprit {culprits} (want [1]{', ambiguous' if nproc == '2' and mode in ('missing', 'extra', 'sizes') else ''}); {records} hang records, "
      f"the last {worst:.2f} s after its threshold; diagnose took {took:.2f} s; {d.get('headline', '')}")
PY
  grep -q "^PASS $mode" "$results" || failed=1
  sed 's/^/    /' "$run/diagnosis.txt" >>"$results"
  cp "$run/diagnosis.json" "$FINAL/hang-nccl-$mode-diagnosis.json" 2>/dev/null
  kill -TERM -- "-$job" 2>/dev/null; sleep 2; kill -KILL -- "-$job" 2>/dev/null
  wait "$job" 2>/dev/null
done
exit $failed
