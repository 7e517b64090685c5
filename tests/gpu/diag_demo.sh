#!/bin/bash
# Which part of demo_record.py crashes: runs it with faulthandler in variants
# (plain torch.profiler, no CUDA graph, no schedule) and a gdb backtrace if gdb is there.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pip install --quiet --no-deps --no-index --target /tmp/cupmon-site "$root"/.gpu/cupmon-*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/cupmon-site
for v in "" DEMO_REPEAT=0 "DEMO_PLAIN=1 DEMO_REPEAT=0" "DEMO_PLAIN=1"; do
  rm -rf /tmp/diag; echo "=== variant [$v]"
  env $v timeout 60 python3 -X faulthandler "$here/demo_record.py" /tmp/diag 2>&1 | grep -v Warning | tail -25
  echo "exit ${PIPESTATUS[0]}"
done
if command -v gdb >/dev/null; then
  rm -rf /tmp/diag; echo "=== gdb"
  timeout 120 gdb -q -batch -ex run -ex bt -ex "info threads" --args python3 "$here/demo_record.py" /tmp/diag 2>&1 | grep -v "^\[New Thread\|^\[Thread" | tail -60
else
  echo "no gdb"
fi
