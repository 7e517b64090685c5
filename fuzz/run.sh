#!/bin/bash
# Run every fuzz target (or those named) for a fixed time each and say what each found.
#   fuzz/run.sh [SECONDS] [TARGET...]      (default 60 s; targets: every [[bin]] in Cargo.toml)
# Needs a nightly toolchain. With cargo-fuzz installed it builds through `cargo fuzz build`;
# without it, with the flags cargo-fuzz passes (sanitizer coverage, AddressSanitizer,
# --cfg fuzzing). Corpora grow in fuzz/corpus/<target> (seeded from fuzz/seeds/<target>),
# crashes land in fuzz/artifacts/<target>/. Exit status: 0 when every target ran clean,
# 1 when one crashed or did not build.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
secs=${1:-60}
shift || true
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(awk '/^\[\[bin\]\]/{b=1; next} b && /^name = /{gsub(/"/,"",$3); print $3; b=0}' Cargo.toml)
fi
triple=$(rustc +nightly -vV 2>/dev/null | sed -n 's/^host: //p')
if [ -z "$triple" ]; then
  echo "fuzz/run.sh: no nightly toolchain (rustup toolchain install nightly)" >&2
  exit 1
fi
build() {
  if cargo fuzz --version >/dev/null 2>&1; then
    cargo +nightly fuzz build -O "$1"
  else
    RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks \
-Zsanitizer=address" cargo +nightly build --release --target "$triple" --bin "$1"
  fi
}
failed=0
summary=()
mkdir -p target
for t in "${targets[@]}"; do
  echo "==> $t: building"
  if ! build "$t" >"target/build-$t.log" 2>&1; then
    echo "$t: does not build; see fuzz/target/build-$t.log" >&2
    tail -5 "target/build-$t.log" >&2
    summary+=("$t: DOES NOT BUILD")
    failed=1
    continue
  fi
  bin="target/$triple/release/$t"
  mkdir -p "corpus/$t" "artifacts/$t"
  dirs=("corpus/$t")
  [ -d "seeds/$t" ] && dirs+=("seeds/$t")
  echo "==> $t: fuzzing for $secs s"
  log="artifacts/$t/last-run.log"
  "$bin" "${dirs[@]}" -max_total_time="$secs" -artifact_prefix="artifacts/$t/" \
    -print_final_stats=1 >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  corpus=$(find "corpus/$t" -type f | wc -l)
  crashes=$(find "artifacts/$t" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) | wc -l)
  if [ "$rc" -ne 0 ]; then
    failed=1
    summary+=("$t: FOUND a problem (exit $rc) after ${runs:-?} runs; $crashes files in fuzz/artifacts/$t; log fuzz/$log")
    grep -m5 -E 'panicked|ERROR|SUMMARY' "$log" >&2
  else
    summary+=("$t: ${runs:-?} runs in $secs s, no finding (corpus $corpus inputs)")
  fi
done
echo
echo "fuzz/run.sh summary ($secs s each):"
printf '  %s\n' "${summary[@]}"
exit $failed
