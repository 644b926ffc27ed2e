#!/usr/bin/env python3
"""Is a long first MIG- entry's outcome the same every time?  The differential test of 2026-12-04
(seed 18, case 802) saw one such value answer CUDA_ERROR_NO_DEVICE where docs/driver-rules.md has a
crash or a hang.  Runs tools/difftest/difftest_probe.c (cuInit and device queries only: no context,
no GPU memory) REPEAT times under each value: that case's value and its shrunk form (from
docs/validation/2026-12-04-difftest-seed18-case802.json), and MIG- entries with plain and `;`
fillers at lengths from the rule's edge (1032 bytes) to just under the ignored-value limit (2625).
Prints each value's outcome counts as JSON lines; writes them to $OUT/long_entry_repeat.jsonl.
usage: python3 tools/device/long_entry_repeat.py [REPEAT]"""
import collections, json, os, sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuinit_probe  # noqa: E402

repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 16
out_dir = os.environ.get("OUT", "/tmp/long-entry-out")
os.makedirs(out_dir, exist_ok=True)


def run(cvd):
    return cuinit_probe.label(cuinit_probe.outcome(cvd, timeout=10))


case = json.load(open("docs/validation/2026-12-04-difftest-seed18-case802.json"))
values = {"case802 original": bytes.fromhex(case["original_hex"]).decode("utf-8", "surrogateescape"),
          "case802 shrunk": bytes.fromhex(case["shrunk_hex"]).decode("utf-8", "surrogateescape")}
for n in (1031, 1032, 1033, 1100, 1500, 2000, 2500, 2620):
    values["MIG- x %d" % n] = "MIG-" + "x" * (n - 4)
    values["MIG- x; %d" % n] = ("MIG-" + "x;" * n)[:n]
jobs = [(name, v) for name, v in values.items() for _ in range(repeat)]
with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
    results = list(ex.map(lambda j: run(j[1]), jobs))
counts = collections.defaultdict(collections.Counter)
for (name, _), r in zip(jobs, results):
    counts[name][r] += 1
with open(os.path.join(out_dir, "long_entry_repeat.jsonl"), "w") as f:
    for name, v in values.items():
        line = json.dumps({"value": name, "bytes": len(v.encode("utf-8", "surrogateescape")), "outcomes": dict(counts[name])})
        print(line)
        f.write(line + "\n")
