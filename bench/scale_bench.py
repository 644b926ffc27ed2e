#!/usr/bin/env python3
"""CPU time of `gpumap map`, `list --json`, `pick --gpus 1` and `pick --gpus N/4` against the number of
GPUs (simulated hosts from bench/make_host.py), with the ratio per doubling: about 2 is linear,
about 4 quadratic.  Prints figures; asserts nothing (docs/fuzzing.md records them, issue 34 point 9).
usage: bench/scale_bench.py [BUILD_DIR] [N ...]   (default N: 1024 2048 4096 8192 16384)"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else "build"
sizes = [int(a) for a in sys.argv[2:]] or [1024, 2048, 4096, 8192, 16384]
gpumap = os.path.join(build, "gpumap")
if not os.access(gpumap, os.X_OK):
    sys.exit(f"no {gpumap}: build it first")
tmp = tempfile.mkdtemp(prefix="gpumap-scale-")
try:
    env = dict(os.environ, GPUMAP_CACHE_DIR=os.path.join(tmp, "cache"), GPUMAP_LOCK_DIR=os.path.join(tmp, "locks"))
    for v in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "GPUMAP_SIMULATE"):
        env.pop(v, None)
    commands = [("map", ["map"]), ("list --json", ["list", "--json"]), ("pick --gpus 1", ["pick", "--gpus", "1"]),
                ("pick --gpus N/4", None)]
    rows = {}
    for n in sizes:
        host = os.path.join(tmp, f"host{n}.json")
        with open(host, "w") as f:
            subprocess.run([sys.executable, os.path.join(HERE, "make_host.py"), str(n)], stdout=f, check=True)
        for name, args in commands:
            argv = args or ["pick", "--gpus", str(max(1, n // 4))]
            # CPU seconds (user + system) of the command: on a shared machine the wall clock
            # also counts the time spent waiting for a CPU.
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = subprocess.run([gpumap, "--simulate", host, *argv], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            took = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if r.returncode != 0:
                sys.exit(f"gpumap {' '.join(argv)} on {n} GPUs: exit {r.returncode}: {r.stderr[:300]}")
            rows.setdefault(name, []).append(took)
    print(f"{'GPUs':>20}" + "".join(f"{n:>10}" for n in sizes))
    for name, _ in commands:
        times = rows[name]
        print(f"{name + ' (cpu s)':>20}" + "".join(f"{t:>10.3f}" for t in times))
        ratios = [b / a if a > 0 else float("nan") for a, b in zip(times, times[1:])]
        print(f"{'  x per step':>20}{'':>10}" + "".join(f"{r:>10.2f}" for r in ratios))
    print("(x per step: the time ratio between neighbouring sizes; each step doubles the GPUs when N doubles:"
          " ~2 is linear, ~4 quadratic)")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
