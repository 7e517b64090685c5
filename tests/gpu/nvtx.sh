#!/bin/bash
# NVTX ranges on a real GPU, no code change (run through the `device` tool):
#  N1: C++ with the toolkit's <nvtx3/nvToolsExt.h> (nvcc): push/pop, a domain with a
#      registered string, start/end; each kernel must land in its range; the ranges as
#      slices on the launching thread (nested, holding their launches), marks, domain,
#      named category and color args, a range open at the window's end.
#      (N1 and N2 also check that `cupmon decode` draws the same slices and marks and
#      that `export --exact` draws none: tests/gpu/nvtx_check.py.)
#  N2: torch.cuda.nvtx.range and .mark, and the `nvtx` package when .gpu/wheels/nvtx-*.whl is
#      there (download it with `pip download --no-deps --only-binary=:all:
#      --python-version 3.12 --platform manylinux2014_x86_64 -d .gpu/wheels nvtx`).
#  N3: NVTX_INJECTION64_PATH already set (as Nsight Systems sets it): kept, said once.
# Then the cost per push/pop pair: bench/gpu/nvtx_cost.sh.
# Needs .gpu/cupmon and .gpu/libcupmon_inject.so (scripts/gpu-bundle.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FINAL=${OUT:-$root/tests/gpu/out}
OUT=${GPU_SCRATCH:-/tmp/cupmon-nvtx}
rm -rf "$OUT"; mkdir -p "$OUT" "$FINAL"
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
results=$FINAL/nvtx-results.txt
: >"$results"
say() { tee -a "$results"; }
# A check that crashes prints no FAIL line of its own: its exit status is judged too.
judge() {
  "$@" 2>&1 | say
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || echo "FAIL $(basename "$2") $4: exited $rc" | say
}
echo "== machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(nvcc --version | tail -1)" | say

wheel=$(ls "$root"/.gpu/wheels/nvtx-*.whl 2>/dev/null | head -1)
if [ -n "$wheel" ]; then
  pip install --quiet --no-deps --no-index --target /tmp/nvtx-site "$wheel" >"$OUT/pip.log" 2>&1 \
    && export PYTHONPATH=/tmp/nvtx-site${PYTHONPATH:+:$PYTHONPATH} \
    || echo "FAIL pip install $wheel ($(tail -2 "$OUT/pip.log"))" | say
else
  echo "SKIPPED: no .gpu/wheels/nvtx-*.whl: N2 runs without the nvtx package" | say
fi

echo "== N1: C++ with <nvtx3/nvToolsExt.h>, 3 steps, a window over the run" | say
if nvcc -O2 -arch=sm_90 -o "$OUT/nvtx_ranges" "$here/nvtx_ranges.cu" >"$OUT/nvcc.log" 2>&1; then
  "$cupmon" run -o "$OUT/n1" --window-at 0 --window-for 600 -- "$OUT/nvtx_ranges" 3 >"$OUT/n1.out" 2>"$OUT/n1.err"
  echo "exit $? $(tail -3 "$OUT/n1.err" | tr '\n' ' ')" >>"$results"
  judge python3 "$here/nvtx_check.py" "$cupmon" N1 "$OUT/n1" forward=9 "layer 7=6" backward=12 optimizer=3 \
    slice:forward "slice:layer 7" slice:backward slice:optimizer "nested:forward>layer 7" \
    mark:checkpoint "mark:step end" "arg:layer 7:Domain=mylib" "arg:layer 7:Category=compute" \
    "arg:layer 7:Color=#00ff00" "arg:step end:Domain=mylib" "arg:step end:Category=compute" \
    "arg:step end:Color=#123456" "open:left open"
else
  echo "FAIL N1: nvcc ($(tail -3 "$OUT/nvcc.log" | tr '\n' ' '))" | say
fi

echo "== N2: torch.cuda.nvtx.range (and the nvtx package), a window over the run" | say
"$cupmon" run -o "$OUT/n2" --window-at 0 --window-for 600 -- python3 "$here/nvtx_torch.py" 5 >"$OUT/n2.out" 2>"$OUT/n2.err"
echo "exit $? $(grep -v Warning "$OUT/n2.err" | tail -3 | tr '\n' ' ') $(grep INFO "$OUT/n2.out")" >>"$results"
expect=(forward=+ backward=+ empty=0 slice:forward slice:backward slice:empty mark:step)
python3 -c "import nvtx" 2>/dev/null && expect+=("layer 7=+" "slice:layer 7" "arg:layer 7:Domain=mylib" \
  "arg:layer 7:Category=io" "arg:layer 7:Color=#" "mark:nvtx step" "arg:nvtx step:Domain=mylib")
judge python3 "$here/nvtx_check.py" "$cupmon" N2 "$OUT/n2" "${expect[@]}"

echo "== N3: NVTX_INJECTION64_PATH set by the user is kept" | say
NVTX_INJECTION64_PATH=/nonexistent/libother-tool.so "$cupmon" run -o "$OUT/n3" -- "$OUT/nvtx_ranges" 1 >"$OUT/n3.out" 2>"$OUT/n3.err"
n=$(grep -c "NVTX_INJECTION64_PATH is set (/nonexistent/libother-tool.so)" "$OUT/n3.err")
[ "$n" = 1 ] && echo "PASS N3: said once, not overridden" | say || echo "FAIL N3: said $n times: $(tail -3 "$OUT/n3.err")" | say

echo "== cost per push/pop pair" | say
bash "$root/bench/gpu/nvtx_cost.sh" "$OUT/cost" 2>&1 | say
for f in "$OUT"/*.err; do echo "---- $(basename "$f")"; tail -c 3000 "$f"; done >"$FINAL/nvtx-logs.txt"
grep -q '^FAIL' "$results" && exit 1 || exit 0
