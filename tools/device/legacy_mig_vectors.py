#!/usr/bin/env python3
"""Driver vectors (tests/vectors/ format) for long first entries in the legacy MIG-GPU- form, which
the real cuInit rejects (CUDA_ERROR_NO_DEVICE) at every length instead of crashing or hanging as on
other long MIG- entries (tools/device/long_entry_prefix.py, 2026-12-04; the differential test's case
802 of seed 18).  The baseline first, then each value with the driver's answer: a probe killed by a
signal or still running after 8 s is DRIVER_CRASH.  Probes: tools/difftest/difftest_probe.c (cuInit
and device queries only).  Writes $OUT/vectors.jsonl and prints it.
usage: python3 tools/device/legacy_mig_vectors.py"""
import json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuinit_probe  # noqa: E402

out_dir = os.environ.get("OUT", "/tmp/legacy-mig-out")
os.makedirs(out_dir, exist_ok=True)
uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                      text=True).stdout.split()[0]
driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                        text=True).stdout.split()[0]


def run(cvd):
    """(error, uuids) as a vector line says them: a probe killed by a signal or still running after
    8 s is DRIVER_CRASH."""
    kind, v = cuinit_probe.outcome(cvd, timeout=8)
    if kind in ("signal", "timeout"):
        return "DRIVER_CRASH", []
    if kind == "error":
        return v, []
    if kind == "devices":
        return None, v
    raise SystemExit("the probe could not run (exit %d)" % v)


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
