#!/usr/bin/env bash
# explain / which / verify / doctor / bind / pick on the real host, with exit codes.
G=${GPUMAP:-build/gpumap}
export GPUMAP_LOCK_DIR=$(mktemp -d)/leases
# The second GPU's UUID; on a one-GPU host a UUID no GPU has (nvidia-smi -i 1 prints "No devices
# were found" there, which would become a CUDA_VISIBLE_DEVICES entry of its own).
U1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1 2>/dev/null | grep '^GPU-') ||
  { U1=GPU-00000000-0000-0000-0000-000000000000; echo "one GPU here: a UUID of no GPU stands for the second ($U1)"; }
# Each command's output indented: gpumap's own "FAIL" (verify's verdict) is not the suite's.
x() { echo "\$ $*"; "$@" 2>&1 | sed 's/^/  /'; echo "[exit ${PIPESTATUS[0]}]"; }
x $G which 1 00000000:00:06.0
CUDA_VISIBLE_DEVICES=1,0 x $G verify --expect 1,0
x $G verify --expect 1,0
CUDA_VISIBLE_DEVICES=0,0 x $G verify --expect 0
CUDA_VISIBLE_DEVICES="0,$U1" x $G explain
CUDA_DEVICE_ORDER=pci_bus_id CUDA_VISIBLE_DEVICES=0x1 x $G doctor
LOCAL_RANK=1 x $G bind -- sh -c 'echo rank sees CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER=$CUDA_DEVICE_ORDER; python3 -c "import torch; print(\"torch uuid\", torch.cuda.get_device_properties(0).uuid)"'
x $G bind -- true
x $G pick --gpus 2
x $G pick --format env
python3 bench/compare.py --runs 40 \
  "nvidia-smi-query=nvidia-smi --query-gpu=index,name,pci.bus_id,uuid,memory.total,memory.used --format=csv" \
  "gpumap-list=$G list" "gpumap-map=$G map" "gpumap-run-true=$G run -- true" "gpumap-ps=$G ps"
