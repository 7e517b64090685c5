#!/bin/bash
# Runs diag_schedule.py's variants, each in its own interpreter (see its docstring).
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pip install --quiet --no-deps --no-index --target /tmp/cupmon-site "$root"/.gpu/cupmon-*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/cupmon-site
for v in "cupmon 3" "cupmon 5" "cupmon 4" "rearm-once 3" "no-rearm 3" "idle-stop 3" "plain-rearm 3" "plain-coll 3"; do
  echo "=== $v"
  timeout 60 python3 -X faulthandler "$here/diag_schedule.py" $v 2>&1 | grep -v -i warn | grep -E "OK|Fatal|File|Error" | head -6
  echo "exit ${PIPESTATUS[0]}"
done
