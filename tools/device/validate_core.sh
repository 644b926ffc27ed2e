#!/usr/bin/env bash
# Validation of gpumap list/map on a real GPU host (device tool, nvidia-h200-x2).
# Carry build-dev (a Release build from this machine).  Output: $OUT/core.log, $OUT/check.jsonl, $OUT/bench.jsonl
set -u
G=build-dev/gpumap
exec > >(tee -a "$OUT/core.log") 2>&1
date -u; nvidia-smi --query-gpu=index,name,pci.bus_id,uuid,memory.total,memory.used,compute_cap --format=csv
cat /proc/driver/nvidia/version | head -1; nvidia-smi topo -m
ldd $G
gcc -O2 -o /tmp/cuda_probe bench/cuda_probe.c -ldl
echo "== gpumap list"; $G list; $G list --json > "$OUT/list.json"
echo "== list vs nvidia-smi"
python3 - "$OUT/list.json" <<'PY'
import json, subprocess, sys
j = json.load(open(sys.argv[1]))
smi = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,pci.bus_id,name,memory.total", "--format=csv,noheader,nounits"],
                     capture_output=True, text=True).stdout.strip().splitlines()
ok = True
for line, g in zip(smi, j["gpus"]):
    i, u, p, n, m = [x.strip() for x in line.split(",")]
    same = (int(i), u, p, n, int(m)) == (g["nvml_index"], g["uuid"], g["pci_bus_id"], g["name"], g["memory_total_mib"])
    ok &= same
    print("GPU", i, "matches nvidia-smi" if same else f"DIFFERS: smi={line} gpumap={g}")
print("list == nvidia-smi:", ok and len(smi) == len(j["gpus"]))
PY
echo "== gpumap map (several environments)"
$G map; CUDA_VISIBLE_DEVICES=1,0 $G map; CUDA_VISIBLE_DEVICES=0,0 $G map; CUDA_DEVICE_ORDER= $G map
echo "== gpumap map --check under many environments"
python3 tools/device/check_matrix.py $G /tmp/cuda_probe > "$OUT/check.jsonl"
echo "== does gpumap ever appear in NVML's process list?"
( for i in $(seq 1 20); do $G map --probe >/dev/null; done ) & bg=$!
seen=0
while kill -0 $bg 2>/dev/null; do
  nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader | grep -i gpumap && seen=1
done
echo "gpumap seen in NVML process list: $seen"
echo "== benchmarks"
python3 -c "import torch; print('torch', torch.__version__)" 2>&1 | tail -1
python3 -m pip show nvitop 2>/dev/null | head -1 || echo "nvitop: not installed here"
TORCH='python3 -c "import torch; [torch.cuda.get_device_properties(i).uuid for i in range(torch.cuda.device_count())]"'
python3 bench/compare.py --runs 20 --out "$OUT/bench.jsonl" \
  "nvidia-smi-query=nvidia-smi --query-gpu=index,name,pci.bus_id,uuid,memory.total,memory.used --format=csv" \
  "gpumap-list=$G list" "gpumap-list-json=$G list --json" "gpumap-map=$G map" "gpumap-map-json=$G map --json"
python3 bench/compare.py --runs 10 --out "$OUT/bench.jsonl" \
  "gpumap-list=$G list" "gpumap-map=$G map" "gpumap-map-probe=$G map --probe" "c-cuInit-probe=/tmp/cuda_probe" \
  "torch-mapping=$TORCH"
