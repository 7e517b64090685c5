#!/usr/bin/env bash
# Builds oracle.c against cuda_occupancy.h of CUDA 13.0 (the toolkit of torch
# 2.11+cu130), taken from NVIDIA's nvidia-cuda-runtime wheel on PyPI and kept in
# a cache outside the repo (NVIDIA's header is never committed), then runs the
# oracle: launches on stdin, results on stdout (see oracle.c).
# Exit 3, with the reason on stderr, when the oracle cannot be had (no network,
# no python3 or gcc); crates/cupmon-trace/tests/occupancy.rs then skips.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
version=13.0.96
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cupmon/occupancy-oracle/$version
header=$cache/include/cuda_occupancy.h
bin=$cache/oracle

unavailable() {
    echo "occupancy oracle unavailable: $*" >&2
    exit 3
}

if [ ! -f "$header" ]; then
    command -v python3 >/dev/null || unavailable "no python3 to download nvidia-cuda-runtime"
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/download.XXXXXX")
    if ! python3 -m pip download --quiet --no-deps --only-binary=:all: \
        "nvidia-cuda-runtime==$version" -d "$tmp" >"$tmp/pip.log" 2>&1; then
        reason=$(tail -n 1 "$tmp/pip.log")
        rm -rf "$tmp"
        unavailable "pip download nvidia-cuda-runtime==$version failed: $reason"
    fi
    # Only the one header leaves the wheel; written whole, then renamed.
    if ! python3 - "$tmp" "$cache/include" <<'PY'; then
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/include/cuda_occupancy.h"))
    data = z.read(name)
os.makedirs(sys.argv[2], exist_ok=True)
part = os.path.join(sys.argv[2], "cuda_occupancy.h.%d" % os.getpid())
with open(part, "wb") as f:
    f.write(data)
os.replace(part, os.path.join(sys.argv[2], "cuda_occupancy.h"))
PY
        rm -rf "$tmp"
        unavailable "no cuda_occupancy.h in the nvidia-cuda-runtime $version wheel"
    fi
    rm -rf "$tmp"
fi

if [ ! -x "$bin" ] || [ "$here/oracle.c" -nt "$bin" ]; then
    command -v gcc >/dev/null || unavailable "no gcc"
    # -fwrapv: int overflow wraps, as Kineto's build does in practice and as
    # cupmon's code assumes.
    if ! gcc -std=c11 -O2 -fwrapv -Wall -Werror -I "$cache/include" "$here/oracle.c" \
        -lm -o "$bin.$$" 2>"$cache/gcc.log"; then
        # The header is there and so is gcc: a broken oracle is a failure, not a skip.
        echo "occupancy oracle: gcc failed:" >&2
        head -n 20 "$cache/gcc.log" >&2
        exit 1
    fi
    mv -f "$bin.$$" "$bin"
fi
exec "$bin"
