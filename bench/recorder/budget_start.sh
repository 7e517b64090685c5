#!/bin/bash
# First of the two device calls of the 10-minute budget run (a device call lasts at
# most 10 minutes, the run longer): starts bench.py's budget part in its own session,
# so that it outlives this call, and samples the dump's size until SAMPLE_S seconds
# have passed. bench/recorder/budget_finish.sh, in the next call, waits for it and
# collects the results. The device tool must carry .gpu (scripts/gpu-bundle.sh).
#
# usage: bench/recorder/budget_start.sh SAMPLE_S [bench.py budget options...]
#   e.g. budget_start.sh 560 --budget-s 600 --budget-rate 600000 --budget-keep 1GiB --budget-vary
set -u
sample_s=${1:?usage: budget_start.sh SAMPLE_S [bench.py options]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$root/.gpu/cupmon" ] || { echo "FAIL: no $root/.gpu/cupmon: run scripts/gpu-bundle.sh and carry .gpu"; exit 1; }
out=${OUT:-/tmp/budget-out}
mkdir -p /tmp/bench "$out"
setsid nohup env PYTHONUNBUFFERED=1 python3 -u "$root/bench/recorder/bench.py" /tmp/bench \
  --parts budget "$@" >/tmp/budget.log 2>&1 </dev/null &
# The pid the finishing call waits on (never `pgrep -f`: it matches the calling shell).
echo $! >/tmp/budget.pid
start=$SECONDS
while [ $((SECONDS - start)) -lt "$sample_s" ] && kill -0 "$(cat /tmp/budget.pid)" 2>/dev/null; do
  sleep 20
  d=$(ls -d /tmp/bench/budget/*/ 2>/dev/null | head -1)
  if [ -n "$d" ]; then
    echo "t=$((SECONDS - start)) unix=$(date +%s) bytes=$(du -sb "$d" | cut -f1) segments=$(ls "$d/segments" | grep -c '\.cupmr$') digests=$(ls "$d/segments" | grep -c '\.digest$') load=$(cut -d' ' -f1 /proc/loadavg)"
  else
    echo "t=$((SECONDS - start)) unix=$(date +%s) no dump yet"
  fi
done | tee "$out/samples.txt"
echo "budget_start: at unix $(date +%s), bench.py $(kill -0 "$(cat /tmp/budget.pid)" 2>/dev/null && echo 'still running' || echo 'ended'); log: /tmp/budget.log"
tail -3 /tmp/budget.log
