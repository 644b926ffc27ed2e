#!/usr/bin/env python3
"""Driver vectors (tests/vectors/ format) for long first entries in the legacy MIG-GPU- form, which
the real cuInit rejects (CUDA_ERROR_NO_DEVICE) at every length instead of crashing or hanging as on
other long MIG- entries (tools/device/long_entry_prefix.py, 2026-12-04; the differential test's case
802 of seed 18).  The baseline first, then each value with the driver's answer: a probe killed by a
signal or still running after 8 s is DRIVER_CRASH.  Probes: tools/difftest/difftest_probe.c (cuInit
and device queries only).  Writes $OUT/vectors.jsonl and prints it.
usage: python3 tools/device/legacy_mig_vectors.py"""
import json, os, subprocess, tempfile
from concurrent.futures import ThreadPoolExecutor

out_dir = os.environ.get("OUT", "/tmp/legacy-mig-out")
os.makedirs(out_dir, exist_ok=True)
work = tempfile.mkdtemp(prefix="gpumap-legacymig-")
probe = os.path.join(work, "difftest_probe")
subprocess.run(["cc", "-O2", "-o", probe, "tools/difftest/difftest_probe.c", "-ldl"], check=True)
uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                      text=True).stdout.split()[0]
driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                        text=True).stdout.split()[0]


def run(cvd):
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    if cvd is not None:
        env["CUDA_VISIBLE_DEVICES"] = cvd
    try:
        r = subprocess.run([probe], env=env, capture_output=True, timeout=8)
    except subprocess.TimeoutExpired:
        return "DRIVER_CRASH", []
    if r.returncode < 0:
        return "DRIVER_CRASH", []
    lines = r.stdout.decode().split("\n")
    if lines[0].startswith("error"):
        return lines[0].split()[1], []
    return None, [l.split()[1] for l in lines if l.startswith("uuid ")]


case = json.load(open("docs/validation/2026-12-04-difftest-seed18-case802.json"))
cases = [(None, "baseline: both variables unset")]
for p in ("MIG-GPU-", "MIG-" + uuid + "/1/0/"):
    for n in (1031, 1032, 1040, 2000, 2620):
        cases.append(((p + "x" * n)[:n], "legacy_mig_vectors.py: %s + x to %d bytes" % (p[:12], n)))
for p in ("MIG-GPUx", "MIG-gpu-", "MIG-GPU"):
    cases.append(((p + "x" * 1032)[:1032], "legacy_mig_vectors.py: %s + x to 1032 bytes" % p))
cases.append(("0," + "MIG-GPU-" + "x" * 1992, "legacy_mig_vectors.py: 0, then MIG-GPU- + x to 2000 bytes"))
cases.append(("MIG-GPU-" + "x" * 1992 + ",0", "legacy_mig_vectors.py: MIG-GPU- + x to 2000 bytes, then 0"))
for k in ("original_hex", "shrunk_hex"):
    cases.append((bytes.fromhex(case[k]).decode("utf-8"), "difftest seed 18 case 802 (%s)" % k.split("_")[0]))
with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
    results = list(ex.map(lambda c: run(c[0]), cases))
with open(os.path.join(out_dir, "vectors.jsonl"), "w") as f:
    for (cvd, why), (err, uuids) in zip(cases, results):
        line = json.dumps({"CUDA_VISIBLE_DEVICES": cvd, "CUDA_DEVICE_ORDER": None, "error": err, "uuids": uuids,
                           "driver_version": driver, "host": "1 x H200 VM (2026-12-04)", "found_by": why},
                          ensure_ascii=False)
        f.write(line + "\n")
        print(line if cvd is None or len(cvd) < 100 else line[:60] + "…" + line[-160:])
