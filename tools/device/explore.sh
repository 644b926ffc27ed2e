#!/usr/bin/env bash
# First look at a GPU host: driver facts, identifiers, and the CUDA_VISIBLE_DEVICES matrix.
set -x
nvidia-smi; nvidia-smi -L; nvidia-smi topo -m
nvidia-smi --query-gpu=index,name,pci.bus_id,uuid,memory.total,memory.used,compute_cap,mig.mode.current --format=csv
cat /proc/driver/nvidia/version; ls /proc/driver/nvidia/gpus/; cat /proc/driver/nvidia/gpus/*/information
ls -l /dev/nvidia*; cat /proc/sys/kernel/random/boot_id; uname -a; cat /etc/os-release | head -3
ls /sys/bus/pci/devices/ | head -40
for d in /proc/driver/nvidia/gpus/*; do b=$(basename $d); cat /sys/bus/pci/devices/${b,,}/numa_node /sys/bus/pci/devices/${b,,}/local_cpulist 2>&1; done
ldconfig -p | grep -E "nvidia-ml|libcuda"; which unshare nvitop; python3 -m pip show nvitop 2>&1 | head -2
cp /usr/local/cuda/include/nvml.h /usr/local/cuda/include/cuda.h $OUT/ 2>/dev/null || find / -name nvml.h -not -path "*/proc/*" 2>/dev/null | head
gcc -O2 -o /tmp/cuda_probe bench/cuda_probe.c -ldl
python3 tools/device/cvd_matrix.py /tmp/cuda_probe > $OUT/cvd_matrix.jsonl
cat $OUT/cvd_matrix.jsonl
nvidia-smi --query-compute-apps=pid,used_memory,gpu_uuid --format=csv
