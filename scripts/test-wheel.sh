#!/bin/bash
# The wheel as a user gets it: scripts/build-wheel.sh, then `pip install` into a fresh venv
# whose PATH has no cargo or compiler, timed; then `cupmon demo`, the Python API, and a
# `cupmon run` of a stand-in CUDA program over the fake libcupti, all from that venv.
# Prints PASS/FAIL lines; exits 1 when any failed.
#
# usage: scripts/test-wheel.sh [WHEEL]   (default: build one with scripts/build-wheel.sh)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
fails=0
pass() { echo "PASS wheel: $*"; }
fail() { echo "FAIL wheel: $*"; fails=$((fails + 1)); }

wheel=${1:-}
if [ -z "$wheel" ]; then
  wheel=$(bash scripts/build-wheel.sh | tail -1) || { echo "FAIL wheel: build-wheel.sh failed"; exit 1; }
fi
case $(basename "$wheel") in
  *manylinux*abi3*|*abi3*manylinux*) pass "$(basename "$wheel") is an abi3 manylinux wheel" ;;
  *) fail "$(basename "$wheel") is not tagged abi3 + manylinux" ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${PYTHON:-python3}" -m venv "$work/venv"
# No Rust toolchain and no compiler on the way: only the venv and the system's basics.
clean_path="$work/venv/bin:/usr/bin:/bin"
for tool in cargo rustc; do
  if PATH=/usr/bin:/bin command -v "$tool" >/dev/null; then
    echo "NOTE wheel: $tool is in /usr/bin or /bin here; the install below cannot use it anyway (no sdist)"
  fi
done
t0=$(date +%s.%N)
if env PATH="$clean_path" "$work/venv/bin/python" -m pip install --quiet --no-index --no-deps \
     --disable-pip-version-check --only-binary=:all: "$wheel"; then
  secs=$(python3 -c "import sys; print(f'{float(sys.argv[1]) - float(sys.argv[2]):.2f}')" "$(date +%s.%N)" "$t0")
  pass "pip install took ${secs} s (no index, no build)"
else
  fail "pip install $wheel"; exit 1
fi

cd "$work"
if env PATH="$clean_path" cupmon demo >demo.out 2>demo.err && [ -s cupmon-demo.trace.json.gz ] &&
   python3 - <<'PY'
import gzip, json
t = json.load(gzip.open("cupmon-demo.trace.json.gz"))
kernels = [e for e in t["traceEvents"] if e.get("cat") == "kernel"]
assert len(kernels) > 100, len(kernels)
assert any(e.get("cat") == "cpu_op" for e in t["traceEvents"])
print(f"demo trace: {len(kernels)} kernels")
PY
then pass "cupmon demo wrote a torch.profiler-style trace"
else fail "cupmon demo ($(tail -3 demo.err))"; fi

if env PATH="$clean_path" python - <<'PY'
import cupmon, os
# The package's own natives, not a build tree's.
here = os.path.dirname(cupmon.__file__)
for name in ("cupmon", "libcupmon_inject.so"):
    assert os.path.exists(os.path.join(here, name)), name
with cupmon.annotate("no monitor: does nothing"):
    pass
w = cupmon.read_dump  # the offline API is there
print("python api ok", cupmon.__version__)
PY
then pass "the Python API imports and runs from the wheel"
else fail "the Python API from the wheel"; fi

# cupmon run over the fake libcupti: the stand-in app loads the wheel's injection library
# as the CUDA driver would (CUDA_INJECTION64_PATH, set by the wheel's cupmon).
fake=$root/target/debug/libcupmon_fake_cupti.so
app=$root/target/debug/examples/fake_cuda_app
# Two builds: with --example, cargo builds only that target and the fake's cdylib would be
# missing on a fresh clone (it is built as an rlib dependency only).
if ( cd "$root" && cargo build --quiet -p cupmon-fake-cupti &&
     cargo build --quiet -p cupmon-inject --example fake_cuda_app ); then
  if env PATH="$clean_path" CUPMON_LIBCUPTI="$fake" CUPMON_LIBCUDA="$fake" \
       cupmon run -o "$work/run" -- "$app" launch 40 >run.out 2>run.err; then
    dump=$(ls -d "$work"/run/*/ | head -1)
    if env PATH="$clean_path" cupmon stats "$dump" >stats.out 2>&1 && grep -Eq "CONCURRENT_KERNEL +40\b" stats.out; then
      pass "cupmon run (fake CUPTI) recorded the 40 kernels: $(grep -m1 -i kernel stats.out)"
    else fail "cupmon stats of the fake run: $(head -5 stats.out)"; fi
  else fail "cupmon run with the fake libcupti: $(tail -3 run.err)"; fi
else fail "cannot build the fake libcupti and its stand-in app"; fi

echo "wheel: $fails failed"
[ $fails -eq 0 ]
