#!/bin/bash
# cupmon under each CUPTI release, with the real libcupti from NVIDIA's pip wheels: the
# rows of the README's "Supported versions" table. For each CUPTI version it points
# cupmon at that libcupti (CUPMON_LIBCUPTI) and checks, against the program's own truth
# (tests/gpu/workload.cu's JSON line; tests/gpu/check.py and matrix_check.py):
#   record  every kernel, copy and memset counted, named, timed (a 2 ms kernel against
#           CUDA events) and on its stream; the dump names that libcupti and its version
#   window  a trace window over the run with runtime and driver calls, each GPU op with
#           its launching call, the Chrome trace with its arrows
#   graph   a CUDA graph captured once and launched twice: its kernels and memset with
#           graph and node ids, each from a cudaGraphLaunch call
# and prints one PASS/FAIL line per check, then a table (version, library, runtime,
# record, window, graph). Nothing is fetched at run time: the device machine has no network.
#
# CUDA 12 rows run a program built for CUDA 12's runtime: nvcc (the machine's, CUDA 13)
# compiles workload.cu against the runtime headers of the `nvidia-cuda-runtime-cu12`
# wheel of the same minor and links that wheel's libcudart.so.12 (`-cudart none`, the
# file itself through -Xlinker, and an rpath), so every API call the program makes, and every callback id
# CUPTI reports, is CUDA 12's. Only the compiler and its crt/ headers are 13's. NVIDIA does
# not document that mix; the row does not assume it works, it checks it: the program must
# report cudaRuntimeGetVersion 12.x and its own truth must match. Should nvcc refuse the
# CUDA 12 headers, the script builds with the toolkit's headers against the same
# libcudart.so.12 and says so (INFO line, "build" column). Driver 580 runs CUDA 12
# programs. CUDA 13 rows run workload.cu built by the toolkit (CUDA 13.0) as run.sh does.
#
# Setup, HERE (with network), once: the wheels, then a small bundle per version
#   tests/gpu/cupti_matrix.sh prepare 12.4.127 12.6.80 ...    (or: prepare all)
# which runs, per version (exact commands):
#   python3 -m pip download --no-deps -d .whl nvidia-cuda-cupti-cu12==V     (12.x)
#   python3 -m pip download --no-deps -d .whl nvidia-cuda-runtime-cu12==R   (12.x, R below)
#   python3 -m pip download --no-deps -d .whl nvidia-cuda-cupti==V          (13.x)
# and packs libcupti (and for 12.x libcudart.so.12 and the runtime headers) into
# .cupti-matrix/cupti-V.tar.gz (git-ignored). A wheel is 9-14 MB (libcupti and the
# profiler libraries); a bundle 2.2-3.3 MB, so every version fits one device call.
# Also needed: .gpu/ (scripts/gpu-bundle.sh).
#
# On the device machine (carry .gpu and .cupti-matrix):
#   bash tests/gpu/cupti_matrix.sh 12.4.127 12.6.80 12.8.90 12.9.79 13.0.85 13.1.115 \
#     13.2.86 13.3.75 13.4.92 13.5.25
# or split the list over two calls. Results: $OUT/cupti-matrix.txt (check lines and the
# table) and $OUT/cupti-matrix-logs.txt. Exit 1 if any check failed.
#
#   tests/gpu/cupti_matrix.sh --dry-run VERSION...|all   the plan and an empty table, no GPU
#   tests/gpu/cupti_matrix.sh --list                     the versions it knows
#   tests/gpu/cupti_matrix.sh --table RESULTS VERSION... the table again from saved lines
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bundles=${CUPTI_MATRIX_DIR:-$root/.cupti-matrix}
layouts=$root/tools/cupti-tables/cupti_layouts.json

# CUPTI wheel version -> the nvidia-cuda-runtime-cu12 wheel of the same minor (12.x
# rows) or "toolkit" (13.x rows: the machine's CUDA 13.0).
declare -A RUNTIME=(
  [12.0.146]=12.0.107 [12.2.142]=12.2.140 [12.4.127]=12.4.127 [12.6.80]=12.6.77
  [12.8.90]=12.8.90 [12.9.79]=12.9.79
  [13.0.85]=toolkit [13.1.115]=toolkit [13.2.86]=toolkit [13.3.75]=toolkit
  [13.4.92]=toolkit [13.5.25]=toolkit
)
KNOWN="12.0.146 12.2.142 12.4.127 12.6.80 12.8.90 12.9.79 13.0.85 13.1.115 13.2.86 13.3.75 13.4.92 13.5.25"

usage() {
  sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

# The API version CUPTI V's headers define (measured by tools/cupti-tables).
api_of() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["api_version"])' \
    "$layouts" "$1" 2>/dev/null
}

versions_of() {
  local v out=()
  for v in "$@"; do
    if [ "$v" = all ]; then out+=($KNOWN); continue; fi
    if [ -z "${RUNTIME[$v]+x}" ]; then
      echo "cupti_matrix: unknown CUPTI version '$v'; known: $KNOWN (or all)" >&2
      return 2
    fi
    out+=("$v")
  done
  [ ${#out[@]} -gt 0 ] || { echo "cupti_matrix: no CUPTI version given" >&2; return 2; }
  echo "${out[@]}"
}

prepare() {
  local v wheel rt tmp
  mkdir -p "$root/.whl" "$bundles"
  for v in "$@"; do
    tmp=$(mktemp -d)
    if [ "${RUNTIME[$v]}" = toolkit ]; then
      python3 -m pip download --no-deps -q -d "$root/.whl" "nvidia-cuda-cupti==$v" || return 1
      wheel=$(ls "$root"/.whl/nvidia_cuda_cupti-"$v"-*.whl)
    else
      rt=${RUNTIME[$v]}
      python3 -m pip download --no-deps -q -d "$root/.whl" "nvidia-cuda-cupti-cu12==$v" || return 1
      python3 -m pip download --no-deps -q -d "$root/.whl" "nvidia-cuda-runtime-cu12==$rt" || return 1
      wheel=$(ls "$root"/.whl/nvidia_cuda_cupti_cu12-"$v"-*.whl)
    fi
    python3 - "$wheel" "$tmp" "${RUNTIME[$v]}" "$root/.whl" <<'EOF' || return 1
import glob, os, sys, zipfile
wheel, out, rt, whl = sys.argv[1:5]
def take(path, keep):
    with zipfile.ZipFile(path) as z:
        for n in z.namelist():
            dest = keep(n)
            if dest:
                os.makedirs(os.path.dirname(os.path.join(out, dest)), exist_ok=True)
                with open(os.path.join(out, dest), "wb") as f:
                    f.write(z.read(n))
take(wheel, lambda n: "lib/" + os.path.basename(n) if "/lib/libcupti.so" in n else None)
if rt != "toolkit":
    rw = glob.glob(os.path.join(whl, f"nvidia_cuda_runtime_cu12-{rt}-*.whl"))[0]
    take(rw, lambda n: ("cudart/lib/" + os.path.basename(n) if n.endswith("/lib/libcudart.so.12")
                        else "cudart/include/" + n.split("/include/", 1)[1] if "/include/" in n and not n.endswith("/")
                        else None))
EOF
    tar -czf "$bundles/cupti-$v.tar.gz" -C "$tmp" . && rm -rf "$tmp"
    echo "$v: $(du -h "$bundles/cupti-$v.tar.gz" | cut -f1) $bundles/cupti-$v.tar.gz (runtime ${RUNTIME[$v]})"
  done
  echo "total: $(du -ch "$bundles"/cupti-*.tar.gz | tail -1 | cut -f1)"
}

# One row's results as "PASS n" / "FAIL k/n" / "-", from the lines of $results.
cell() {
  local v=$1 group=$2 pass fail
  pass=$(grep -c "^PASS $v $group" "$results")
  fail=$(grep -c "^FAIL $v $group" "$results")
  if [ "$fail" -gt 0 ]; then echo "FAIL $fail/$((pass + fail))"
  elif [ "$pass" -gt 0 ]; then echo "PASS $pass"
  else echo "-"; fi
}

table() {
  local v
  printf '%-10s %-8s %-12s %-9s %-10s %-10s %-10s\n' CUPTI API runtime build record window graph
  for v in $versions; do
    printf '%-10s %-8s %-12s %-9s %-10s %-10s %-10s\n' "$v" "$(api_of "$v")" \
      "${RUNTIME[$v]}" "${BUILD[$v]:--}" "$(cell "$v" record)" "$(cell "$v" window)" \
      "$(cell "$v" graph)"
  done
}

dry=0
case "${1:-}" in
  ""|-h|--help) usage ;;
  --list) echo "$KNOWN"; exit 0 ;;
  prepare) shift; list=$(versions_of "$@") || exit 2; prepare $list; exit $? ;;
  --dry-run) dry=1; shift ;;
  --table)
    results=${2:-}; [ -f "$results" ] || { echo "cupti_matrix: --table needs a results file" >&2; exit 2; }
    shift 2; versions=$(versions_of "$@") || exit 2
    declare -A BUILD=(); table; exit 0 ;;
esac
versions=$(versions_of "$@") || exit 2

FINAL=${OUT:-$root/tests/gpu/out}
scratch=${GPU_SCRATCH:-/tmp/cupti-matrix}
cupmon=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT_LIBRARY=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
export PYTHONUNBUFFERED=1
mkdir -p "$FINAL"
results=$FINAL/cupti-matrix.txt
logs=$FINAL/cupti-matrix-logs.txt
: >"$results"
declare -A BUILD=()
say() { echo "$*" | tee -a "$results"; }

if [ $dry = 1 ]; then
  say "== dry run: nothing is built or run"
  for v in $versions; do
    api=$(api_of "$v")
    have=missing; [ -f "$bundles/cupti-$v.tar.gz" ] && have=present
    if [ "${RUNTIME[$v]}" = toolkit ]; then program="workload built by the toolkit's nvcc (CUDA 13)"
    else program="workload built against nvidia-cuda-runtime-cu12 ${RUNTIME[$v]} (libcudart.so.12)"; fi
    say "PLAN $v: API version ${api:-unknown}; bundle $bundles/cupti-$v.tar.gz ($have); $program;"
    say "  CUPMON_LIBCUPTI=<bundle>/lib/libcupti.so.${v%%.*} cupmon run -o DIR --window-at 0 --window-for 600 -- workload 4"
    say "  check.py (record, window), matrix_check.py (record, graph)"
    BUILD[$v]=dry
  done
  say "== table"
  table | tee -a "$results"
  exit 0
fi

rm -rf "$scratch"; mkdir -p "$scratch"
: >"$logs"
trap 'for f in "$scratch"/*/*.err "$scratch"/*/*.log; do [ -f "$f" ] && { echo "---- $f"; tail -c 4000 "$f"; }; done >>"$logs"' EXIT
say "== machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(nvcc --version | tail -1)"
[ -x "$cupmon" ] || { say "FAIL missing $cupmon (scripts/gpu-bundle.sh)"; exit 1; }
nvcc -O2 -arch=sm_90 -std=c++17 -o "$scratch/workload13" "$here/workload.cu" >"$scratch/nvcc13.log" 2>&1 \
  || say "FAIL nvcc workload.cu for CUDA 13 ($(tail -2 "$scratch/nvcc13.log" | tr '\n' ' '))"

for v in $versions; do
  api=$(api_of "$v"); major=${v%%.*}; d=$scratch/$v
  mkdir -p "$d/lib"
  say "== CUPTI $v (API version $api), runtime ${RUNTIME[$v]}"
  if ! tar -xzf "$bundles/cupti-$v.tar.gz" -C "$d" 2>"$d/tar.err"; then
    for g in record window graph; do say "FAIL $v $g: no bundle $bundles/cupti-$v.tar.gz (run prepare)"; done
    continue
  fi
  lib=$d/lib/libcupti.so.$major
  if [ "${RUNTIME[$v]}" = toolkit ]; then
    program=$scratch/workload13; rt_major=13; BUILD[$v]=toolkit
  else
    program=$d/workload12; rt_major=12; rt=$d/cudart
    # First CUDA 12's own runtime headers; if nvcc refuses them, the toolkit's.
    if nvcc -O2 -arch=sm_90 -std=c++17 -I"$rt/include" -cudart none -Xlinker "$rt/lib/libcudart.so.12" \
         -Xlinker -rpath="$rt/lib" -o "$program" "$here/workload.cu" >"$d/nvcc.log" 2>&1; then
      BUILD[$v]=cu12-hdr
    elif nvcc -O2 -arch=sm_90 -std=c++17 -cudart none -Xlinker "$rt/lib/libcudart.so.12" \
         -Xlinker -rpath="$rt/lib" -o "$program" "$here/workload.cu" >>"$d/nvcc.log" 2>&1; then
      BUILD[$v]=13-hdr
      say "INFO $v: nvcc refused CUDA 12's runtime headers ($(grep -m1 error "$d/nvcc.log")); built with the toolkit's headers against libcudart.so.12"
    else
      BUILD[$v]=failed
      for g in record window graph; do say "FAIL $v $g: could not build the CUDA 12 program ($(grep -m1 error "$d/nvcc.log"))"; done
      continue
    fi
    say "INFO $v: $(readelf -d "$program" | grep -o 'libcudart[^]]*' | head -1) -> $(ldd "$program" | grep libcudart | awk '{print $3}')"
  fi
  CUPMON_LIBCUPTI=$lib "$cupmon" run -o "$d/run" --window-at 0 --window-for 600 -- "$program" 4 \
    >"$d/run.out" 2>"$d/run.err"
  say "INFO $v: cupmon run exit $? $(grep -m1 -E 'kernels|not monitored' "$d/run.err")"
  dump=$(ls -d "$d"/run/*/ 2>/dev/null | head -1)
  # check.py's lines: those about the window and its trace are the window column.
  python3 "$here/check.py" "$cupmon" "$v" "$d/run" "$d/run.out" --full-window 2>>"$d/check.err" \
    | sed -E "/window|trace|ac2g|API call|thread|deviceProperties/ s/^(PASS|FAIL) $v: /\1 $v window: /; s/^(PASS|FAIL) $v: /\1 $v record: /" \
    | tee -a "$results"
  if [ -n "$dump" ]; then
    python3 "$here/matrix_check.py" "$cupmon" "$v" "${dump%/}" "$d/run.out" "$api" "$lib" "$rt_major" \
      2>>"$d/check.err" | tee -a "$results"
  else
    for g in record window graph; do say "FAIL $v $g: no dump ($(tail -2 "$d/run.err" | tr '\n' ' '))"; done
  fi
  grep -q "^\(PASS\|FAIL\) $v graph" "$results" || say "FAIL $v graph: no graph check ran ($(tail -2 "$d/check.err" | tr '\n' ' '))"
done

say "== table"
table | tee -a "$results"
passed=$(grep -c '^PASS' "$results"); failed=$(grep -c '^FAIL' "$results")
echo "SUMMARY: $passed passed, $failed failed (details in $results)"
[ "$failed" = 0 ]
