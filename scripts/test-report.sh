#!/bin/bash
# `cupmon report` in a real browser: builds cupmon and bench/report's make-run, finds
# headless Chromium (never installs it: .ci/run does, on CI), and runs
# tests/report/check_report.py: the page of a fixture dump and of a synthetic 4-rank
# run opened in Chromium, failing on any console error or failed resource load, with
# the charts, the kernel table (against `cupmon stats`), the ranks, zoom and window
# links checked. Without a Chromium it prints SKIPPED (with how to get one), names
# itself in $CUPMON_SKIPPED_FILE when scripts/test.sh set it, and exits 0.
#
# usage: scripts/test-report.sh [--update-screenshot]   (rewrites docs/report.png)
# env:   CUPMON_CHROMIUM  the browser to use (default: chromium-headless-shell, chromium)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
step() { echo "== test-report: $*" >&2; }

find_chromium() {
  for c in "${CUPMON_CHROMIUM:-}" chromium-headless-shell chromium chromium-browser; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return 0; }
  done
  return 1
}

chromium=$(find_chromium || true)
# A test command installs nothing on the system: without a Chromium the check is
# skipped, loudly (CI, .ci/run, installs one before it runs the tests).
if [ -z "$chromium" ]; then
  why="no headless Chromium (chromium-headless-shell, chromium or chromium-browser on PATH, or \$CUPMON_CHROMIUM): the report page was not checked in a browser; install one (Debian/Ubuntu: apt-get install chromium-headless-shell, or chromium) or set CUPMON_CHROMIUM=/path/to/chrome"
  echo "SKIPPED: test-report: $why" >&2
  if [ -n "${CUPMON_SKIPPED_FILE:-}" ]; then
    printf 'report\tscripts/test-report.sh\t%s\n' "$why" >> "$CUPMON_SKIPPED_FILE"
  fi
  exit 0
fi

step "cargo build -p cupmon-cli -p cupmon-bench-report"
cargo build -p cupmon-cli -p cupmon-bench-report
bin=${CARGO_TARGET_DIR:-$root/target}/debug
out=${CARGO_TARGET_DIR:-$root/target}/report-check
shot=()
[ "${1:-}" = "--update-screenshot" ] && shot=(--screenshot "$root/docs/report.png")
step "check_report.py with $chromium"
python3 tests/report/check_report.py --cupmon "$bin/cupmon" --make-run "$bin/make-run" \
  --chromium "$chromium" --out "$out" "${shot[@]}"
