#!/bin/bash
# Every trace output of one cupmon binary over the real inputs in the repository, for
# comparing two builds: `merge` (exact and complete), `export`, `decode` (window, Chrome,
# Perfetto, merged with --cpu), `demo` and `combine`, each trace in all four formats
# (.json, .json.gz, .pftrace, .pftrace.gz). Writes the outputs under OUTDIR and
# OUTDIR/SUMS (one line per output: the sha256 of its normalised bytes, see
# trace-outputs-normalise.py: gz decompressed, the .pftrace's clock snapshot, the one
# value taken from the clock at write time, zeroed).
#
# usage: scripts/trace-outputs.sh CUPMON OUTDIR
#   compare two builds: diff OLD/SUMS NEW/SUMS (no output: byte-identical)
set -euo pipefail
cupmon=$(realpath "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
fx=$root/tests/fixtures/h200-cupti13.0
rm -rf "$out"
mkdir -p "$out"
out=$(realpath "$out")
# traceName defaults to the output's path: the same relative names in every run.
cd "$out"
formats=(json json.gz pftrace pftrace.gz)
run() { "$cupmon" "$@" >/dev/null 2>>log.txt || echo "FAILED: $*" >>log.txt; }

for case in cuda_workload torch_mlp; do
  d=$fx/$case
  cpu=$d/kineto_cpu_trace.json
  [ -f "$cpu" ] || cpu=$d/cpu_trace_empty.json
  for f in "${formats[@]}"; do
    run merge --cpu "$cpu" --window "$d/expected_window.json" -o "merge-$case.$f"
    run merge --exact --cpu "$cpu" --window "$d/expected_window.json" -o "merge-exact-$case.$f"
    run export --window "$d/expected_window.json" -o "export-$case.$f"
    run export --exact --window "$d/expected_window.json" -o "export-exact-$case.$f"
    run export --rank 3 --world-size 8 --window "$d/expected_window.json" -o "export-rank-$case.$f"
    run decode "$d" --format chrome -o "decode-$case.trace.$f"
    run decode "$d" --format chrome --exact -o "decode-exact-$case.trace.$f"
  done
  run decode "$d" --format window -o "decode-$case.window.json"
  run decode "$d" --cpu "$cpu" -o "decode-cpu-$case.trace.json.gz"
  # The decoded window (what window-N.json holds) exported as a window trace is.
  for f in "${formats[@]}"; do
    run export --window "decode-$case.window.json" -o "window-$case.trace.$f"
  done
done

d=$fx/torch_transformer
for f in "${formats[@]}"; do
  run decode "$d/dump" --format chrome -o "decode-transformer.trace.$f"
  run decode "$d/dump" --cpu "$d/kineto_cpu_trace.json" -o "decode-cpu-transformer.$f"
  run demo -o "demo.trace.$f"
done
run decode "$d/dump" --format pftrace -o "decode-transformer-pf.bin"
run decode "$d/dump" --format window -o "decode-transformer.window.json"
for f in "${formats[@]}"; do
  run export --window decode-transformer.window.json -o "window-transformer.trace.$f"
  run combine merge-torch_mlp.json export-rank-cuda_workload.json -o "combine.$f"
done

python3 "$root/scripts/trace-outputs-normalise.py" $(ls | grep -v -e '^log.txt$' -e '^SUMS$') >SUMS
echo "$(wc -l <SUMS) outputs, $(grep -c FAILED log.txt || true) failed runs; sums in $out/SUMS" >&2
