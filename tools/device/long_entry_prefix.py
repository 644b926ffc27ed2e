#!/usr/bin/env python3
"""Does a long first entry that starts with the legacy MIG-GPU- crash cuInit like other MIG-
entries?  The differential test's case 802 (2026-12-04, a 1 033-byte first entry starting
"MIG-GPU-") answers CUDA_ERROR_NO_DEVICE every time, while MIG- and x's crash
(tools/device/long_entry_repeat.py) whatever single byte follows (long_entry_bytes.py).  Probes
prefixes between MIG- and MIG-GPU- (and case variants) at lengths from 1031 to 2620 bytes, twice
each (tools/difftest/difftest_probe.c: cuInit and device queries only).  Prints one JSON line per
value; writes them to $OUT/long_entry_prefix.jsonl.
usage: python3 tools/device/long_entry_prefix.py"""
import collections, json, os, subprocess, tempfile
from concurrent.futures import ThreadPoolExecutor

out_dir = os.environ.get("OUT", "/tmp/long-entry-out")
os.makedirs(out_dir, exist_ok=True)
work = tempfile.mkdtemp(prefix="gpumap-longprefix-")
probe = os.path.join(work, "difftest_probe")
subprocess.run(["cc", "-O2", "-o", probe, "tools/difftest/difftest_probe.c", "-ldl"], check=True)
uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                      text=True).stdout.split()[0]


def run(cvd):
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    env["CUDA_VISIBLE_DEVICES"] = cvd
    try:
        r = subprocess.run([probe], env=env, capture_output=True, timeout=8)
    except subprocess.TimeoutExpired:
        return "TIMEOUT_8s"
    if r.returncode < 0:
        return "SIGNAL_%d" % -r.returncode
    if r.returncode != 0:
        return "EXIT_%d" % r.returncode
    first = r.stdout.decode(errors="replace").split("\n")[0].split()
    return first[1] if first and first[0] == "error" else "count " + (first[1] if len(first) > 1 else "?")


prefixes = ["MIG-", "MIG-G", "MIG-GP", "MIG-GPU", "MIG-GPU-", "MIG-gpu-", "MIG-GPU-x", "MIG-GPUx", "MIG-" + uuid,
            "MIG-" + uuid + "/1/0/", "MIG-GPU-/"]
values = []
for p in prefixes:
    for n in (1031, 1032, 1040, 1100, 2000, 2620):
        values.append((p if len(p) < 20 else p[:12] + "…" + p[-4:], n, (p + "x" * n)[:n]))
jobs = [v for v in values for _ in range(2)]
with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
    results = list(ex.map(lambda j: run(j[2]), jobs))
counts = collections.defaultdict(collections.Counter)
for (p, n, _), r in zip(jobs, results):
    counts[(p, n)][r] += 1
with open(os.path.join(out_dir, "long_entry_prefix.jsonl"), "w") as f:
    for p, n, _ in values:
        line = json.dumps({"prefix": p, "bytes": n, "outcomes": dict(counts[(p, n)])})
        print(line)
        f.write(line + "\n")
