#!/usr/bin/env bash
# Where gpumap list's time goes on a real host: per-NVML-call trace, and whole-process timings.
G=${GPUMAP:-build/gpumap}
for i in 1; do GPUMAP_TRACE=1 $G list >/dev/null; echo; done
python3 bench/compare.py --runs 30 \
  "nvidia-smi-query=nvidia-smi --query-gpu=index,name,pci.bus_id,uuid,memory.total,memory.used --format=csv" \
  "gpumap-list=$G list" "gpumap-version=$G --version" "gpumap-list-sim=$G list --simulate h200x2"
