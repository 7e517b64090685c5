#!/bin/bash
# One device call, several GPU scripts: runs the chosen PARTS one after the other within
# a time budget (each gets what is left, killed at the budget's end), then prints one
# summary: each part PASS/FAIL/TIMEOUT/SKIPPED with its PASS/FAIL line counts. What comes
# back in $OUT (the device tool returns at most 8 files):
#   summary.txt   the summary (also on stdout)
#   results.txt   every part's PASS/FAIL/INFO lines, part by part
#   logs.txt      every part's stdout/stderr tail and its own logs
#   extra.tar.gz  the parts' other files (diagnosis JSONs, demo recording, bench tables)
# The plan of which parts to run in which call: tests/gpu/README.md.
#
# usage: tests/gpu/session.sh PART[,PART...]
#   core[:P,P]  tests/gpu/run.sh (its parts P, default all of them)
#   nvtx        tests/gpu/nvtx.sh               hang       tests/gpu/hang.sh
#   stacks      tests/gpu/stacks.sh             straggler  tests/gpu/straggler.sh
#   balanced    tests/gpu/straggler.sh, no rank slowed (a correct trial names nobody)
#   hang_nccl   tests/gpu/hang_nccl.sh (2+ GPUs; SKIPPED on one)
#   accounting  bench/recorder/accounting.sh 100000 eager 20
#   bench       bench/gpu/run.sh launch
# environment: SESSION_BUDGET_S (570: under the device tool's 600 s per call),
#   STRAGGLER_TRIALS (10), STRAGGLER_SECONDS (15), DRY_RUN=1 (check what each part
#   needs and print its command; runs nothing, needs no GPU).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2
[ $# -eq 1 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
parts=$1
final=${OUT:-$root/tests/gpu/out-session}
scratch=${GPU_SCRATCH:-/tmp/cupmon-session}
budget=${SESSION_BUDGET_S:-570}
trials=${STRAGGLER_TRIALS:-10}
seconds=${STRAGGLER_SECONDS:-15}
dry=${DRY_RUN:-0}
start=$(date +%s)
rm -rf "$scratch"; mkdir -p "$scratch" "$final"
summary=$final/summary.txt results=$final/results.txt logs=$final/logs.txt
: >"$summary"; : >"$results"; : >"$logs"

# What every part needs from .gpu/ (scripts/gpu-bundle.sh) and the working tree.
needs() {
  local common=(.gpu/cupmon .gpu/libcupmon_inject.so)
  case $1 in
    core) echo "${common[*]} tests/gpu/run.sh tests/gpu/workload.cu tests/gpu/memory.cu bench/gpu/empty_kernel.cu tests/gpu/check.py .gpu/cupmon-*.whl" ;;
    nvtx) echo "${common[*]} tests/gpu/nvtx.sh tests/gpu/nvtx_ranges.cu tests/gpu/nvtx_torch.py tests/gpu/nvtx_check.py bench/gpu/nvtx_cost.sh bench/gpu/nvtx_cost.cu bench/gpu/nvtx_parts_cost.cu .gpu/wheels/nvtx-*.whl" ;;
    hang) echo "${common[*]} tests/gpu/hang.sh tests/gpu/hang.cu" ;;
    stacks) echo "${common[*]} tests/gpu/stacks.sh tests/gpu/stacks_workload.py tests/gpu/stacks_check.py bench/stacks/paired.py" ;;
    straggler|balanced) echo "${common[*]} tests/gpu/straggler.sh tests/gpu/straggler_train.py tests/gpu/straggler_check.py" ;;
    hang_nccl) echo "${common[*]} tests/gpu/hang_nccl.sh tests/gpu/hang_nccl.py" ;;
    accounting) echo "${common[*]} bench/recorder/accounting.sh bench/recorder/account_line.py bench/gpu/empty_kernel.cu" ;;
    bench) echo "${common[*]} bench/gpu/run.sh bench/gpu/bench.py bench/gpu/empty_kernel.cu bench/gpu/minimal_consumer.c" ;;
    *) return 1 ;;
  esac
}

command_of() { # the part's command, one word per line
  local name=${1%%:*} arg=
  [ "$name" != "$1" ] && arg=${1#*:}
  case $name in
    core) printf '%s\n' bash tests/gpu/run.sh ${arg:+"$arg"} ;;
    nvtx|hang|stacks|hang_nccl) printf '%s\n' bash "tests/gpu/$name.sh" ;;
    straggler) printf '%s\n' bash tests/gpu/straggler.sh "$trials" slow "$seconds" ;;
    balanced) printf '%s\n' bash tests/gpu/straggler.sh "$trials" balanced "$seconds" ;;
    accounting) printf '%s\n' bash bench/recorder/accounting.sh 100000 eager 20 ;;
    bench) printf '%s\n' bash bench/gpu/run.sh launch ;;
  esac
}

line() { echo "$*" | tee -a "$summary"; }
line "session: parts $parts, budget ${budget}s, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'no nvidia-smi')"
# What a clock read costs here: inside windows NVTX ranges read the precise clock twice
# a pair, and the H200 gave 2-6x the dev VM's cost per pair (a clocksource other than
# the TSC makes clock_gettime a system call).
line "machine: $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo '?'), $(python3 -c '
import time
n = 200000
t0 = time.perf_counter_ns()
for _ in range(n):
    time.time_ns()
t1 = time.perf_counter_ns()
for _ in range(n):
    pass
t2 = time.perf_counter_ns()
print(f"clock_gettime(REALTIME) from Python ~{((t1 - t0) - (t2 - t1)) / n:.0f} ns a call")' 2>/dev/null || echo 'no python3')"
failed=0
for part in ${parts//,/ }; do
  name=${part%%:*}
  if ! needs "$name" >/dev/null; then line "FAIL $part: no such part"; failed=1; continue; fi
  missing=
  for f in $(needs "$name"); do
    # shellcheck disable=SC2086  # globs (the wheels) on purpose
    ls $f >/dev/null 2>&1 || missing="$missing $f"
  done
  mapfile -t cmd < <(command_of "$part")
  if [ "$dry" = 1 ]; then
    bash -n "${cmd[1]}" 2>>"$logs" || missing="$missing (bash -n ${cmd[1]} fails)"
    line "DRY $part: ${cmd[*]}${missing:+; missing:$missing}"
    [ -z "$missing" ] || failed=1
    continue
  fi
  case $missing in
    *.gpu/cupmon\ *|*.gpu/libcupmon_inject.so*) line "FAIL $part: missing$missing (scripts/gpu-bundle.sh, carry .gpu)"; failed=1; continue ;;
    ?*) echo "INFO $part: missing$missing (its part that needs it says SKIPPED)" >>"$summary" ;;
  esac
  left=$(( budget - ($(date +%s) - start) ))
  if [ "$left" -lt 20 ]; then line "SKIPPED $part: ${left}s of the budget left"; continue; fi
  dir=$scratch/$name
  mkdir -p "$dir/out"
  t0=$(date +%s)
  # Each script's own $OUT is a scratch folder; its files are bundled below.
  OUT=$dir/out GPU_SCRATCH=$dir/work timeout -k 5 "$left" "${cmd[@]}" >"$dir/stdout.txt" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  {
    echo "######## $part (exit $rc, ${took}s): ${cmd[*]}"
    grep -hE '^(PASS|FAIL|SKIPPED|INFO|==|ACCOUNT|straggler|trial|SUMMARY)' "$dir/stdout.txt"
    for f in "$dir"/out/*results*.txt "$dir"/out/RESULTS.md "$dir"/out/accounting.txt; do
      [ -f "$f" ] && { echo "---- $(basename "$f")"; cat "$f"; }
    done
  } >>"$results"
  {
    echo "######## $part: stdout and stderr (tail)"
    tail -c 20000 "$dir/stdout.txt"
    for f in "$dir"/out/*logs*.txt; do [ -f "$f" ] && { echo "---- $(basename "$f")"; tail -c 20000 "$f"; }; done
  } >>"$logs"
  # PASS/FAIL lines: the script's own results file when it writes one (it also echoes
  # them to stdout), else its stdout.
  sources=("$dir"/out/*results*.txt)
  [ -f "${sources[0]}" ] || sources=("$dir/stdout.txt")
  passes=$(cat "${sources[@]}" | grep -c '^PASS')
  fails=$(cat "${sources[@]}" | grep -c '^FAIL')
  skipped=$(cat "${sources[@]}" | grep -c '^SKIPPED')
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then verdict=TIMEOUT
  elif [ "$rc" != 0 ] || [ "$fails" != 0 ]; then verdict=FAIL
  elif [ "$passes" != 0 ]; then verdict=PASS
  elif [ "$skipped" != 0 ]; then verdict=SKIPPED
  # The benchmarks print tables, not PASS lines: their exit status is the verdict.
  elif [ "$name" = accounting ] || [ "$name" = bench ]; then verdict=PASS
  else verdict=FAIL; fails="0 (and no check passed)"
  fi
  case $verdict in TIMEOUT|FAIL) failed=1 ;; esac
  line "$verdict $part: exit $rc in ${took}s; $passes PASS lines, $fails FAIL lines"
done
# Everything else the parts left in their $OUT (diagnoses, the demo recording, tables).
( cd "$scratch" && find . -path '*/out/*' -type f ! -name '*results*.txt' ! -name '*logs*.txt' -size -20M -print0 \
    | tar -czf "$final/extra.tar.gz" --null -T - ) 2>>"$logs"
[ "$dry" = 1 ] && rm -f "$final/extra.tar.gz"
line "SESSION $( [ $failed = 0 ] && echo PASS || echo FAIL ) in $(( $(date +%s) - start ))s (results.txt, logs.txt, extra.tar.gz in $final)"
exit $failed
