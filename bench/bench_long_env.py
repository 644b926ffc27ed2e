#!/usr/bin/env python3
"""Benchmark (issue 25 point 5): whole `gpumap map` and `gpumap doctor` processes under a
CUDA_VISIBLE_DEVICES of 100 to 100 000 characters, in the long forms the differential test
generates.  Prints the median wall time of RUNS runs and its ratio to the 100-character value: it
stays near 1 while the work is linear and small beside the process start.  No assertion.
usage: bench_long_env.py GPUMAP [HOST] [RUNS]     (HOST: a bundled simulated host, default dgx8)"""
import os
import statistics
import subprocess
import sys
import time

gpumap = sys.argv[1]
host = sys.argv[2] if len(sys.argv) > 2 else "dgx8"
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
uuid = "GPU-0c95b2ce-637c-abcd-1bd9-c0caf1726bb6"


def value(form, n):
    if form == "spaces":
        return " " * (n - 1) + "1"
    if form == "dashes":
        return uuid[:12] + "-" * (n - 36) + uuid[12:].replace("-", "")
    if form == "empties":
        return "0" + "," * (n - 1)
    if form == "uuid-prefixes":
        out, i = [], 0
        while sum(len(x) + 1 for x in out) < n:
            out.append(uuid[:5 + i % 32])
            i += 1
        return ",".join(out)[:n]
    out, i = [], 0  # short-entries: 0,1,...,7,0,1,... (a duplicate at the ninth)
    while sum(len(x) + 1 for x in out) < n:
        out.append(str(i % 8))
        i += 1
    return ",".join(out)[:n]


def median_ms(cmd, env):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(cmd, env=env, capture_output=True)
        times.append((time.perf_counter() - t) * 1000)
        if r.returncode not in (0, 7):
            sys.exit("%s failed: %s" % (cmd, r.stderr.decode(errors="replace")))
    return statistics.median(times)


base = {k: v for k, v in os.environ.items() if k not in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER")}
print("%-14s %-8s %8s %12s %7s %12s %7s" % ("FORM", "CHARS", "", "MAP (ms)", "RATIO", "DOCTOR (ms)", "RATIO"))
for form in ("spaces", "dashes", "empties", "uuid-prefixes", "short-entries"):
    ref = None
    for n in (100, 12500, 25000, 50000, 100000):
        env = dict(base, CUDA_VISIBLE_DEVICES=value(form, n))
        m = median_ms([gpumap, "map", "--json", "--simulate", host], env)
        d = median_ms([gpumap, "doctor", "--json", "--simulate", host], env)
        ref = ref or (m, d)
        print("%-14s %-8d %8s %12.1f %7.2f %12.1f %7.2f" % (form, n, "", m, m / ref[0], d, d / ref[1]), flush=True)
