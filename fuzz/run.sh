#!/usr/bin/env bash
# Run every fuzz target for a fixed time each and say, per target, how many inputs it
# ran and any crash it found (the crashing input is kept in fuzz/artifacts/<target>/).
#
#   fuzz/run.sh [SECONDS]        SECONDS per target, default 60
#
# Needs a nightly toolchain (libFuzzer's coverage instrumentation). With cargo-fuzz
# installed it builds through `cargo fuzz build`; without, it passes the same flags
# itself. Without nightly it says SKIPPED and only checks that the targets compile.
# Corpora grow in fuzz/corpus/<target> (ignored by git); fuzz/seeds/<target> seeds them.
# Exit status: 1 when a target crashed, else 0.
set -u
secs=${1:-60}
cd "$(dirname "$0")"
targets=$(sed -n '/^\[\[bin\]\]/,/^name/s/^name = "\(.*\)"$/\1/p' Cargo.toml)
triple=$(rustc -vV | sed -n 's/^host: //p')

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "SKIPPED: fuzz/run.sh: no nightly toolchain (libFuzzer's instrumentation needs one);"
    echo "SKIPPED: checking that the targets compile instead"
    cargo check --bins || exit 1
    exit 0
fi

if cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo +nightly fuzz build -O --debug-assertions || exit 1
else
    # What `cargo fuzz build -O --debug-assertions` passes: SanitizerCoverage for
    # libFuzzer, cfg(fuzzing), for the target triple only (not build scripts).
    RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions" \
        cargo +nightly build --release --bins --target "$triple" || exit 1
fi
bin_dir=target/$triple/release

crashed=0
printf '%-18s %12s  %s\n' target runs result
for t in $targets; do
    mkdir -p "corpus/$t" "artifacts/$t"
    seeds=()
    [ -d "seeds/$t" ] && seeds=("seeds/$t")
    log=$(mktemp)
    before=$(ls "artifacts/$t" | wc -l)
    "$bin_dir/$t" -max_total_time="$secs" -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" "corpus/$t" "${seeds[@]}" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    [ -z "$runs" ] && runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -1)
    new=$(ls -t "artifacts/$t" | head -n $(( $(ls "artifacts/$t" | wc -l) - before )))
    if [ "$rc" -ne 0 ] || [ -n "$new" ]; then
        crashed=1
        printf '%-18s %12s  CRASH (exit %s): %s\n' "$t" "${runs:-?}" "$rc" \
            "$(echo $new | sed "s|\([^ ]*\)|artifacts/$t/\1|g")"
        grep -m3 -E 'panicked|ERROR: libFuzzer|SUMMARY' "$log" | sed 's/^/    /'
    else
        printf '%-18s %12s  no crash in %s s\n' "$t" "${runs:-?}" "$secs"
    fi
    rm -f "$log"
done
exit $crashed
