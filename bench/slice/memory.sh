#!/usr/bin/env bash
# Peak RSS and wall time of `cupmon decode DUMP -o out.json` (window format),
# `cupmon decode DUMP --format chrome -o out.json` and `cupmon stats DUMP` on synthetic
# segmented dumps (bench/slice's make-dump) of several sizes: issue 13, "decoding and
# exporting stream: memory stays flat whatever the dump's length".
#
#   bench/slice/memory.sh [RAW_MIB ...]      (default: 256 1024)
#
# Environment: CUPMON (the binary measured; default: target/release/cupmon, built
# here), CUPMON_BEFORE (optional: a second binary, e.g. one built from an older
# commit, measured interleaved with the first), REPS (default 3), WORK (scratch
# directory; default a new one under /tmp, removed at the end). Each repetition runs
# every command of every binary once, in turn; the output file is deleted after each
# run. Peak RSS is GNU time's %M (ru_maxrss). Prints a Markdown table (median and
# [min..max] over the repetitions) after the raw rows.
set -euo pipefail
cd "$(dirname "$0")/../.."

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(256 1024)
reps=${REPS:-3}
if [ -z "${CUPMON:-}" ]; then
    cargo build --release -q -p cupmon-cli -p cupmon-bench-slice
    CUPMON=$PWD/target/release/cupmon
else
    cargo build --release -q -p cupmon-bench-slice
fi
make_dump=$PWD/target/release/make-dump
work=${WORK:-$(mktemp -d /tmp/cupmon-decode-memory.XXXXXX)}
mkdir -p "$work"
trap '[ -n "${WORK:-}" ] || rm -rf "$work"' EXIT

bins=("after=$CUPMON")
[ -z "${CUPMON_BEFORE:-}" ] || bins=("before=$CUPMON_BEFORE" "${bins[@]}")
raw=$work/raw.tsv
: >"$raw"
for size in "${sizes[@]}"; do
    dump=$work/d$size
    [ -d "$dump" ] || "$make_dump" "$dump" "$size" >&2
    disk=$(du -sm "$dump" | cut -f1)
    for rep in $(seq "$reps"); do
        for b in "${bins[@]}"; do
            name=${b%%=*} bin=${b#*=}
            for cmd in window chrome stats; do
                case $cmd in
                    window) args=(decode "$dump" -o "$work/out.json") ;;
                    chrome) args=(decode "$dump" --format chrome -o "$work/out.json") ;;
                    stats) args=(stats "$dump") ;;
                esac
                /usr/bin/time -f "%M %e" -o "$work/time.txt" "$bin" "${args[@]}" >/dev/null 2>&1
                read -r rss secs <"$work/time.txt"
                out_mb=$( [ -f "$work/out.json" ] && du -m "$work/out.json" | cut -f1 || echo 0)
                rm -f "$work/out.json"
                printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$disk" "$name" "$cmd" "$rep" \
                    "$rss" "$secs" "$out_mb" | tee -a "$raw"
            done
        done
    done
done

python3 - "$raw" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = defaultdict(list)
out = {}
for line in open(sys.argv[1]):
    size, disk, name, cmd, rep, rss, secs, out_mb = line.split()
    rows[(int(size), disk, cmd, name)].append((int(rss) / 1024, float(secs)))
    out[(int(size), cmd)] = out_mb
def cell(xs, fmt):
    return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))}..{fmt.format(max(xs))}]"
print()
print("| dump (raw MiB / on disk MiB) | command | output MiB | binary | peak RSS MiB | wall s |")
print("|---|---|---|---|---|---|")
for (size, disk, cmd, name), v in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][3] != "before")):
    print(f"| {size} / {disk} | {cmd} | {out[(size, cmd)]} | {name} | "
          f"{cell([r for r, _ in v], '{:.1f}')} | {cell([s for _, s in v], '{:.2f}')} |")
EOF
