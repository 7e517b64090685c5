#!/bin/bash
cd /work/wt/i29d
B=/tmp/i29d-before A=/tmp/i29d-after W=/tmp/i29d-data
echo "## $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in 1 2 3; do for b in before after; do
  d=$B; [ $b = after ] && d=$A
  rm -rf $W/bp; echo "round $r $b fixtures (cuda_workload + torch_mlp) --runs 10: $(taskset -c 1 $d/bench-parquet export $W/bp tests/fixtures/h200-cupti13.0/cuda_workload tests/fixtures/h200-cupti13.0/torch_mlp --runs 10 2>&1 | grep -E '^export, CPU s')"
  rm -rf $W/bp; echo "round $r $b fleet-seg (4 x 250,000 kernels) --runs 5: $(taskset -c 1 $d/bench-parquet export $W/bp $W/fleet-seg --runs 5 2>&1 | grep -E '^export, CPU s|^M kernel rows/s' | tr '\n' ' ') load $(cut -d' ' -f1 /proc/loadavg)"
done; done
echo "## end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
