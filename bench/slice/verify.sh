#!/usr/bin/env bash
# The cost of verifying the segments that `cupmon stats` and `cupmon report` count from
# their stored digests (issue 28: every sealed frame checked against its seal, XXH3-64
# over the compressed bytes, nothing decompressed), on synthetic segmented dumps
# (make-dump) of the given raw sizes.
#
#   bench/slice/verify.sh [RAW_MIB ...]     (default: 2400 38400, the slice bench's 1x and 16x)
#
# For each dump, REPS times (default 5), cold (the dump's files evicted from the page
# cache with posix_fadvise(DONTNEED) just before) and warm (right after), one pass of:
#   summarize  the whole-dump digest `cupmon stats DUMP` prints, verification included
#   verify     the verification alone (every closed segment's frames against their seals)
#   decode     every record decoded (what a verification by reading the records costs)
# and `cupmon stats DUMP` itself, without marks of verified segments (stats-first: each
# segment read and checked) and with the marks the run before left (stats-marked: the
# digests alone, as before verification). The digests' own cost is summarize - verify. Environment: CUPMON (default target/release/cupmon, built here),
# REPS, WORK (scratch directory; default a new one under /tmp; dumps removed unless
# REUSE=1, as in run.sh). Prints the raw rows, then a Markdown table of medians
# [min..max].
set -euo pipefail
cd "$(dirname "$0")/../.."

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2400 38400)
reps=${REPS:-5}
if [ -z "${CUPMON:-}" ]; then
    cargo build --release -q -p cupmon-cli -p cupmon-bench-slice
    CUPMON=$PWD/target/release/cupmon
else
    cargo build --release -q -p cupmon-bench-slice
fi
make_dump=$PWD/target/release/make-dump
cost=$PWD/target/release/verify-cost
work=${WORK:-$(mktemp -d /tmp/cupmon-verify-bench.XXXXXX)}
mkdir -p "$work"
reuse=${REUSE:-}

evict() {
    sync
    python3 - "$1" <<'PY'
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        fd = os.open(os.path.join(root, f), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
}

raw=$work/verify.tsv
: >"$raw"
for mib in "${sizes[@]}"; do
    dump=$work/d$mib
    made=$work/d$mib.made.txt
    if [ -n "$reuse" ] && [ -d "$dump" ] && [ -s "$made" ]; then
        line=$(cat "$made")
    else
        rm -rf "$dump" "$made"
        line=$("$make_dump" "$dump" "$mib" --digests)
        echo "$line" >"$made"
    fi
    echo "$line" >&2
    disk=$(du -sm "$dump/segments" | cut -f1)
    for mode in summarize verify decode stats-first stats-marked; do
        for rep in $(seq "$reps"); do
            for cache in cold warm; do
                [ $cache = warm ] || evict "$dump"
                if [[ $mode = stats-* ]]; then
                    # stats-first: no marks yet (every segment verified); stats-marked:
                    # the marks of the run before (no segment read).
                    [ $mode = stats-marked ] || rm -rf "$work/cache"
                    mkdir -p "$work/cache"
                    start=$(date +%s.%N)
                    XDG_CACHE_HOME=$work/cache "$CUPMON" stats "$dump" >/dev/null
                    secs=$(python3 -c "import time; print(f'{time.time() - $start:.3f}')")
                else
                    secs=$("$cost" "$dump" $mode | cut -d' ' -f2)
                fi
                printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$mib" "$disk" "$mode" "$cache" "$rep" "$secs" | tee -a "$raw"
            done
        done
    done
    [ -n "$reuse" ] || rm -rf "$dump" "$made"
done

python3 - "$raw" <<'PY'
import statistics, sys
from collections import defaultdict
rows, disk = defaultdict(list), {}
for line in open(sys.argv[1]):
    mib, d, mode, cache, rep, secs = line.rstrip("\n").split("\t")
    rows[(int(mib), mode, cache)].append(float(secs))
    disk[int(mib)] = int(d)
def cell(xs):
    return f"{statistics.median(xs):.3f} [{min(xs):.3f}..{max(xs):.3f}]"
print()
print("| raw MiB | segments MiB | pass | cache | wall s | segments MB/s |")
print("|---|---|---|---|---|---|")
order = {"summarize": 0, "verify": 1, "decode": 2, "stats-first": 3, "stats-marked": 4}
for (mib, mode, cache), v in sorted(rows.items(), key=lambda kv: (kv[0][0], order[kv[0][1]], kv[0][2])):
    rate = disk[mib] * 1.048576 / statistics.median(v) if statistics.median(v) > 0 else float("inf")
    print(f"| {mib} | {disk[mib]} | {mode} | {cache} | {cell(v)} | {rate:.0f} |")
PY
