#!/usr/bin/env bash
# NVLink detection on the real host and the cost of `gpumap run`, after the NVSwitch change.
G=build-dev/gpumap
export GPUMAP_LOCK_DIR=$(mktemp -d)/leases
nvidia-smi topo -m | head -3
$G pick --gpus 2 --json | python3 -c "import json,sys; j=json.load(sys.stdin); print('pick --gpus 2 notes:', j['notes'])"
GPUMAP_TRACE=1 $G pick >/dev/null
echo; GPUMAP_TRACE=1 $G pick --gpus 2 >/dev/null
python3 bench/compare.py --runs 40 "true=/bin/true" "gpumap-run-true=$G run -- true" \
  "gpumap-run-true-no-cpu-bind=$G run --no-cpu-bind -- true" "gpumap-run-2gpus-true=$G run --gpus 2 -- true" \
  "gpumap-pick=$G pick" "gpumap-list=$G list" \
  "nvidia-smi-query=nvidia-smi --query-gpu=index,name,pci.bus_id,uuid,memory.total,memory.used --format=csv"
