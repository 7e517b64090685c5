#!/bin/bash
# Issue 7's benchmark suite, end to end, in one command on the GPU machine (see README.md):
# builds the empty-kernel workload and the minimal CUPTI consumer, then runs bench.py.
#
# usage: bash bench/gpu/run.sh [quick|memory|all|PART[,PART...]] [--dry-run]
#   quick (default): launch, burst, eager, train  (~6 min)
#   memory:          the 60 s always-on memory-flatness run  (~1.5 min)
#   all:             both (over 8 min on a slow start-up; bench.py trims to BENCH_BUDGET_S)
#   PARTS:           any of launch,burst,eager,train,memory
# Environment: CUPMON_BIN (.gpu/cupmon), CUPMON_INJECT (.gpu/libcupmon_inject.so),
#   OUT (bench/out/gpu), CUDA_HOME (/usr/local/cuda), CUPTI_LIB (searched), BENCH_BUILD,
#   BENCH_SCRATCH, BENCH_BUDGET_S and the knobs listed in README.md.
# Exit status: 0 when every sub-run succeeded, 1 when any failed (all of them are
# reported in the table and in $OUT/RESULTS.md), 2 on bad usage.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2

parts=quick
dry=""
for arg in "$@"; do
    case $arg in
        --dry-run) dry=1 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        -*) echo "run.sh: unknown option $arg" >&2; exit 2 ;;
        *) parts=$arg ;;
    esac
done

export OUT=${OUT:-$root/bench/out/gpu}
export CUPMON_BIN=${CUPMON_BIN:-$root/.gpu/cupmon}
export CUPMON_INJECT=${CUPMON_INJECT:-$root/.gpu/libcupmon_inject.so}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PYTHONUNBUFFERED=1
build=${BENCH_BUILD:-$root/bench/out/gpu-build}
mkdir -p "$OUT/logs" "$build"
echo "run.sh: parts=$parts OUT=$OUT CUPMON_BIN=$CUPMON_BIN CUPMON_INJECT=$CUPMON_INJECT"

# CUPTI's headers and library: the toolkit layout differs between installs.
cupti_inc=""
for d in "$CUDA_HOME/targets/x86_64-linux/include" "$CUDA_HOME/extras/CUPTI/include" "$CUDA_HOME/include"; do
    [ -f "$d/cupti.h" ] && { cupti_inc=$d; break; }
done
cupti_lib=""
for d in ${CUPTI_LIB:-} "$CUDA_HOME/targets/x86_64-linux/lib" "$CUDA_HOME/lib64" \
         "$CUDA_HOME/extras/CUPTI/lib64" /usr/local/cuda-13.0/targets/x86_64-linux/lib; do
    compgen -G "$d/libcupti.so*" >/dev/null && { cupti_lib=$d; break; }
done

build_failed=0
# Build logs go under $OUT so a failed build comes back with the results.
step() {  # step NAME CMD...: run a build step, show the tail of its log when it fails
    local name=$1; shift
    echo "run.sh: building $name"
    if ! "$@" >"$OUT/logs/build-$name.log" 2>&1; then
        echo "run.sh: BUILD FAILED: $name (log $OUT/logs/build-$name.log):" >&2
        tail -20 "$OUT/logs/build-$name.log" | sed 's/^/    | /' >&2
        build_failed=1
    fi
}

if [ -n "$dry" ] && ! command -v "$CUDA_HOME/bin/nvcc" >/dev/null; then
    echo "run.sh: dry run without nvcc: not building"
else
    # A stale output from an earlier call must not stand in for a failed build.
    rm -f "$build/empty_kernel" "$build/libminimal_consumer.so"
    step empty_kernel "$CUDA_HOME/bin/nvcc" -O2 -arch=sm_90 -o "$build/empty_kernel" bench/gpu/empty_kernel.cu
    if [ -z "$cupti_inc" ] || [ -z "$cupti_lib" ]; then
        echo "run.sh: BUILD FAILED: minimal_consumer: CUPTI not found (include '$cupti_inc', lib '$cupti_lib'); set CUDA_HOME or CUPTI_LIB" >&2
        build_failed=1
    else
        # Link the unversioned name when the toolkit ships it, the versioned one otherwise.
        if [ -e "$cupti_lib/libcupti.so" ]; then link=-lcupti; else
            link=-l:$(basename "$(compgen -G "$cupti_lib/libcupti.so.*" | sort | head -1)"); fi
        step minimal_consumer gcc -O2 -Wall -shared -fPIC -o "$build/libminimal_consumer.so" \
            bench/gpu/minimal_consumer.c -I"$cupti_inc" -L"$cupti_lib" "$link" -Wl,-rpath,"$cupti_lib" -pthread
    fi
fi

BENCH_COMMAND="bash bench/gpu/run.sh $*" python3 bench/gpu/bench.py run --parts "$parts" \
    --build "$build" --out "$OUT" ${dry:+--dry-run}
rc=$?
if [ $build_failed -ne 0 ]; then
    echo "run.sh: some builds failed (see above); the runs that needed them are reported as failed" >&2
    rc=1
fi
exit $rc
