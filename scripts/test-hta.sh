#!/bin/bash
# Does HolisticTraceAnalysis (HTA) analyse cupmon's traces correctly, and does
# torch-tb-profiler's parser read them? Builds (or reuses) a venv with HTA 0.5.0,
# torch-tb-profiler 0.4.3 and pinned dependencies from PyPI, then
# runs tests/hta/check_hta.py: trace directories written by the cupmon binary
# from the H200 fixtures, every HTA analysis compared with the files' own
# events. No GPU needed. What HTA needs from a trace: tests/hta/REQUIREMENTS.md.
#
# usage: scripts/test-hta.sh [CUPMON_BINARY] [-- CHECK_HTA ARGS...]
#        without a binary: cargo build -p cupmon-cli, then target/debug/cupmon
# env:   CUPMON_HTA_VENV  venv to use or create (default target/hta-venv)
#        PYTHON           interpreter for the venv (default python3.11, else python3)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=${CUPMON_HTA_VENV:-$root/target/hta-venv}
step() { echo "== test-hta: $*" >&2; }
started=$SECONDS

cupmon=
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  cupmon=$1
  shift
fi
[ "${1:-}" = "--" ] && shift

if [ -z "$cupmon" ]; then
  step "cargo build -p cupmon-cli"
  cargo build -p cupmon-cli
  cupmon=${CARGO_TARGET_DIR:-$root/target}/debug/cupmon
fi
case $cupmon in /*) ;; *) cupmon=$PWD/$cupmon ;; esac
if [ ! -x "$cupmon" ]; then
  echo "test-hta: $cupmon is not an executable cupmon binary" >&2
  exit 2
fi

# The pins live in tests/hta/requirements.txt; a venv built from other pins
# is rebuilt rather than patched.
reqs=$root/tests/hta/requirements.txt
hta_pin="holistictraceanalysis==0.5.0"
# torch-tb-profiler's parser needs only numpy and pandas (pinned above); its
# metadata also asks for tensorboard, which the parser never imports.
tb_pin="torch-tb-profiler==0.4.3"
stamp=$venv/.cupmon-hta-pins
want=$(cat "$reqs"; echo "$hta_pin"; echo "$tb_pin")
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python=${PYTHON:-$(command -v python3.11 || command -v python3)}
  step "creating the venv $venv with $($python --version)"
  rm -rf "$venv"
  venv_started=$SECONDS
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$reqs"
  # --no-deps: HTA's metadata also asks for jupyterlab, pytest and pydot,
  # which none of its analyses import (see requirements.txt).
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$hta_pin" "$tb_pin"
  echo "$want" > "$stamp"
  step "venv built in $((SECONDS - venv_started)) s"
fi

step "check_hta.py with $cupmon"
status=0
check_started=$SECONDS
"$venv/bin/python" "$root/tests/hta/check_hta.py" --cupmon "$cupmon" "$@" || status=$?
step "HTA check ran $((SECONDS - check_started)) s; done in $((SECONDS - started)) s (exit $status)"
exit $status
