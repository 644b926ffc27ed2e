#!/usr/bin/env python3
"""Writes a simulated host file with N identical GPUs (or mixed, with --mixed) for the
flatness benchmark of `gpumap map`; --nvswitch: every GPU has 18 NVLinks to NVSwitches (one
fabric), two CPU-affinity halves, for `pick --gpus K` on large NVSwitch hosts.
usage: make_host.py N [--mixed] [--nvswitch] > host.json"""
import hashlib, json, sys

n = int(sys.argv[1])
mixed = "--mixed" in sys.argv
nvswitch = "--nvswitch" in sys.argv
gpus = []
for i in range(n):
    h = hashlib.sha256(f"bench-{i}".encode()).hexdigest()
    newer = mixed and i % 4 == 1
    gpus.append({"name": "NVIDIA H100 80GB HBM3" if not mixed or newer else "NVIDIA A100-SXM4-80GB",
                 "uuid": f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}",
                 "pci_bus_id": f"{i // 256:08X}:{i % 256:02X}:00.0",
                 "compute_capability": "9.0" if not mixed or newer else "8.0",
                 "multiprocessor_count": 132, "memory_total_mib": 81559, "memory_used_mib": 0})
    if nvswitch:
        gpus[-1].update({"nvswitch_links": 18, "cpu_affinity": "0-47" if i * 2 < n else "48-95"})
print(json.dumps({"driver_version": "580.159.04", "cuda_driver_version": 13000, "gpus": gpus}))
