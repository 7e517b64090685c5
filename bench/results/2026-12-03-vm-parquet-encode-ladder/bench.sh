#!/bin/bash
# before/after speed of the parquet export: cli_ab.sh on a fixture and on a generated 4-rank dump, then bench-parquet export in process
cd /work/wt/i29d
B=/tmp/i29d-before A=/tmp/i29d-after W=/tmp/i29d-data
echo "## $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## cli_ab.sh on tests/fixtures/h200-cupti13.0/torch_mlp, 15 pairs"
WORK=$W/ab1 bench/parquet/cli_ab.sh $B/cupmon $A/cupmon tests/fixtures/h200-cupti13.0/torch_mlp 15 1
echo "## cli_ab.sh on a generated 4-rank segment dump (bench-parquet gen --ranks 4 --kernels-per-rank 250000 --seconds 120 --seed 7 --layout segments), 11 pairs"
WORK=$W/ab2 bench/parquet/cli_ab.sh $B/cupmon $A/cupmon $W/fleet-seg 11 1
for r in 1 2; do for b in before after; do
  d=$B; [ $b = after ] && d=$A
  echo "## round $r $b: bench-parquet export OUT tests/fixtures/h200-cupti13.0/cuda_workload tests/fixtures/h200-cupti13.0/torch_mlp --runs 10 (load $(cut -d' ' -f1-3 /proc/loadavg))"
  rm -rf $W/bp; taskset -c 1 $d/bench-parquet export $W/bp tests/fixtures/h200-cupti13.0/cuda_workload tests/fixtures/h200-cupti13.0/torch_mlp --runs 10 2>&1 | tail -4
  echo "## round $r $b: bench-parquet export OUT fleet-seg --runs 5"
  rm -rf $W/bp; taskset -c 1 $d/bench-parquet export $W/bp $W/fleet-seg --runs 5 2>&1 | tail -4
done; done
echo "## end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
