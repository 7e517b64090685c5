#!/bin/bash
# usage: export_all.sh CUPMON OUTDIR  -- exports fixtures and generated dumps with several option sets
set -eu
bin=$1 out=$2 W=/tmp/i29d-data F=tests/fixtures/h200-cupti13.0
rm -rf "$out"; mkdir -p "$out"
x() { local name=$1; shift; "$bin" export-parquet "$@" -o "$out/$name" --job j --host h >"$out/$name.stdout" 2>"$out/$name.stderr" || echo "FAIL $name"; }
x fx-cuda $F/cuda_workload
x fx-mlp $F/torch_mlp
x fx-all $F/cuda_workload $F/torch_mlp
for d in $F/*/; do [ -f "$d/cupti_monitor_meta.bin" ] && x "fx-$(basename $d)" "$d"; done
x fx-transformer $F/torch_transformer/dump
x fleet-seg $W/fleet-seg
x fleet-raw $W/fleet-raw
x edges $W/edges
x fleet-seg-kern $W/fleet-seg --kinds kernel
x fleet-seg-api $W/fleet-seg --kinds memcpy,memset,api
x fleet-seg-last $W/fleet-seg --last 30s
