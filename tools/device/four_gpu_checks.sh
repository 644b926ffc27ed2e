#!/usr/bin/env bash
# The same checks on a 4-GPU host (nvidia-h200-x4), when one is lent.
G=build-dev/gpumap
export GPUMAP_LOCK_DIR=$(mktemp -d)/leases
nvidia-smi topo -m | head -6
bash tools/device/validate_core.sh > /dev/null 2>&1
grep -E "matches|list ==|agrees|seen in NVML" $OUT/core.log
gcc -O2 -o /tmp/cuda_probe bench/cuda_probe.c -ldl
for v in "3,1" "2,0,3" "3,2,1,0" "1,3,5,0" "2,2" "GPU-x,1"; do
  CUDA_VISIBLE_DEVICES=$v $G map --check --json | python3 -c "import json,sys; j=json.load(sys.stdin); print('CVD=$v agree', j['check']['agree'], [d['nvml_index'] for d in j['cuda']['devices']], j['cuda']['error'])"
done
CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=3,1 $G map --check --json | python3 -c "import json,sys; j=json.load(sys.stdin); print('PCI 3,1 agree', j['check']['agree'], [d['nvml_index'] for d in j['cuda']['devices']])"
$G pick --gpus 3; $G pick --gpus 4 --json | python3 -c "import json,sys; j=json.load(sys.stdin); print(j['notes'])"
$G list
