#!/bin/bash
# The added cost per NVTX push/pop pair (run by tests/gpu/nvtx.sh on the GPU machine,
# or alone: bench/gpu/nvtx_cost.sh SCRATCH_DIR): the same program with no NVTX tool,
# under `cupmon run` (no window: the always-on case), under `cupmon run` with a
# trace window over the run (names logged, external correlation on), and under
# Nsight Systems' NVTX tracing when `nsys` is on the machine. Three runs each.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-/tmp/cupmon-nvtx-cost}
mkdir -p "$out"
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
n=${NVTX_PAIRS:-1000000}
nvcc -O2 -arch=sm_90 -o "$out/nvtx_cost" "$here/nvtx_cost.cu" >"$out/nvcc.log" 2>&1 \
  || { echo "FAIL nvtx_cost: nvcc ($(tail -3 "$out/nvcc.log" | tr '\n' ' '))"; exit 1; }
# The parts of a pair, measured alone: CUPTI's external correlation push/pop and the
# clock (nvtx_parts_cost.cu). CUPTI's headers and library from the toolkit.
cuda=${CUDA_HOME:-/usr/local/cuda}
inc= lib=
for d in "$cuda/targets/x86_64-linux/include" "$cuda/extras/CUPTI/include" "$cuda/include"; do
  [ -z "$inc" ] && [ -f "$d/cupti.h" ] && inc=$d
done
for d in "$cuda/targets/x86_64-linux/lib" "$cuda/lib64" "$cuda/extras/CUPTI/lib64"; do
  [ -z "$lib" ] && compgen -G "$d/libcupti.so*" >/dev/null && lib=$d
done
if [ -n "$inc" ] && [ -n "$lib" ] && nvcc -O2 -arch=sm_90 -o "$out/nvtx_parts_cost" \
    "$here/nvtx_parts_cost.cu" -I"$inc" -L"$lib" -lcupti -Xlinker -rpath="$lib" >>"$out/nvcc.log" 2>&1; then
  for i in 1 2 3; do echo "parts alone:         $(env -u NVTX_INJECTION64_PATH "$out/nvtx_parts_cost" "$n")"; done
else
  echo "SKIPPED: the parts of a pair: CUPTI's headers or library not found under $cuda, or nvcc failed (see nvcc.log)"
fi
for i in 1 2 3; do
  echo "no NVTX tool:        $(env -u NVTX_INJECTION64_PATH "$out/nvtx_cost" "$n")"
  echo "cupmon run:          $("$cupmon" run -o "$out/run$i" -- "$out/nvtx_cost" "$n" 2>/dev/null)"
  echo "cupmon run, window:  $("$cupmon" run -o "$out/win$i" --window-at 0 --window-for 600 -- "$out/nvtx_cost" "$n" 2>/dev/null)"
  if command -v nsys >/dev/null; then
    echo "nsys -t nvtx,cuda:   $(nsys profile -t nvtx,cuda -o "$out/nsys$i" --force-overwrite true "$out/nvtx_cost" "$n" 2>/dev/null | grep pairs)"
  fi
done
command -v nsys >/dev/null || echo "SKIPPED: nsys is not on this machine: no Nsight Systems comparison"
