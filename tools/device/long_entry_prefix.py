#!/usr/bin/env python3
"""Does a long first entry that starts with the legacy MIG-GPU- crash cuInit like other MIG-
entries?  The differential test's case 802 (2026-12-04, a 1 033-byte first entry starting
"MIG-GPU-") answers CUDA_ERROR_NO_DEVICE every time, while MIG- and x's crash
(tools/device/long_entry_repeat.py) whatever single byte follows (long_entry_bytes.py).  Probes
prefixes between MIG- and MIG-GPU- (and case variants) at lengths from 1031 to 2620 bytes, twice
each (tools/difftest/difftest_probe.c: cuInit and device queries only).  Prints one JSON line per
value; writes them to $OUT/long_entry_prefix.jsonl.
usage: python3 tools/device/long_entry_prefix.py"""
import collections, json, os, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuinit_probe  # noqa: E402

out_dir = os.environ.get("OUT", "/tmp/long-entry-out")
os.makedirs(out_dir, exist_ok=True)
uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                      text=True).stdout.split()[0]


def run(cvd):
    return cuinit_probe.label(cuinit_probe.outcome(cvd, timeout=8))


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
