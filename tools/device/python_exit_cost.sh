#!/usr/bin/env bash
# Issue 9 timing: what a Python process pays at exit after NVML was initialised, and whether
# gpumap's own reader thread or NVML's teardown is the cost.  Measurements only.
set -u
export PYTHONPATH=$PWD/python GPUMAP_BUILD_DIR=$PWD/build
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
export GPUMAP_LOCK_DIR=$T/locks GPUMAP_CACHE_DIR=$T/cache
python3 - <<'PY'
import subprocess, sys, time, os
def best(code, env=None, n=12):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env)
        ts.append((time.perf_counter() - t) * 1000)
    return min(ts)
nv = "import ctypes; l = ctypes.CDLL('libnvidia-ml.so.1'); l.nvmlInit_v2()"
cases = [
    ("bare", "pass", None),
    ("nvmlInit_v2", nv, None),
    ("nvmlInit_v2 + os._exit", nv + "; import os; os._exit(0)", None),
    ("nvmlInit_v2 + nvmlShutdown", nv + "; l.nvmlShutdown()", None),
    ("gpumap devices()", "import gpumap; gpumap.devices()", None),
    ("gpumap devices() + os._exit", "import gpumap, os; gpumap.devices(); os._exit(0)", None),
    ("gpumap devices(), GPUMAP_DRIVER_TIMEOUT=0", "import gpumap; gpumap.devices()", dict(os.environ, GPUMAP_DRIVER_TIMEOUT="0")),
]
base = None
for name, code, env in cases:
    ms = best(code, env)
    base = ms if base is None else base
    print(f"{name:45s} {ms:7.1f} ms  (+{ms - base:.1f})")
PY
which strace perf ltrace 2>/dev/null
