#!/usr/bin/env python3
"""Which long CUDA_VISIBLE_DEVICES entries make the real driver's cuInit crash (SIGSEGV), found by
the differential test (seed 1202: two single entries of 1208 and 1331 characters that start with
"MIG-").  Builds tools/difftest/difftest_probe.c (cuInit and device queries only: no context, no
GPU memory) and runs it under each value: prefixes x fillers x lengths, the entry first or second,
both orders; then bisects the shortest crashing length for each crashing (prefix, filler).
Prints one JSON object per probe and a summary; writes them to $OUT/long_entry_crash.jsonl.
usage: python3 tools/device/long_entry_crash.py"""
import json, os, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

out_dir = os.environ.get("OUT", "/tmp/long-entry-out")
os.makedirs(out_dir, exist_ok=True)
work = tempfile.mkdtemp(prefix="gpumap-longentry-")
probe = os.path.join(work, "difftest_probe")
subprocess.run(["cc", "-O2", "-o", probe, "tools/difftest/difftest_probe.c", "-ldl"], check=True)
uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                      text=True).stdout.split()[0]
hexid = uuid[4:].replace("-", "")


def run(cvd, cdo=None):
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
    env["CUDA_VISIBLE_DEVICES"] = cvd
    if cdo:
        env["CUDA_DEVICE_ORDER"] = cdo
    try:
        r = subprocess.run([probe], env=env, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        return "TIMEOUT_20s"
    if r.returncode != 0:
        return "EXIT_%d" % r.returncode
    lines = r.stdout.split("\n")
    if lines[0].startswith("error"):
        return lines[0].split()[1]
    return "count " + lines[0].split()[1]


prefixes = {"MIG-": "MIG-", "MIG-uuid": "MIG-" + hexid, "GPU-": "GPU-", "GPU-uuid": uuid, "0": "0", "x": "x",
            "mig-": "mig-", " MIG-": " MIG-"}
fillers = {"x": "x", "03": "\x03", "0": "0", "|": "|"}
lengths = [200, 500, 1000, 1016, 1020, 1023, 1024, 1025, 1028, 1032, 1034, 1040, 1100, 2000, 4096, 20000]
jobs = []
for pn, p in prefixes.items():
    for fn, f in fillers.items():
        for n in lengths:
            entry = p + f * max(0, n - len(p))
            jobs.append({"prefix": pn, "filler": fn, "entry_len": len(entry), "where": "only", "cdo": None, "cvd": entry})

# The long MIG- entry after a good one, and under PCI_BUS_ID.
for n in (1000, 1100, 2000):
    e = "MIG-" + "x" * (n - 4)
    jobs.append({"prefix": "MIG-", "filler": "x", "entry_len": n, "where": "second", "cdo": None, "cvd": "0," + e})
    jobs.append({"prefix": "MIG-", "filler": "x", "entry_len": n, "where": "only", "cdo": "PCI_BUS_ID", "cvd": e})
    jobs.append({"prefix": "MIG-", "filler": "x", "entry_len": n, "where": "first,0", "cdo": None, "cvd": e + ",0"})
    jobs.append({"prefix": "many short", "filler": "MIG-x,", "entry_len": n, "where": "list", "cdo": None,
                 "cvd": ",".join(["MIG-x"] * (n // 6))})

with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
    results = list(ex.map(lambda j: run(j["cvd"], j["cdo"]), jobs))
rows = []
for j, res in zip(jobs, results):
    row = {k: v for k, v in j.items() if k != "cvd"}
    row["value_len"] = len(j["cvd"])
    row["driver"] = res
    rows.append(row)
    print(json.dumps(row), flush=True)

# Bisect the shortest crashing entry for each (prefix, filler) that crashed, alone, order unset.
bisected = []
for pn, p in prefixes.items():
    for fn, f in fillers.items():
        mine = sorted((r for r in rows if r["prefix"] == pn and r["filler"] == fn and r["where"] == "only" and not r["cdo"]),
                      key=lambda r: r["entry_len"])
        crash = [r["entry_len"] for r in mine if r["driver"].startswith("EXIT_")]
        if not crash:
            continue
        lo = max([r["entry_len"] for r in mine if r["entry_len"] < crash[0]] or [len(p)])
        hi = crash[0]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if run(p + f * (mid - len(p))).startswith("EXIT_"):
                hi = mid
            else:
                lo = mid
        # Is every length above it a crash?  Sample a few.
        above = {n: run(p + f * (n - len(p))) for n in (hi + 1, hi + 7, hi + 100, hi + 1000)}
        bisected.append({"prefix": pn, "filler": fn, "shortest_crashing_entry": hi, "longest_answering": lo,
                         "above": above})

with open(os.path.join(out_dir, "long_entry_crash.jsonl"), "w") as fh:
    for r in rows:
        fh.write(json.dumps(r) + "\n")
    for b in bisected:
        fh.write(json.dumps(b) + "\n")
        print("BISECT " + json.dumps(b))
subprocess.run(["rm", "-rf", work])
crashed = sorted({(r["prefix"], r["filler"], r["where"], r["cdo"] or "") for r in rows if r["driver"].startswith("EXIT_")})
hung = sorted({(r["prefix"], r["filler"], r["entry_len"]) for r in rows if r["driver"].startswith("TIMEOUT")})
print("hung kinds:", hung)
print("crashing kinds:", crashed)
print(subprocess.run(["sh", "-c", "head -1 /proc/driver/nvidia/version; nvidia-smi -L"], capture_output=True, text=True).stdout)
