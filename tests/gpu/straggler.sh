#!/bin/bash
# The straggler check on one H200 (issue 32, item 3): two ranks of one `cupmon run` on
# the same GPU, one of them (rank 1 in odd trials, rank 0 in even ones) with one extra
# spin kernel (torch.cuda._sleep) per step sized at 5% of a step's GPU time (calibrated
# alone first). Each trial runs SECONDS, polls
# `cupmon status` every 2 s for the live straggler, then runs `cupmon stragglers`;
# straggler_check.py judges it. The last line counts the trials named correctly
# within 2 minutes. MODE balanced: no extra kernel, and a correct trial names nobody.
# The ranks take turns on the GPU (STRAGGLER_SHARE=turns, the default: a burst of 10
# steps each; see straggler_train.py), standing for ranks on GPUs of their own;
# STRAGGLER_SHARE=together runs them side by side, sharing the SMs (10 trials on the
# H200 that way: 1 right, the GEMMs' contention swamped the 5 %).
#
# usage: tests/gpu/straggler.sh [TRIALS (20)] [slow|balanced] [SECONDS (15)]
# Needs .gpu/cupmon and .gpu/libcupmon_inject.so (scripts/gpu-bundle.sh) and torch.
# 20 trials of 15 s take about 8-9 minutes; split them (10 and 10) if a call is shorter.
# Exit 1 when fewer than 95 % of the trials are correct.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
trials=${1:-20}
mode=${2:-slow}
seconds=${3:-15}
OUT=${GPU_SCRATCH:-/tmp/cupmon-straggler}
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
[ -x "$cupmon" ] || { echo "FAIL missing $cupmon (scripts/gpu-bundle.sh)"; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"

cal=$(python3 "$here/straggler_train.py" --calibrate) || { echo "FAIL calibration"; exit 1; }
extra=0
if [ "$mode" = slow ]; then
  extra=$(python3 -c "import json,sys; c=json.loads(sys.argv[1]); print(int(0.05*c['step_ms']*c['cycles_per_ms']))" "$cal")
fi
echo "calibration (alone): $cal; extra spin cycles per step on the slow rank: $extra"

correct=0
for t in $(seq 1 "$trials"); do
  dir=$OUT/t$t
  start=$(date +%s.%N)
  turns=
  [ "${STRAGGLER_SHARE:-turns}" = turns ] && turns="STRAGGLER_TURNS=$OUT/t$t.turns"
  # The slow rank changes from trial to trial: a check that always expects one rank
  # could not tell a detector stuck on that rank from a right one.
  slow=$(( t % 2 ))
  extra0=0 extra1=0
  if [ $slow = 1 ]; then extra1=$extra; else extra0=$extra; fi
  "$cupmon" run -o "$dir" -- sh -c "$turns RANK=0 WORLD_SIZE=2 python3 '$here/straggler_train.py' $seconds $extra0 & \
    $turns RANK=1 WORLD_SIZE=2 python3 '$here/straggler_train.py' $seconds $extra1 & wait" \
    >"$OUT/t$t.out" 2>"$OUT/t$t.err" &
  run=$!
  live_s=- live_rank=-
  while kill -0 "$run" 2>/dev/null; do
    sleep 2
    [ -d "$dir" ] || continue
    line=$("$cupmon" status "$dir" 2>/dev/null | grep -m1 "STRAGGLER:")
    if [ -n "$line" ] && [ "$live_rank" = - ]; then
      live_rank=$(echo "$line" | sed -E 's/.*STRAGGLER: (rank [0-9]+).*/\1/')
      live_s=$(python3 -c "import sys,time; print(round(time.time()-float(sys.argv[1]),1))" "$start")
      echo "trial $t: live: $line (after $live_s s)"
    fi
  done
  wait "$run"; rc=$?
  [ $rc -eq 0 ] || { echo "trial $t: cupmon run exited $rc"; tail -5 "$OUT/t$t.err"; }
  "$cupmon" stragglers "$dir" --json >"$OUT/t$t.json" 2>"$OUT/t$t.stragglers.err"
  "$cupmon" stragglers "$dir" | head -12
  python3 "$here/straggler_check.py" "$mode" "$OUT/t$t.json" "$live_s" "$live_rank" "$slow" && correct=$((correct + 1))
done
echo "straggler ($mode, $seconds s trials, ranks ${STRAGGLER_SHARE:-turns}): $correct of $trials trials correct within 2 minutes"
# The issue's target: 19 of 20 (95 %); exit 1 below it, so a driver sees a FAIL.
if [ $((correct * 20)) -ge $((trials * 19)) ]; then
  echo "PASS straggler $mode: $correct of $trials"
else
  echo "FAIL straggler $mode: $correct of $trials (target 95 %)"
  exit 1
fi
