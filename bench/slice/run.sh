#!/usr/bin/env bash
# Time of a one-second slice of a flight-recorder dump, on synthetic segmented dumps
# (make-dump) of 1x and 16x the size: issue 13, "slicing one second out of a 24-hour
# dump takes under a second and costs the same for a 1 GB and a 100 GB dump".
#
#   bench/slice/run.sh [RAW_MIB_1X]     (default 2400: 1.4 h of recording; 16x = 21 h)
#
# Commands, each on the second in the middle of the dump: `cupmon decode DUMP --from
# +M --to +M+1 -o s.json` (window), the same with `--format chrome`, `cupmon decode
# DUMP --last 1s -o s.json`, and `cupmon stats DUMP --from +M --to +M+1`.
# Each REPS times (default 5) "cold" (every file of the dump evicted from the page
# cache with posix_fadvise(DONTNEED) just before; the binary itself stays cached) and
# "warm" (right after a run of the same command). Environment: CUPMON (default:
# target/release/cupmon, built here), REPS, WORK (scratch directory; default a new one
# under /tmp). The dumps are removed at the end, unless REUSE=1: then they stay in WORK
# and a later run with the same WORK and REUSE=1 uses them (making the 16x one takes
# minutes), e.g. to time two builds of cupmon on the same dumps. Prints the raw rows,
# then a Markdown table of median and [min..max] wall time and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/../.."

x1=${1:-2400}
reps=${REPS:-5}
if [ -z "${CUPMON:-}" ]; then
    cargo build --release -q -p cupmon-cli -p cupmon-bench-slice
    CUPMON=$PWD/target/release/cupmon
else
    cargo build --release -q -p cupmon-bench-slice
fi
make_dump=$PWD/target/release/make-dump
work=${WORK:-$(mktemp -d /tmp/cupmon-slice-bench.XXXXXX)}
mkdir -p "$work"
reuse=${REUSE:-}
if [ -n "$reuse" ]; then
    trap 'rm -f "$work/s.json"' EXIT
else
    trap 'rm -rf "$work/d1x" "$work/d16x" "$work/s.json"' EXIT
fi

evict() {
    sync
    python3 - "$1" <<'EOF'
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        fd = os.open(os.path.join(root, f), os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
EOF
}

raw=$work/raw.tsv
: >"$raw"
for scale in 1 16; do
    dump=$work/d${scale}x
    # make-dump's line for this size: the dump there is complete and of this size.
    made=$work/d${scale}x.made-$((x1 * scale)).txt
    if [ -n "$reuse" ] && [ -d "$dump" ] && [ -s "$made" ]; then
        line=$(cat "$made")
    else
        rm -rf "$dump" "$work/d${scale}x.made-"*.txt
        line=$("$make_dump" "$dump" $((x1 * scale)))
        echo "$line" >"$made"
    fi
    echo "$line" >&2
    # "... over 5012.3 s of recording ..."
    span=$(sed -E 's/.* over ([0-9.]+) s of recording.*/\1/' <<<"$line")
    mid=$(python3 -c "print(int($span / 2))")
    disk=$(du -sm "$dump" | cut -f1)
    for cmd in window chrome last stats; do
        case $cmd in
            window) args=(decode "$dump" --from "+$mid" --to "+$((mid + 1))" -o "$work/s.json") ;;
            chrome) args=(decode "$dump" --format chrome --from "+$mid" --to "+$((mid + 1))" -o "$work/s.json") ;;
            last) args=(decode "$dump" --last 1s -o "$work/s.json") ;;
            stats) args=(stats "$dump" --from "+$mid" --to "+$((mid + 1))") ;;
        esac
        for rep in $(seq "$reps"); do
            for cache in cold warm; do
                [ $cache = warm ] || evict "$dump"
                /usr/bin/time -f "%e %M" -o "$work/time.txt" "$CUPMON" "${args[@]}" >"$work/stdout.txt" 2>&1
                read -r secs rss <"$work/time.txt"
                events=$(grep -oE '\(([0-9]+) events\)' "$work/stdout.txt" | grep -oE '[0-9]+' | head -1 || true)
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${scale}x" "$((x1 * scale))" "$disk" \
                    "$span" "$cmd" "$cache" "$rep" "$secs" "$rss ${events:--}" | tee -a "$raw"
            done
        done
    done
    [ -n "$reuse" ] || rm -rf "$dump" "$made"
done

python3 - "$raw" <<'EOF'
import statistics, sys
from collections import defaultdict
rows, facts = defaultdict(list), {}
for line in open(sys.argv[1]):
    scale, raw_mib, disk, span, cmd, cache, rep, secs, rss_events = line.rstrip("\n").split("\t")
    rss, events = rss_events.split()
    rows[(scale, cmd, cache)].append((float(secs), int(rss) / 1024))
    facts[scale] = (raw_mib, disk, float(span))
    if events != "-":
        facts[(scale, cmd)] = events
def cell(xs, fmt):
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))}..{fmt.format(max(xs))}]"
print()
for scale in ("1x", "16x"):
    raw_mib, disk, span = facts[scale]
    print(f"- {scale}: {raw_mib} MiB of activity buffers, {disk} MiB on disk, {span / 3600:.1f} h of recording")
print()
print("| command | dump | cache | wall s | peak RSS MiB | events |")
print("|---|---|---|---|---|---|")
order = {"window": 0, "chrome": 1, "last": 2, "stats": 3}
for (scale, cmd, cache), v in sorted(rows.items(), key=lambda kv: (order[kv[0][1]], kv[0][0] != "1x", kv[0][2])):
    print(f"| {cmd} | {scale} | {cache} | {cell([s for s, _ in v], '{:.3f}')} | "
          f"{cell([r for _, r in v], '{:.1f}')} | {facts.get((scale, cmd), '')} |")
EOF
