#!/usr/bin/env bash
# The closing GPU-host run: core validation, issue 4 and 5 scripts, and the simulated-host
# flatness benchmark, in one lease.  Carry build-dev (gpumap, sim/, hosts/).
set -u
bash tools/device/validate_core.sh > /dev/null 2>&1
OUT=$OUT bash tools/device/run_two_jobs.sh > /dev/null 2>&1
OUT=$OUT bash tools/device/ps_vs_torch.sh > /dev/null 2>&1
G=build-dev/gpumap
for n in 2 8 64; do python3 bench/make_host.py $n > /tmp/h$n.json; done
python3 bench/make_host.py 64 --mixed > /tmp/h64m.json
GPUMAP_CACHE_DIR=/tmp/c64 $G map --simulate /tmp/h64m.json > /dev/null
python3 bench/compare.py --runs 30 --out $OUT/bench.jsonl "map-sim-2=$G map --simulate /tmp/h2.json" \
  "map-sim-8=$G map --simulate /tmp/h8.json" "map-sim-64=$G map --simulate /tmp/h64.json" \
  "map-sim-64-mixed-cached=GPUMAP_CACHE_DIR=/tmp/c64 $G map --simulate /tmp/h64m.json" > $OUT/flat.txt 2>&1
for f in $OUT/*.log $OUT/flat.txt; do echo "=== $f"; grep -E "VERDICT|agrees|matches|list ==|seen in NVML|overhead|per run|OK|UNEXPECTED|MISSING|ratio|median|gpumap-|nvidia-smi-|map-sim|c-cuInit|torch-|timing|gpumap ps|nvidia-smi query" $f | tail -40; done
echo "=== topology and run overhead"; bash tools/device/topo_overhead.sh 2>&1 | grep -v "gpumap trace" 
