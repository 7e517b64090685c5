#!/bin/bash
# cupti_matrix.sh without a GPU: its argument handling, the dry-run plan and the table
# made from PASS/FAIL lines. Run by scripts/test.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
m=$here/cupti_matrix.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
expect() {  # expect NAME WANT_EXIT PATTERN -- COMMAND...
  local name=$1 want=$2 pattern=$3; shift 4
  local out code
  out=$("$@" 2>&1); code=$?
  if [ "$code" = "$want" ] && grep -qE -- "$pattern" <<<"$out"; then echo "ok   $name"
  else echo "FAIL $name: exit $code (want $want), output:"; echo "$out" | head -20; failures=$((failures + 1)); fi
}
export OUT=$tmp/out CUPTI_MATRIX_DIR=$tmp/bundles
mkdir -p "$CUPTI_MATRIX_DIR"; : >"$CUPTI_MATRIX_DIR/cupti-12.4.127.tar.gz"
expect "no arguments print the usage" 2 "pip download --no-deps -d .whl nvidia-cuda-cupti-cu12" -- bash "$m"
expect "an unknown version is refused, naming the known ones" 2 \
  "unknown CUPTI version '12.7.1'; known: 12.0.146 .* 13.5.25" -- bash "$m" --dry-run 12.4.127 12.7.1
expect "--dry-run without versions is refused" 2 "no CUPTI version given" -- bash "$m" --dry-run
expect "--list lists every version" 0 "^12.0.146 .*13.4.92 13.5.25$" -- bash "$m" --list
expect "the plan names API version, bundle and program" 0 \
  "PLAN 12.4.127: API version 22; bundle .*cupti-12.4.127.tar.gz \(present\); workload built against nvidia-cuda-runtime-cu12 12.4.127" \
  -- bash "$m" --dry-run 12.4.127 13.0.85
expect "a missing bundle is said" 0 "PLAN 13.0.85: API version 130001; .*\(missing\); workload built by the toolkit" \
  -- bash "$m" --dry-run 12.4.127 13.0.85
expect "all expands to every version" 0 "13.5.25 +130500 +toolkit +dry" -- bash "$m" --dry-run all
printf '%s\n' "PASS 12.4.127 record: a" "PASS 12.4.127 record: b" "PASS 12.4.127 window: c" \
  "FAIL 12.4.127 graph: d" "PASS 12.4.127 graph: e" "INFO 12.4.127: x" "PASS 13.0.85 record: a" >"$tmp/r.txt"
expect "the table counts each version's checks per column" 0 \
  "12.4.127 +22 +12.4.127 +- +PASS 2 +PASS 1 +FAIL 1/2" -- bash "$m" --table "$tmp/r.txt" 12.4.127 13.0.85
expect "a version without lines has empty cells" 0 "13.1.115 +130101 +toolkit +- +- +- +-" \
  -- bash "$m" --table "$tmp/r.txt" 13.1.115
[ "$failures" = 0 ] && echo "cupti_matrix_test: all passed" || { echo "cupti_matrix_test: $failures failed"; exit 1; }
