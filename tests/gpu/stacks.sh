#!/bin/bash
# Issue 33 on the GPU: which line of Python launched each kernel.
#   1. eager: a small model's training steps under `cupmon run`, the last 3 profiled by
#      torch.profiler with_stack=True in the same process; per kernel (correlation id),
#      cupmon's function must be torch.profiler's innermost user frame (its trace's
#      python_function events, and the op's stack in prof.events(): torch names a frame
#      by its function's first line), and cupmon's line the one a record_function label
#      (on the marked line itself) puts the launch on.
#   2. graph: a decode step captured in a torch.cuda.CUDAGraph and replayed: >= 99 % of
#      kernel time attributed to a line of the workload (the capture's), and no stack
#      read for the replays (reads counted with CUPMON_PYTHON_STACK_TIMING=1 equal in
#      runs of 2000 and 200 replays).
#   3. compile: torch.compile(mode="reduce-overhead"), the same check.
#   4. cost: ns added per launch by stacks (goal <= 0.3 us), paired in one process under
#      `cupmon run`: blocks of a launch-bound loop with stacks on and off in turn
#      (bench/stacks/paired.py), from the loop's frame (judged) and 30 frames deeper
#      (a model's nesting, printed; again with CUPMON_PYTHON_STACK_DEPTH=16, printed),
#      per replay of a one-kernel CUDA graph from both depths (printed), and the stack
#      read timed inside the program (CUPMON_PYTHON_STACK_TIMING=1) in the model's
#      training steps and the loop (printed),
#      and in the model's training step (printed:
#      STACKS_MODEL_BLOCK steps a block, 50); and, as information, whole runs without cupmon,
#      with CUPMON_PYTHON_STACKS=0 and with stacks. STACKS_BLOCK (1000 steps of 10
#      launches) and STACKS_PAIRS (40 rounds of 3 blocks): about 12 s per paired run.
#   5. retention: the loop's 10 M launches under --keep 16MiB: the launch stacks
#      (segments/seg-N.stacks) retired with their segments, the dump within its budget.
#   6. backward: training steps under torch.autograd.profiler.emit_nvtx(): >= 90 % of
#      the autograd engine's kernel time is "backward of" the forward line that made it.
#   7. the stack read timed in the program alone (part 4's last runs), TIMED_ROUNDS (5)
#      rounds of the model and the loop: how much one run's figure varies; with
#      TIMED_LIBS ("label:library ...") builds take turns in each round, an A/B of a
#      change to the read (not in the default parts).
# Needs .gpu/cupmon and .gpu/libcupmon_inject.so (scripts/gpu-bundle.sh), python3 with
# torch. Results in $OUT/results.txt (PASS/FAIL lines), logs in $OUT/logs.txt.
#
# usage: bash tests/gpu/stacks.sh [STEPS_LOOP]   (PARTS="6" bash ... runs only part 6)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FINAL=${OUT:-$root/tests/gpu/out-stacks}
work=${GPU_SCRATCH:-/tmp/cupmon-stacks}
rm -rf "$work"; mkdir -p "$work" "$FINAL"
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
export PYTHONUNBUFFERED=1
results=$FINAL/results.txt
# A check that crashes (a missing file, a traceback) prints no FAIL line of its own:
# its exit status is judged too.
judge() {
  "$@" 2>&1 | tee -a "$results"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || echo "FAIL $(basename "$2") $3: exited $rc" | tee -a "$results"
}
: >"$results"
wl=$here/stacks_workload.py
check=$here/stacks_check.py
loop=${1:-${STACKS_LOOP:-100000}}
note() { echo "== $*" | tee -a "$results"; }
parts=" ${PARTS:-1 2 3 4 5 6} "
want() { [[ $parts == *" $1 "* ]]; }
logs() { for f in "$work"/*.err; do [ -f "$f" ] && { echo "---- $(basename "$f")"; tail -c 4000 "$f"; }; done >"$FINAL/logs.txt"; }
trap 'logs; exit 124' TERM INT
note "machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__)' 2>&1)"

run() { # run NAME MODE STEPS [ARG]: cupmon run, then the dump's trace with stack args
  local name=$1; shift
  "$cupmon" run -o "$work/$name" -- python3 "$wl" "$@" >"$work/$name.out" 2>"$work/$name.err"
  echo "$name: exit $? $(tail -1 "$work/$name.out")" >>"$results"
  local dump; dump=$(ls -d "$work/$name"/*/ | head -1)
  "$cupmon" decode "$dump" --format chrome -o "$work/$name.trace.json.gz" >>"$work/$name.err" 2>&1
  "$cupmon" stats --by-line --top 8 "$dump" >"$work/$name.lines.txt" 2>>"$work/$name.err"
  sed -n '/^top source lines/,$p' "$work/$name.lines.txt" | head -40 >>"$results"
}

# The stack read timed inside the program (CUPMON_PYTHON_STACK_TIMING=1): the model's
# training steps, whose paired figure is noisier than its effect, and the loop for
# comparison with its paired figure.
# timed_reads [LABEL [INJECTION LIBRARY]]: another build's library for an A/B (part 7).
timed_reads() {
  local what name label=${1:+$1, } lib=${2:-$CUPMON_INJECT_LIBRARY}
  for what in "model:eager 300" "loop:loop $loop"; do
    name=${what%%:*}
    # shellcheck disable=SC2086
    CUPMON_INJECT_LIBRARY=$lib CUPMON_PYTHON_STACK_TIMING=1 "$cupmon" run -o "$work/timed-$name" \
      -- python3 "$wl" ${what#*:} >"$work/timed-$name.out" 2>"$work/timed-$name.err"
    python3 "$check" timing "$(ls -d "$work/timed-$name"/*/ | head -1)" "$label$name" >>"$results" 2>&1 \
      || echo "INFO stack read timed, $label$name: no meta (see logs.txt)" >>"$results"
    rm -rf "$work/timed-$name"
  done
}

if want 1; then
note "1. eager: cupmon's line per kernel against torch.profiler with_stack"
run eager eager 20 "$work/torch_with_stack.json"
judge python3 "$check" compare "$work/torch_with_stack.json" "$work/eager.trace.json.gz" "$wl"
# Both sides of the comparison come back (extra.tar.gz) for a failure to be read here.
mkdir -p "$FINAL/stacks-eager"
gzip -c "$work/torch_with_stack.json" >"$FINAL/stacks-eager/torch_with_stack.json.gz"
cp "$work/torch_with_stack.json.lines.json" "$work/eager.trace.json.gz" "$FINAL/stacks-eager/" 2>/dev/null
fi

if want 2; then
note "2. CUDA graph replays"
# Stack reads counted (CUPMON_PYTHON_STACK_TIMING=1): the replays must read none, so a
# run of 200 replays reads as many as the run of 2000.
CUPMON_PYTHON_STACK_TIMING=1 run graph graph 2000
judge python3 "$check" coverage "$work/graph.trace.json.gz" "$wl"
CUPMON_PYTHON_STACK_TIMING=1 "$cupmon" run -o "$work/graph-few" -- python3 "$wl" graph 200 \
  >"$work/graph-few.out" 2>"$work/graph-few.err"
judge python3 "$check" replay_reads "$(ls -d "$work"/graph/*/ | head -1)" 2000 \
  "$(ls -d "$work"/graph-few/*/ | head -1)" 200
fi

if want 3; then
note "3. torch.compile reduce-overhead"
run compile compile 500
judge python3 "$check" coverage "$work/compile.trace.json.gz" "$wl"
fi

if want 4; then
note "4. cost per launch ($loop steps of 10 launches)"
# Interleaved rounds (COST_ROUNDS, 3): one run each is within the machine's noise.
base= off= on=
for r in $(seq 1 "${COST_ROUNDS:-3}"); do
  python3 "$wl" loop "$loop" >"$work/base-$r.json" 2>"$work/base-$r.err"
  CUPMON_PYTHON_STACKS=0 "$cupmon" run -o "$work/off-$r" -- python3 "$wl" loop "$loop" \
    >"$work/off-$r.json" 2>"$work/off-$r.err"
  "$cupmon" run -o "$work/on-$r" -- python3 "$wl" loop "$loop" >"$work/on-$r.json" 2>"$work/on-$r.err"
  base+="${base:+,}$work/base-$r.json" off+="${off:+,}$work/off-$r.json" on+="${on:+,}$work/on-$r.json"
  rm -rf "$work/off-$r" "$work/on-$r"
done
paired=
for depth in 0 30; do
  "$cupmon" run -o "$work/paired-$depth" -- python3 "$wl" paired "${STACKS_BLOCK:-1000}" "$depth" \
    >"$work/paired-$depth.json" 2>"$work/paired-$depth.err"
  paired+=" $work/paired-$depth.json"
  rm -rf "$work/paired-$depth"
done
# The same 30 frames deeper with stacks kept to their innermost 16 frames.
CUPMON_PYTHON_STACK_DEPTH=16 "$cupmon" run -o "$work/paired-30-cap16" -- python3 "$wl" paired \
  "${STACKS_BLOCK:-1000}" 30 >"$work/paired-30-cap16.json" 2>"$work/paired-30-cap16.err"
paired+=" $work/paired-30-cap16.json"
rm -rf "$work/paired-30-cap16"
# Per CUDA-graph replay (the issue's goal: zero), from the loop's frame and 30 deeper.
for depth in 0 30; do
  "$cupmon" run -o "$work/paired-graph-$depth" -- python3 "$wl" paired_graph \
    "${STACKS_BLOCK:-1000}" "$depth" >"$work/paired-graph-$depth.json" 2>"$work/paired-graph-$depth.err"
  paired+=" $work/paired-graph-$depth.json"
  rm -rf "$work/paired-graph-$depth"
done
"$cupmon" run -o "$work/paired-model" -- python3 "$wl" paired_model "${STACKS_MODEL_BLOCK:-50}" \
  >"$work/paired-model.json" 2>"$work/paired-model.err"
paired+=" $work/paired-model.json"
rm -rf "$work/paired-model"
timed_reads
cp $paired "$FINAL/" 2>/dev/null
# shellcheck disable=SC2086
judge python3 "$check" cost "$base" "$off" "$on" $paired
fi

if want 5; then
note "5. retention: 10 M launches (80 MB of launch stacks) under --keep 16MiB"
"$cupmon" run -o "$work/keep" --keep 16MiB --segment-size 1MiB -- python3 "$wl" loop 1000000 \
  >"$work/keep.json" 2>"$work/keep.err"
judge python3 "$check" retention "$(ls -d "$work"/keep/*/ | head -1)" $((16 << 20)) $((2 << 20))
fi

if want 6; then
note "6. backward kernels under emit_nvtx: the forward line that made them"
run backward backward 30
judge python3 "$check" backward "$work/backward.trace.json.gz" "$wl"
python3 -c 'import json,sys; print("autograd_backward_ops:", json.loads(open(sys.argv[1],"rb").read()[16:]).get("autograd_backward_ops"))' \
  "$(ls -d "$work"/backward/*/ | head -1)/cupti_monitor_meta.bin" >>"$results" 2>&1
fi
if want 7; then
note "7. the stack read timed in the program, ${TIMED_ROUNDS:-5} rounds of the model and the loop"
# TIMED_LIBS="this:.gpu/libcupmon_inject.so before:.gpu/before/libcupmon_inject.so":
# builds taking turns in each round (an A/B of a change to the read).
for _ in $(seq 1 "${TIMED_ROUNDS:-5}"); do
  for build in ${TIMED_LIBS:-this:$CUPMON_INJECT_LIBRARY}; do
    timed_reads "${build%%:*}" "$(cd "$root" && realpath "${build#*:}")"
  done
done
judge python3 "$check" timed_summary "$results"
fi
logs
grep -c '^FAIL' "$results" >/dev/null && exit 1 || exit 0
