#!/usr/bin/env python3
"""On a GPU host: run `gpumap map --check --json` under many environments and compare
gpumap's prediction with (a) the driver as gpumap's own probe saw it and (b) the minimal
C probe (bench/cuda_probe.c), the independent ground truth.
usage: check_matrix.py GPUMAP CUDA_PROBE   (one JSON line per environment in $OUT/check_matrix.jsonl;
a PASS or FAIL line per comparison and the summary on stdout)"""
import json, os, subprocess, sys

gpumap, probe = sys.argv[1], sys.argv[2]
uu = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True, text=True).stdout.split()
u0, u1 = uu[0], uu[-1]  # (one GPU: the same UUID twice; the index cases still test the rules)
U = None
cases = [
    {}, {"CUDA_VISIBLE_DEVICES": "1,0"}, {"CUDA_VISIBLE_DEVICES": "1"}, {"CUDA_VISIBLE_DEVICES": "0,0"},
    {"CUDA_VISIBLE_DEVICES": "0,5,1"}, {"CUDA_VISIBLE_DEVICES": "5"}, {"CUDA_VISIBLE_DEVICES": ""},
    {"CUDA_VISIBLE_DEVICES": "-1"}, {"CUDA_VISIBLE_DEVICES": u1}, {"CUDA_VISIBLE_DEVICES": u1[:8]},
    {"CUDA_VISIBLE_DEVICES": u1[4:]}, {"CUDA_VISIBLE_DEVICES": u1 + ",0"}, {"CUDA_VISIBLE_DEVICES": "0," + u1},
    {"CUDA_VISIBLE_DEVICES": u0 + "," + u1}, {"CUDA_VISIBLE_DEVICES": u1 + "," + u0},
    {"CUDA_VISIBLE_DEVICES": u1 + "," + u1[:6]}, {"CUDA_VISIBLE_DEVICES": "1;0"},
    {"CUDA_VISIBLE_DEVICES": " 1, 0"}, {"CUDA_VISIBLE_DEVICES": "4294967297,0"},
    {"CUDA_VISIBLE_DEVICES": "00000000:00:07.0"}, {"CUDA_VISIBLE_DEVICES": "all"},
    {"CUDA_VISIBLE_DEVICES": "0,,1"}, {"CUDA_VISIBLE_DEVICES": "1,0,"}, {"CUDA_VISIBLE_DEVICES": " " + u1},
    {"CUDA_VISIBLE_DEVICES": u0.upper().replace("GPU-", "GPU-")}, {"CUDA_VISIBLE_DEVICES": "MIG-" + u1[4:]},
    {"CUDA_VISIBLE_DEVICES": "GPU-" + u0[4:5]}, {"CUDA_VISIBLE_DEVICES": "1,GPU-deadbeef,0"},
    {"CUDA_VISIBLE_DEVICES": "-0,1"}, {"CUDA_VISIBLE_DEVICES": "2,1"},
    {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, {"CUDA_DEVICE_ORDER": "FASTEST_FIRST"}, {"CUDA_DEVICE_ORDER": ""},
    {"CUDA_DEVICE_ORDER": "pci_bus_id"}, {"CUDA_DEVICE_ORDER": "PCI_BUS_ID "},
    {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "1,0"},
    {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": "1"},
    {"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": u0},
    {"CUDA_DEVICE_ORDER": "garbage", "CUDA_VISIBLE_DEVICES": "5"},
    {"CUDA_DEVICE_ORDER": "FASTEST_FIRST", "CUDA_VISIBLE_DEVICES": "0,1"},
    {"NVIDIA_VISIBLE_DEVICES": "1"}, {"NVIDIA_VISIBLE_DEVICES": "none", "CUDA_VISIBLE_DEVICES": "0"},
    {"LOCAL_RANK": "1", "CUDA_VISIBLE_DEVICES": "1"}, {"SLURM_STEP_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "0,1"},
    {"CUDA_VISIBLE_DEVICES": "1 0"}, {"CUDA_VISIBLE_DEVICES": "+1,-0"}, {"CUDA_VISIBLE_DEVICES": "GPU-"},
    {"CUDA_VISIBLE_DEVICES": u0 + "x"}, {"CUDA_VISIBLE_DEVICES": u0[:12] + "zz"}, {"CUDA_VISIBLE_DEVICES": "0x1"},
]
base = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
agree = truth_agree = 0
rows = open(os.path.join(os.environ.get("OUT", "."), "check_matrix.jsonl"), "w")
for c in cases:
    env = dict(base, **c)
    r = subprocess.run([gpumap, "map", "--check", "--json"], env=env, capture_output=True, text=True)
    t = json.loads(subprocess.run([probe], env=env, capture_output=True, text=True).stdout)
    try:
        j = json.loads(r.stdout)
    except Exception:
        print(f"FAIL {c}: map --check --json is not JSON: {r.stderr.strip()[:200]}")
        continue
    pred = j["check"]["predicted"]
    got = [d["uuid"] for d in pred["devices"]]
    truth_err = t["error"].split("(")[0] if t["error"] else None
    ok_truth = got == [d["uuid"] for d in t["devices"]] and pred["error"] == truth_err
    agree += j["check"]["agree"]
    truth_agree += ok_truth
    print(json.dumps({"env": c, "agree_with_own_probe": j["check"]["agree"], "agree_with_c_probe": ok_truth,
                      "predicted": got, "predicted_error": pred["error"], "c_probe": t,
                      "findings": [f["id"] for f in j["findings"]]}), file=rows, flush=True)
    if not (j["check"]["agree"] and ok_truth):
        print(f"FAIL {c}: predicted {got} {pred['error']}, gpumap's probe agrees: {j['check']['agree']}, "
              f"the C probe saw {t}")
print(f"{len(cases)} environments: gpumap prediction agrees with its driver probe in {agree}, "
      f"with the minimal C probe in {truth_agree}")
print(("PASS" if agree == truth_agree == len(cases) else "FAIL") +
      f": map --check's prediction against both probes in {len(cases)} environments")
