#!/usr/bin/env python3
"""Benchmark (issue 34 defect 2): what ten hostile GPU processes cost root's `gpumap ps --json` and
`gpumap metrics`, beside ten ordinary ones.  A hostile process has a 5.77 MB command line (44
arguments of 128 KiB: `sleep 300 000...0 ...`, sleep adds them up) and a 120 kB SLURM_JOB_ID, as any
user may start; each process is listed on all 8 GPUs of a simulated dgx8.  For each command it prints
the median wall time of RUNS runs, the peak RSS (GNU time) and the output size, and the
hostile/ordinary ratio.  No assertion: the figures go in docs/metrics.md and docs/fuzzing.md.
usage: hostile_proc_bench.py GPUMAP [N] [RUNS]"""
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time

gpumap = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def big_stack():
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 30, 1 << 30))  # ARG_MAX is a quarter of it


def start(hostile):
    argv = ["/bin/sleep", "300"]
    env = {"PATH": "/bin", "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7"}
    if hostile:
        argv += ["0" * (128 * 1024 - 1)] * 44
        env["SLURM_JOB_ID"] = "7" * 120000
    else:
        env["SLURM_JOB_ID"] = "4242"
    return subprocess.Popen(argv, env=env, preexec_fn=big_stack)


def host_file(tmp, pids, tag):
    with open(os.path.join(root, "hosts", "dgx8.json")) as f:
        h = json.load(f)
    for g in h["gpus"]:
        g["processes"] = [{"pid": p, "used_memory_mib": 100} for p in pids]
    path = os.path.join(tmp, tag + ".json")
    with open(path, "w") as f:
        json.dump(h, f)
    return path


def measure(args, tmp):
    """Median wall seconds, peak RSS (KiB) and output bytes of `gpumap ARGS`, RUNS runs.  The RSS is
    GNU time's %M: a child forked from this Python would carry Python's own peak across exec."""
    walls, rss, size = [], 0, 0
    rss_file = os.path.join(tmp, "rss")
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, gpumap] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        if p.returncode != 0:
            sys.exit(f"gpumap {' '.join(args)}: exit status {p.returncode}")
        with open(rss_file) as f:
            rss = max(rss, int(f.read().split()[-1]))
        size = len(p.stdout)
    return statistics.median(walls), rss, size


procs = []
try:
    with tempfile.TemporaryDirectory() as tmp:
        ordinary = [start(False) for _ in range(n)]
        hostile = [start(True) for _ in range(n)]
        procs = ordinary + hostile
        time.sleep(0.5)  # until each has exec'd
        hosts = {"ordinary": host_file(tmp, [p.pid for p in ordinary], "ordinary"),
                 "hostile": host_file(tmp, [p.pid for p in hostile], "hostile")}
        os.environ["GPUMAP_CACHE_DIR"] = os.path.join(tmp, "cache")
        print(f"{n} processes on each of 8 GPUs (dgx8, simulated), {runs} runs each; "
              f"hostile: 5.77 MB command line, 120 kB SLURM_JOB_ID")
        print(f"{'command':<14} {'kind':<9} {'median ms':>9} {'peak RSS KiB':>12} {'output bytes':>12}")
        for cmd in (["ps", "--json"], ["metrics"]):
            figures = {}
            for kind, host in hosts.items():
                figures[kind] = measure(cmd + ["--simulate", host], tmp)
                wall, rss, size = figures[kind]
                print(f"{' '.join(cmd):<14} {kind:<9} {wall * 1000:>9.1f} {rss:>12} {size:>12}")
            (wo, ro, so), (wh, rh, sh) = figures["ordinary"], figures["hostile"]
            print(f"{' '.join(cmd):<14} {'ratio':<9} {wh / wo:>9.2f} {rh / ro:>12.2f} {sh / so:>12.2f}")
finally:
    for p in procs:
        p.send_signal(signal.SIGKILL)
        p.wait()
