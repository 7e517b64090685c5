#!/bin/bash
# cupmon's checks on a real GPU (run through the `device` tool; see DEVELOPING.md).
# Needs prebuilt .gpu/cupmon and .gpu/libcupmon_inject.so (scripts/gpu-bundle.sh),
# nvcc, python3 with torch. Logs and dumps go under $OUT. Prints PASS/FAIL lines
# and a summary; exits 1 if any check failed.
#
# usage: tests/gpu/run.sh [PART,...]   parts: cuda (A,B), torch (C), signals (D,E),
#        coexist (F: torch.profiler inside cupmon run), clock (G: cupmon.torch from
#        plain Python), memory (H: MEMORY2/MEMORY_POOL), ranks (I: torchrun, 2 ranks),
#        demo (J: records the demo), recorder (K: segments, _exit, prompt exit),
#        accounting (L: cupmon's launch counter equals the workload's own count, eager
#        and graph launches; and beside torch.profiler's subscription in F's dump);
#        default all. The Python package is installed from .gpu/*.whl when present.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# Everything goes to a scratch folder; $OUT (which the device tool brings back,
# at most 8 files) gets results.txt and logs.txt only.
FINAL=${OUT:-$root/tests/gpu/out}
OUT=${GPU_SCRATCH:-/tmp/cupmon-gpu}
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
export PYTHONUNBUFFERED=1
# Results go straight to $FINAL, so a run cut short by a time limit still reports.
results=$FINAL/results.txt
: >"$results"
save_logs() {
  for f in "$OUT"/*.err "$OUT"/*.out; do [ -f "$f" ] && { echo "---- $(basename "$f")"; tail -c 6000 "$f"; }; done >"$FINAL/logs.txt"
}
trap 'save_logs; exit 124' TERM INT
note() { echo "== $*" | tee -a "$results"; }
pass_fail() { tee -a "$results"; }

note "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(nvcc --version | tail -1)"
[ -x "$cupmon" ] || { echo "FAIL missing $cupmon" | pass_fail; exit 1; }
parts=${1:-cuda,torch,signals,coexist,clock,memory,ranks,demo,recorder,accounting}
# The cupmon Python package (an abi3 wheel built by scripts/gpu-bundle.sh).
wheel=$(ls "$root"/.gpu/cupmon-*.whl 2>/dev/null | head -1)
if [ -n "$wheel" ]; then
  pip install --quiet --no-deps --no-index --target /tmp/cupmon-site "$wheel" >"$OUT/pip.log" 2>&1 \
    && export PYTHONPATH=/tmp/cupmon-site${PYTHONPATH:+:$PYTHONPATH} \
    || echo "FAIL pip install $wheel ($(tail -2 "$OUT/pip.log"))" | pass_fail
else
  echo "SKIPPED: no .gpu/cupmon-*.whl: the Python parts (clock, ranks, demo) cannot import cupmon" | pass_fail
fi
want() { case ",$parts," in *",$1,"*) return 0;; *) return 1;; esac; }
nvcc -O2 -arch=sm_90 -std=c++17 -o "$OUT/workload" "$here/workload.cu" >"$OUT/nvcc.log" 2>&1 \
  || { echo "FAIL nvcc (see nvcc.log)"; tail -5 "$OUT/nvcc.log"; exit 1; } | pass_fail

if want cuda; then
# A: the CUDA workload with a window over the whole run.
note "A: CUDA workload, window over the whole run"
"$cupmon" run -o "$OUT/a" --window-at 0 --window-for 600 -- "$OUT/workload" 4 >"$OUT/a.out" 2>"$OUT/a.err"
echo "exit $? $(tail -8 "$OUT/a.err" | tr '\n' ' ')" >>"$results"
python3 "$here/check.py" "$cupmon" A "$OUT/a" "$OUT/a.out" --full-window | pass_fail

# B: a window in the middle of a longer run.
note "B: CUDA workload, window from 1.0 s to 2.0 s of a 3 s run"
"$cupmon" run -o "$OUT/b" --window-at 1.0 --window-for 1.0 -- "$OUT/workload" 30 0.1 >"$OUT/b.out" 2>"$OUT/b.err"
python3 "$here/check.py" "$cupmon" B "$OUT/b" "$OUT/b.out" | pass_fail

fi

if want torch; then
# C: a torch training loop with a window in the middle; C0: a window over all of it.
python3 -c "
import torch
maps = lambda: sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcupti' in l})
print('INFO libcupti after import torch:', maps())
torch.zeros(1, device='cuda')
print('INFO libcupti after CUDA init:', maps(), 'torch', torch.__version__, torch.version.cuda)
" 2>&1 | tail -2 | pass_fail
note "C: torch training loop, a window from step 40 to step 60 (SIGUSR2 from the program)"
WINDOW_STEPS=40,60 CUPMON_DEBUG=1 "$cupmon" run -o "$OUT/c" --window-on-signal -- python3 "$here/torch_train.py" 120 >"$OUT/c.out" 2>"$OUT/c.err"
echo "exit $? $(grep -v Warning "$OUT/c.err" | tail -8 | tr '\n' ' ')" >>"$results"
python3 "$here/check.py" "$cupmon" C "$OUT/c" "$OUT/c.out" --torch | pass_fail
note "C0: torch training loop, window over the whole run"
CUPMON_DEBUG=1 "$cupmon" run -o "$OUT/c0" --window-at 0 --window-for 600 -- python3 "$here/torch_train.py" 20 >"$OUT/c0.out" 2>"$OUT/c0.err"
echo "exit $? $(grep -v Warning "$OUT/c0.err" | tail -8 | tr '\n' ' ')" >>"$results"
python3 "$here/check.py" "$cupmon" C0 "$OUT/c0" "$OUT/c0.out" --torch | pass_fail
cat "$OUT/c.out" "$OUT/c0.out" >>"$results"
fi

if want signals; then
# D: SIGKILL mid-run leaves a readable dump.
note "D: SIGKILL mid-run"
"$cupmon" run -o "$OUT/d" --flush-period 0.2 -- "$OUT/workload" 2000 0.01 >"$OUT/d.out" 2>"$OUT/d.err" &
runner=$!
for _ in $(seq 50); do sleep 0.2; d=$(ls -d "$OUT"/d/*/ 2>/dev/null | head -1); [ -n "$d" ] && break; done
sleep 2
victim=$(basename "${d:-/none}"); victim=${victim%%-*}   # DIR/<pid>-<start>
kill -9 "$victim" 2>/dev/null
wait $runner; code=$?
[ "$code" = 137 ] && echo "PASS D: cupmon run exits with the program's code (137)" | pass_fail \
  || echo "FAIL D: exit code $code" | pass_fail
"$cupmon" stats "$d" >"$OUT/d.stats" 2>&1 && grep -q "CONCURRENT_KERNEL" "$OUT/d.stats" \
  && echo "PASS D: the killed program's dump is readable: $(grep CONCURRENT_KERNEL "$OUT/d.stats" | tr -s ' ')" | pass_fail \
  || { echo "FAIL D: dump not readable"; cat "$OUT/d.stats"; } | pass_fail

# E: SIGUSR2 opens and closes a window.
note "E: window on SIGUSR2"
"$cupmon" run -o "$OUT/e" --window-on-signal -- "$OUT/workload" 40 0.05 >"$OUT/e.out" 2>"$OUT/e.err" &
runner=$!
for _ in $(seq 50); do sleep 0.2; e=$(ls -d "$OUT"/e/*/ 2>/dev/null | head -1); [ -n "$e" ] && break; done
pid=$(basename "${e:-/none}"); pid=${pid%%-*}
sleep 0.5; kill -USR2 "$pid"; sleep 0.6; kill -USR2 "$pid"
wait $runner
[ -f "$e/window-0.json" ] && python3 -c "
import json,sys; w=json.load(open(sys.argv[1])); k=sum(e['kind']=='kernel' for e in w['events'])
print(('PASS' if k>0 else 'FAIL')+f' E: SIGUSR2 window holds {k} kernels')" "$e/window-0.json" | pass_fail \
  || echo "FAIL E: no window-0.json ($(tail -3 "$OUT/e.err"))" | pass_fail

fi

if want coexist; then
# F: torch.profiler (CPU+CUDA) for 5 steps in the middle of 60, plainly and under cupmon run.
note "F: torch.profiler inside cupmon run"
python3 "$here/torch_profiler_run.py" "$OUT/f_plain.json" >"$OUT/f_plain.out" 2>"$OUT/f_plain.err"
CUPMON_DEBUG=1 "$cupmon" run -o "$OUT/f" -- python3 "$here/torch_profiler_run.py" "$OUT/f_cupmon.json" >"$OUT/f.out" 2>"$OUT/f.err"
echo "exit $? $(grep -c interposed "$OUT/f.err") interposed calls: $(grep interposed "$OUT/f.err" | sort | uniq -c | sort -rn | head -12 | tr '\n' ';')" >>"$results"
grep -v interposed "$OUT/f.err" | tail -5 >>"$results"
fdump=$(ls -d "$OUT"/f/*/ | head -1)
python3 "$here/compare_kineto.py" "$OUT/f_plain.json" "$OUT/f_cupmon.json" "$cupmon" "${fdump%/}" "$OUT/f.out" | pass_fail
fi

if want clock; then
note "G: cupmon.torch.profile from plain Python (torch.profiler's clock replaces CUPTI's)"
python3 "$here/clock_check.py" "$OUT/g" 5 >"$OUT/g.out" 2>"$OUT/g.err"
grep -E '^(PASS|FAIL|INFO|SKIPPED)' "$OUT/g.out" | pass_fail
grep -q '^PASS' "$OUT/g.out" || echo "FAIL G: no check ran ($(tail -3 "$OUT/g.err" | tr '\n' ' '))" | pass_fail
fi

if want memory; then
note "H: MEMORY2 and MEMORY_POOL"
nvcc -O2 -arch=sm_90 -o "$OUT/memory" "$here/memory.cu" >"$OUT/nvcc-memory.log" 2>&1 \
  || echo "FAIL H: nvcc memory.cu ($(tail -3 "$OUT/nvcc-memory.log"))" | pass_fail
"$cupmon" run -o "$OUT/h" --kinds CONCURRENT_KERNEL,MEMCPY,MEMSET,MEMORY2,MEMORY_POOL -- "$OUT/memory" >"$OUT/h.out" 2>"$OUT/h.err"
hdump=$(ls -d "$OUT"/h/*/ | head -1)
python3 "$here/memory_check.py" "$cupmon" "${hdump%/}" "$OUT/h.out" | pass_fail
fi

if want ranks; then
note "I: torchrun with 2 ranks on one GPU (gloo), windowed from another shell"
"$cupmon" run -o "$OUT/i" -- torchrun --nproc-per-node 2 "$here/ddp_train.py" 1500 0.02 >"$OUT/i.out" 2>"$OUT/i.err" &
runner=$!
for _ in $(seq 100); do sleep 0.2; [ "$(ls -d "$OUT"/i/rank*/ 2>/dev/null | wc -l)" = 2 ] && break; done
# Past the ranks' start-up (gloo rendezvous, DDP's first broadcast): training runs.
sleep 10
"$cupmon" window "$OUT/i" --for 1s --timeout 30s >"$OUT/i.window" 2>&1
"$cupmon" window "$OUT/i" --steps 3 --timeout 30s >"$OUT/i.steps" 2>&1
"$cupmon" status "$OUT/i" >"$OUT/i.status" 2>&1
wait $runner
cat "$OUT/i.window" "$OUT/i.steps" "$OUT/i.status" >>"$OUT/i.out"
python3 "$here/ranks_check.py" "$cupmon" "$OUT/i" "$OUT/i.window" "$OUT/i.steps" | pass_fail
fi

if want demo; then
note "J: the recording built into cupmon demo"
# The recording as users get it (segmented dump). A crash with torch.profiler's
# schedule is a FAIL of its own; the demo is then recorded without a schedule.
if python3 -X faulthandler "$here/demo_record.py" "$OUT/j" >"$OUT/j.out" 2>"$OUT/j.err"; then
  echo "PASS J: demo_record.py with a torch.profiler schedule" | pass_fail
else
  echo "FAIL J: demo_record.py with a torch.profiler schedule exited $? ($(grep -m3 -E 'Fatal|File' "$OUT/j.err" | tr '\n' ' '))" | pass_fail
  rm -rf "$OUT/j"
  DEMO_NO_SCHEDULE=1 python3 -X faulthandler "$here/demo_record.py" "$OUT/j" >>"$OUT/j.out" 2>>"$OUT/j.err"
fi
jdump=$OUT/j/dump
[ -f "$jdump/cupti_monitor_meta.bin" ] || jdump=
[ -n "$jdump" ] && "$cupmon" stats "$jdump" >"$OUT/j.stats" 2>&1 \
  && echo "PASS J: demo recorded: $(grep -E 'CONCURRENT_KERNEL|RUNTIME' "$OUT/j.stats" | tr -s ' ' | tr '\n' ';')" | pass_fail \
  || echo "FAIL J: no demo dump ($(tail -3 "$OUT/j.err" | tr '\n' ' '))" | pass_fail
[ -n "$jdump" ] && tar -czf "$FINAL/demo-recording.tar.gz" -C "$OUT/j" dump cpu_trace.json 2>>"$OUT/j.err"
fi

if want recorder; then
note "K: flight recorder: segments, _exit, prompt exit"
"$cupmon" run -o "$OUT/k" -- "$OUT/workload" 20 0.01 >"$OUT/k.out" 2>"$OUT/k.err"
kdump=$(ls -d "$OUT"/k/*/ | head -1)
ls "$kdump/segments" >"$OUT/k.ls" 2>&1
python3 "$here/recorder_check.py" "$cupmon" "${kdump%/}" "$OUT" | pass_fail
fi

if want accounting; then
note "L: every kernel accounted for: cupmon's launch counter against the workload's own count"
nvcc -O2 -arch=sm_90 -std=c++17 -o "$OUT/empty_kernel" "$root/bench/gpu/empty_kernel.cu" >"$OUT/nvcc-empty.log" 2>&1 \
  || echo "FAIL L: nvcc empty_kernel.cu ($(tail -3 "$OUT/nvcc-empty.log"))" | pass_fail
# A modest rate (well below where CUPTI stalls): the counts must agree to the kernel.
for spec in "loop:--launches 50000" \
            "eager:--burst 8 --threads 4 --graph 0 --rate 100000" \
            "graph:--burst 8 --threads 4 --graph 256 --vary --rate 200000"; do
  name=${spec%%:*}
  # shellcheck disable=SC2086  # the workload's arguments, split on purpose
  "$cupmon" run -o "$OUT/l-$name" -- "$OUT/empty_kernel" ${spec#*:} >"$OUT/l-$name.out" 2>"$OUT/l-$name.err"
  echo "exit $? $(tail -4 "$OUT/l-$name.err" | tr '\n' ' ')" >>"$results"
  ldump=$(ls -d "$OUT/l-$name"/*/ 2>/dev/null | head -1)
  python3 "$here/accounting_check.py" "L-$name" "${ldump%/}" "$OUT/l-$name.out" | pass_fail
done
# F's run: torch.profiler's Kineto subscribes to CUPTI's callbacks inside cupmon run.
fdump=$(ls -d "$OUT"/f/*/ 2>/dev/null | head -1)
if [ -n "$fdump" ]; then
  python3 "$here/accounting_check.py" "L-coexist" "${fdump%/}" | pass_fail
  grep -E "interposed cuptiSubscribe|kernels:" "$OUT/f.err" | head -3 >>"$results"
else
  echo "SKIPPED L-coexist: no dump of part F (run the coexist part too)" | pass_fail
fi
fi

save_logs
passed=$(grep -c '^PASS' "$results"); failed=$(grep -c '^FAIL' "$results")
echo "SUMMARY: $passed passed, $failed failed (details in $results)"
[ "$failed" = 0 ]
