#!/bin/bash
# The venv that cupmon-pftrace's Python check runs in (tests/python/check_pftrace.py):
# the `perfetto` package for its protos (perfetto_trace_pb2) and `protobuf`.
# `cargo test -p cupmon-pftrace --test python_check` uses it, or
# $CUPMON_PFTRACE_PYTHON, and prints SKIPPED when neither has the packages.
#
# usage: tests/python/pftrace-venv.sh [VENV]   (default target/pftrace-venv)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${1:-$root/target/pftrace-venv}
[ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check perfetto protobuf
echo "$venv/bin/python"
