#!/usr/bin/env python3
"""Run the minimal CUDA probe (bench/cuda_probe.c) under many CUDA_VISIBLE_DEVICES /
CUDA_DEVICE_ORDER values and print one JSON line per case.  Used on the GPU host to
measure the driver's rules; the output becomes tests/vectors/*.jsonl.
usage: cvd_matrix.py PROBE > out.jsonl"""
import json, os, subprocess, sys, time

probe = sys.argv[1]
smi = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.split()
u0, u1 = smi[0], smi[1]
h0, h1 = u0[4:], u1[4:]
UNSET = None
cases = []
def c(cvd, cdo=UNSET, note=""):
    cases.append((cvd, cdo, note))

for v in [UNSET, "1,0", "1", "0,0", "1,1,0", "0,5,1", "5", "5,0", "", "-1", "0,-1,1",
          u1, "GPU-" + h1[:8], "GPU-" + h1[:4], h1, u1 + ",0", u0 + "," + u1,
          "1,GPU-deadbeef,0", " 1", "1 ,0", "1, 0", "1;0", "1:0", "01", "+1", "1a",
          "a", "all", "NoDevFiles", "GPU-",
          # new cases, not in the reference doc
          "0," + u1, "1," + u0, "0," + u0, u1 + "," + u1, u1 + ",1", u1 + ",5",
          "GPU-" + h1[:4] + "," + u1, "GPU-" + h1.upper(), "gpu-" + h1, " " + u1, u1 + " ",
          u1 + " ,0", u0 + ", " + u1, u0 + ",,", "0,", ",0", "0,,1", "0x1", "-0", "1,-0",
          "4294967296", "4294967297", "18446744073709551616", "18446744073709551617",
          "0 1", "\t1", "1\n", "MIG-" + h1, "MIG-" + u1 + "/0/0", u1 + "-0",
          "GPU-" + h1.replace("-", ""), "0,5,0", "5,0,0", "1,0,1", "0,1,5", "1,0,",
          "GPU-" + h0[:1], "GPU-" + h1[:1], "GPU-" + h0[:2], "2", "1,2", "GPU-" + h1[:3],
          "GPU-" + h1[:9], "GPU-" + h1[:8] + "x", u1 + "x", "0,NoDevFiles", "none", "void",
          "1 0", "+-1", "--1", "00000000:00:07.0", "0000:00:07.0", "1.5", "1e0"]:
    c(v)
for o in ["PCI_BUS_ID", "FASTEST_FIRST", "pci_bus_id", "", "garbage", " PCI_BUS_ID",
          "PCI_BUS_ID ", "fastest_first", "PCI_BUS_ID\n"]:
    c(UNSET, o)
c("1,0", "PCI_BUS_ID"); c("5", "garbage"); c("0,0", "garbage"); c("1", ""); c("5", "")
c("0,0", "PCI_BUS_ID"); c(u1, "PCI_BUS_ID")

for cvd, cdo, note in cases:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    if cvd is not None: env["CUDA_VISIBLE_DEVICES"] = cvd
    if cdo is not None: env["CUDA_DEVICE_ORDER"] = cdo
    t = time.perf_counter()
    p = subprocess.run([probe], env=env, capture_output=True, text=True)
    ms = (time.perf_counter() - t) * 1000
    try:
        r = json.loads(p.stdout)
    except Exception:
        r = {"raw": p.stdout, "stderr": p.stderr}
    print(json.dumps({"CUDA_VISIBLE_DEVICES": cvd, "CUDA_DEVICE_ORDER": cdo,
                      "error": r.get("error"),
                      "uuids": [d["uuid"] for d in r.get("devices", [])],
                      "ms": round(ms, 1)}), flush=True)
