#!/bin/bash
# Run each fuzz target for a fixed time and say what each found.
#
# usage: fuzz/run.sh [SECONDS] [TARGET...]     (default: 60 s each, every target in
#        fuzz/Cargo.toml)
#
# Needs a nightly toolchain (`rustup toolchain install nightly`). With cargo-fuzz
# installed it runs `cargo +nightly fuzz run`; without it, it builds the targets with
# the same coverage instrumentation cargo-fuzz uses (libfuzzer-sys brings libFuzzer) and
# runs the binaries. Debug assertions and overflow checks are on, as under cargo-fuzz;
# no AddressSanitizer (the targets are safe Rust). Corpora grow in fuzz/corpus/TARGET
# (ignored by git); seeds are read from fuzz/seeds/TARGET where there are some.
# A crash leaves its input in fuzz/artifacts/TARGET and makes the script exit 1.
# Without nightly it prints SKIPPED and exits 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
seconds=${1:-60}
shift || true
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^cupmon-fuzz$')
fi
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "SKIPPED: fuzz/run.sh: no nightly toolchain (rustup toolchain install nightly); ${#targets[@]} targets not run"
  exit 0
fi
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/../target/fuzz}
if cargo +nightly fuzz --version >/dev/null 2>&1; then
  runner=cargo-fuzz
else
  runner=libfuzzer
  flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
  flags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
  flags+=" -Cllvm-args=-sanitizer-coverage-pc-table"
  flags+=" -Cllvm-args=-sanitizer-coverage-trace-compares"
  flags+=" --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
  bins=()
  for t in "${targets[@]}"; do bins+=(--bin "$t"); done
  # --target: build scripts (zstd-sys) stay uninstrumented.
  RUSTFLAGS="$flags" cargo +nightly build --release --target "$triple" "${bins[@]}" \
    || { echo "FAILED: fuzz/run.sh: the targets do not build"; exit 1; }
fi
failed=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  seeds=()
  [ -d "seeds/$t" ] && seeds=("seeds/$t")
  log=$(mktemp)
  args=(-max_total_time="$seconds" -artifact_prefix="artifacts/$t/" -print_final_stats=1)
  if [ "$runner" = cargo-fuzz ]; then
    cargo +nightly fuzz run "$t" "corpus/$t" "${seeds[@]}" -- "${args[@]}" >"$log" 2>&1
  else
    "$CARGO_TARGET_DIR/$triple/release/$t" "corpus/$t" "${seeds[@]}" "${args[@]}" >"$log" 2>&1
  fi
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    echo "$t: ${runs:-?} runs in ${seconds} s, ${cov:-cov: ?}, no crash"
  else
    failed=1
    echo "$t: CRASH (exit $rc) after ${runs:-?} runs; input in fuzz/artifacts/$t/:"
    grep -E 'panicked|ERROR|SUMMARY' "$log" | head -5 | sed 's/^/    /'
  fi
  rm -f "$log"
done
exit $failed
