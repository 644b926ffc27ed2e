#!/usr/bin/env bash
# Issue 9's "10x faster than nvitop's select_devices": where a first gpumap.devices() spends its
# time on the real driver.  Run from the repo root with the carried build/ and python/.  Prints
# measurements only (no PASS/FAIL): the numbers go to docs/validation.md.
set -u
export PYTHONPATH=$PWD/python GPUMAP_BUILD_DIR=$PWD/build
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export GPUMAP_LOCK_DIR=$T/locks GPUMAP_CACHE_DIR=$T/cache

echo "== $(date -u +%FT%TZ) $(hostname) $(build/gpumap --version)"
echo "== NVML calls of one devices() (GPUMAP_TRACE=1)"
GPUMAP_TRACE=1 python3 -c "import gpumap; gpumap.devices()" 2>&1 | head -40

echo "== in-process phases (ms), 5 fresh interpreters"
for _ in 1 2 3 4 5; do
python3 - <<'PY'
import time
t0 = time.perf_counter()
import ctypes
t1 = time.perf_counter()
lib = ctypes.CDLL("build/libgpumap.so.1")
t2 = time.perf_counter()
import gpumap
t3 = time.perf_counter()
gpumap.devices()
t4 = time.perf_counter()
gpumap.devices()
t5 = time.perf_counter()
print(f"ctypes {1e3*(t1-t0):.1f}; dlopen libgpumap {1e3*(t2-t1):.1f}; import gpumap {1e3*(t3-t2):.1f}; "
      f"devices() first {1e3*(t4-t3):.1f}; again {1e3*(t5-t4):.2f}")
PY
done

echo "== whole process (best of 10, ms): exit cost after devices()"
python3 - <<'PY'
import subprocess, sys, time
def best(code, n=10):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        ts.append((time.perf_counter() - t) * 1000)
    return min(ts)
bare = best("pass")
imp = best("import gpumap")
dev = best("import gpumap; gpumap.devices()")
dev_exit = best("import gpumap, os; gpumap.devices(); os._exit(0)")
print(f"bare {bare:.1f}; import gpumap +{imp - bare:.1f}; import+devices +{dev - bare:.1f}; "
      f"import+devices with os._exit +{dev_exit - bare:.1f}")
PY

echo "== the gpumap command (best of 10, ms)"
python3 - <<'PY'
import subprocess, time
for args in (["build/gpumap", "map", "--json"], ["build/gpumap", "list", "--json"], ["nvidia-smi", "-L"]):
    ts = []
    for _ in range(10):
        t = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        ts.append((time.perf_counter() - t) * 1000)
    print(f"{' '.join(args)}: {min(ts):.1f}")
PY

echo "== /proc/driver/nvidia/gpus (a possible NVML-free identity source)"
ls /proc/driver/nvidia/gpus 2>&1 | head
for f in /proc/driver/nvidia/gpus/*/information; do echo "-- $f"; cat "$f"; done 2>&1 | head -40
python3 - <<'PY'
import glob, time
t = time.perf_counter()
for f in glob.glob("/proc/driver/nvidia/gpus/*/information"):
    open(f).read()
print(f"reading every information file: {(time.perf_counter() - t) * 1000:.2f} ms")
PY
nvidia-smi -q | grep -iE "persistence mode" | head -2
echo "== done"
