#!/usr/bin/env python3
"""Which bytes inside a long first MIG- entry keep cuInit from crashing?  The differential test's
case 802 (2026-12-04) is a 1 033-byte first entry starting with MIG- that answers
CUDA_ERROR_NO_DEVICE every time, where MIG- and 1 029 x's crash every time
(tools/device/long_entry_repeat.py).  Each probe here is a 1 033-byte entry MIG- + x*K + B + x...,
for every single byte B (0x01-0xff) at K=8, and a few bytes at other positions K; one probe each
(tools/difftest/difftest_probe.c: cuInit and device queries only).  Prints one JSON line per
(byte class, outcome) and every probe to $OUT/long_entry_bytes.jsonl.
usage: python3 tools/device/long_entry_bytes.py"""
import collections, json, os, sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuinit_probe  # noqa: E402

out_dir = os.environ.get("OUT", "/tmp/long-entry-out")
os.makedirs(out_dir, exist_ok=True)
N = 1033


def run(cvd):
    return cuinit_probe.label(cuinit_probe.outcome(cvd, timeout=10))


def entry(k, b, n=N):
    head = b"MIG-" + b"x" * k + b
    return head + b"x" * (n - len(head))


jobs = [{"k": 8, "byte": i, "cvd": entry(8, bytes([i]))} for i in range(1, 256) if i != ord(",")]
for k in (0, 100, 500, 1000, 1020, 1024, 1027):
    for b in (0x80, 0xd9, 0xff, 0x20, 0x0c, 0x3b, 0x2d, 0x30):
        jobs.append({"k": k, "byte": b, "cvd": entry(k, bytes([b]))})
jobs.append({"k": 8, "byte": "none", "cvd": entry(8, b"")})
jobs.append({"k": 8, "byte": "none-1031", "cvd": entry(8, b"", 1031)})
with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
    results = list(ex.map(lambda j: run(j["cvd"]), jobs))
with open(os.path.join(out_dir, "long_entry_bytes.jsonl"), "w") as f:
    for j, r in zip(jobs, results):
        f.write(json.dumps({"k": j["k"], "byte": j["byte"], "outcome": r}) + "\n")
# At K=8: the bytes of each outcome, as ranges.
by = collections.defaultdict(list)
for j, r in zip(jobs, results):
    if j["k"] == 8 and isinstance(j["byte"], int):
        by[r].append(j["byte"])
for r, bs in sorted(by.items()):
    ranges, start = [], None
    for i, b in enumerate(bs):
        if start is None:
            start = b
        if i + 1 == len(bs) or bs[i + 1] != b + 1:
            ranges.append("%02x" % start if start == b else "%02x-%02x" % (start, b))
            start = None
    print(json.dumps({"k": 8, "outcome": r, "bytes": ranges}))
for j, r in zip(jobs, results):
    if j["k"] != 8 or not isinstance(j["byte"], int):
        print(json.dumps({"k": j["k"], "byte": j["byte"] if isinstance(j["byte"], str) else "%02x" % j["byte"], "outcome": r}))
