#!/bin/bash
# `cupmon report` in a real browser: builds cupmon and bench/report's make-run, finds
# (or installs, from the system packages) headless Chromium, and runs
# tests/report/check_report.py: the page of a fixture dump and of a synthetic 4-rank
# run opened in Chromium, failing on any console error or failed resource load, with
# the charts, the kernel table (against `cupmon stats`), the ranks, zoom and window
# links checked. Without a Chromium it prints SKIPPED and exits 0.
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
if [ -z "$chromium" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  step "installing chromium-headless-shell from the system packages"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell; } >&2 \
    || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2 || true
  chromium=$(find_chromium || true)
fi
if [ -z "$chromium" ]; then
  echo "SKIPPED: test-report: no headless Chromium (chromium-headless-shell or chromium) and it could not be installed; the report page was not checked in a browser" >&2
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
