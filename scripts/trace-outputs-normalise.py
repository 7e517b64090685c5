#!/usr/bin/env python3
"""Print `sha256  name` of each file's normalised bytes, for scripts/trace-outputs.sh.

Normalised: a gzip file is decompressed; in a .pftrace the clock snapshot's
REALTIME reading (the one value a writer takes from the clock, the first
9-byte varint of a Unix time in ns in the first packet) is zeroed. Everything
else must match byte for byte.
"""

import gzip
import hashlib
import sys


def varint(b, i):
    v = shift = 0
    start = i
    while i < len(b):
        c = b[i]
        v |= (c & 0x7F) << shift
        i += 1
        if c < 0x80:
            return v, i - start
        shift += 7
    return None, 0


def normalise(name, data):
    if name.endswith(".gz"):
        data = gzip.decompress(data)
    if ".pftrace" in name or name.endswith(".bin"):
        b = bytearray(data)
        for i in range(min(len(b), 96)):
            v, n = varint(b, i)
            if n == 9 and v is not None and 1_500_000_000 * 10**9 < v < 3_000_000_000 * 10**9:
                b[i:i + n] = b"\x80" * (n - 1) + b"\x00"
                break
        data = bytes(b)
    return data


for name in sorted(sys.argv[1:]):
    with open(name, "rb") as f:
        data = normalise(name, f.read())
    print(f"{hashlib.sha256(data).hexdigest()}  {name}")
