#!/bin/bash
# The whole test suite, as CI runs it (.ci/run): formatting, lints, the Rust
# tests (golden, differential against PyTorch's merge_trace_window_into_chrome_trace
# when ../shared is beside the checkout, CLI, monitor and multiplexer against the fake
# libcupti), the Python package's tests, HolisticTraceAnalysis reading cupmon's
# traces, and `cupmon report`'s page in headless Chromium. No GPU needed; the GPU
# checks are tests/gpu/run.sh. Needs the Python package index (venvs of pytest,
# perfetto, duckdb, pyspark, HTA), Java 17+ for the Spark test and a headless
# Chromium for the report's (else those say SKIPPED), and about 7 GB of disk.
#
# Every step runs, even after one failed; the run ends with each skipped test
# named and why, each failed one named, and one line of totals
#     N passed, N failed, N skipped
# (CI reads that line). The exit status is 1 when anything failed.
#
# How a skip is counted: cargo's ignored tests (with their reason), tests that
# return early because they cannot run here (they name themselves in
# $CUPMON_SKIPPED_FILE through the crate cupmon-test-skip, and count as skipped,
# not passed), pytest's skips (tests/python/conftest.py lists them in the same
# file), and the HTA and report checks' own SKIPPED lines.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
step() { echo; echo "==> $*"; }

logs=${CARGO_TARGET_DIR:-$root/target}/test-logs
mkdir -p "$logs"
export CUPMON_SKIPPED_FILE=$logs/skipped.tsv
: > "$CUPMON_SKIPPED_FILE"
passed=0 failed=0 skipped=0
failures=()

# How many tests of source $1 (the first field) are listed as skipped.
skips_of() { awk -F'\t' -v s="$1" '$1 == s { print $2 }' "$CUPMON_SKIPPED_FILE" | sort -u | wc -l; }

# A step that is one check: passed or failed as a whole.
check() {
  local name=$1
  shift
  step "$name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
  fi
}

# Adds the counts of a `N passed, N failed, N skipped`-style line ($2) of the
# step named $1 whose exit status was $3: a step that failed without a failed
# test counted (a build error, a crash) counts as one failure.
add_counts() {
  local name=$1 line=$2 status=$3 p f s
  read -r p f s < <(awk '{ gsub(/[,=]/, " ")
      for (n = 1; n < NF; n++) {
        if ($(n+1) == "passed") p += $n
        if ($(n+1) ~ /^(failed|errors?)$/) f += $n
        if ($(n+1) == "skipped") s += $n
      } } END { print p+0, f+0, s+0 }' <<<"$line")
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
  if [ "$status" != 0 ] && [ "$f" = 0 ]; then
    failed=$((failed + 1))
    failures+=("$name (exit $status, no failed test counted: see its output above)")
  fi
}

check "cargo fmt --check" cargo fmt --all -- --check
check "cargo clippy (all targets, warnings are errors)" \
  cargo clippy --workspace --all-targets --locked -- -D warnings

step "Perfetto's protos for cupmon-pftrace's Python check (tests/python/pftrace-venv.sh)"
if py=$(bash tests/python/pftrace-venv.sh); then
  export CUPMON_PFTRACE_PYTHON=$py
else
  echo "no venv with the perfetto package: cupmon-pftrace's Python check will say SKIPPED" >&2
fi

step "cargo test (workspace)"
cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$logs/cargo-test.log"
status=${PIPESTATUS[0]}
# libtest's `test result: ok. 12 passed; 0 failed; 1 ignored; ...` per binary;
# a test that returned early because it cannot run here passed for libtest.
read -r p f i < <(awk '/^test result: /{
    for (n = 1; n <= NF; n++) {
      if ($(n+1) ~ /^passed/) p += $n; if ($(n+1) ~ /^failed/) f += $n; if ($(n+1) ~ /^ignored/) i += $n
    } } END { print p+0, f+0, i+0 }' "$logs/cargo-test.log")
early=$(skips_of cargo)
passed=$((passed + p - early))
failed=$((failed + f))
skipped=$((skipped + i + early))
# Ignored tests, named by their binary (the `Running` line above them), with
# their #[ignore = "reason"]; failed tests likewise.
awk '/^ *Running /{ bin = $NF; gsub(/^\(|\)$/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin) }
     /^ *Doc-tests /{ bin = "doc-tests " $2 }
     /^test .* \.\.\. ignored/{ i = index($0, " ... ignored"); name = substr($0, 6, i - 6)
       why = substr($0, i + 12); sub(/^, /, "", why); print "cargo\t" bin ": " name "\t" (why == "" ? "#[ignore]" : why) }' \
  "$logs/cargo-test.log" >> "$CUPMON_SKIPPED_FILE"
while IFS= read -r t; do failures+=("cargo test: $t"); done < <(
  awk '/^ *Running /{ bin = $NF; gsub(/^\(|\)$/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin) }
       /^ *Doc-tests /{ bin = "doc-tests " $2 }
       /^test .* \.\.\. FAILED$/{ print bin ": " substr($0, 6, length($0) - 16) }' "$logs/cargo-test.log")
if [ "$status" != 0 ] && [ "$f" = 0 ]; then
  failed=$((failed + 1))
  failures+=("cargo test (exit $status, no failed test counted: a build error? see above)")
fi

check "tests/gpu/cupti_matrix.sh without a GPU (arguments, plan, table)" \
  bash tests/gpu/cupti_matrix_test.sh
check "the wheel: built, installed into a fresh venv with no Rust, demo, Python API, a fake-CUPTI run (scripts/test-wheel.sh)" \
  bash scripts/test-wheel.sh

step "Python package (scripts/test-python.sh)"
bash scripts/test-python.sh 2>&1 | tee "$logs/python.log"
status=${PIPESTATUS[0]}
# pytest's last line: `120 passed, 3 skipped in 31.2s` (with or without ='s).
add_counts "Python package" "$(grep -E '[0-9]+ (passed|failed|skipped|errors?)\b.* in [0-9.]+s' "$logs/python.log" | tail -1)" "$status"
while IFS= read -r t; do failures+=("pytest: $t"); done < <(grep -oE '^FAILED [^ ]+' "$logs/python.log" | cut -c8-)

step "HolisticTraceAnalysis reads cupmon's traces (scripts/test-hta.sh)"
bash scripts/test-hta.sh 2>&1 | tee "$logs/hta.log"
status=${PIPESTATUS[0]}
add_counts "HTA check" "$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$logs/hta.log" | tail -1)" "$status"
while IFS= read -r t; do failures+=("HTA: $t"); done < <(grep -E '^FAIL  ' "$logs/hta.log" | cut -c7- | cut -d: -f1)

step "cupmon report in headless Chromium (scripts/test-report.sh)"
before=$(skips_of report)
bash scripts/test-report.sh 2>&1 | tee "$logs/report.log"
status=${PIPESTATUS[0]}
if [ "$(skips_of report)" != "$before" ]; then
  skipped=$((skipped + 1))
else
  add_counts "report check" "$(grep -E '^check_report: [0-9]+ passed' "$logs/report.log" | tail -1)" "$status"
fi

echo
echo "==> totals (logs in $logs)"
if [ -s "$CUPMON_SKIPPED_FILE" ]; then
  echo "skipped (and why):"
  awk -F'\t' '{ printf "  %s: %s\n", $2, $3 }' "$CUPMON_SKIPPED_FILE"
fi
if [ ${#failures[@]} -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
