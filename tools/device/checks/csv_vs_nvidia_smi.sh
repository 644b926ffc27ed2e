#!/usr/bin/env bash
# `gpumap list --query-gpu` and `gpumap ps --query` against nvidia-smi's own CSV on a GPU host, field
# by field (issue 24 point 5).  Live values (memory.used/free, utilization, used_memory) may differ
# between the two reads: they are compared as present/absent, the rest exactly.
# usage: tools/device/checks/csv_vs_nvidia_smi.sh path/to/gpumap
set -u
G=${1:-build/gpumap}
pass=0 fail=0
check() { if [ "$2" = "$3" ]; then echo "PASS $1"; pass=$((pass + 1)); else echo "FAIL $1"; diff <(echo "$2") <(echo "$3") | head -5; fail=$((fail + 1)); fi; }
F=index,uuid,pci.bus_id,name,memory.total,compute_cap
for fmt in csv csv,noheader csv,noheader,nounits; do
  check "list --query-gpu=$F --format=$fmt" "$(nvidia-smi --query-gpu=$F --format=$fmt)" "$("$G" list --query-gpu=$F --format=$fmt)"
done
L=index,memory.used,memory.free,utilization.gpu
shape() { sed -E 's/[0-9]+/N/g'; }
check "list --query-gpu=$L (shape)" "$(nvidia-smi --query-gpu=$L --format=csv | shape)" "$("$G" list --query-gpu=$L --format=csv | shape)"
python3 -c 'import torch, time; x = torch.ones(1 << 20, device="cuda"); time.sleep(8)' &
holder=$!
sleep 5
P=pid,gpu_uuid,gpu_bus_id
check "ps --query=$P --format=csv" "$(nvidia-smi --query-compute-apps=$P --format=csv)" "$("$G" ps --query=$P --format=csv)"
check "ps --query=pid,used_memory (shape)" "$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv | shape)" \
  "$("$G" ps --query=pid,used_memory --format=csv | shape)"
wait "$holder"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
