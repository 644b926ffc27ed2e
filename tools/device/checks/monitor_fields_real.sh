#!/bin/bash
# Issue 31 item 4, on a real GPU host (the lead runs it; never in CI): compares every monitor field of
# `gpumap list --query-gpu` with `nvidia-smi --query-gpu` field by field, and measures what the
# per-process utilisation call costs per GPU (NVML only, through ctypes: no CUDA context).
# Usage: tools/device/checks/monitor_fields_real.sh BUILD_DIR
# Prints one line per GPU and field: SAME, SPELLING (both not available, spelled differently), or
# DIFFERS; then the per-GPU cost of nvmlDeviceGetProcessesUtilizationInfo / nvmlDeviceGetProcessUtilization.
# Record the result in docs/validation.md ("monitor fields" section).  Exit 1 when a field DIFFERS
# beyond the tolerance of a moving value (power.draw 15 %, clocks 10 %, temperature 3 C).
set -u
build=${1:?usage: $0 BUILD_DIR}
gpumap="$build/gpumap"
[ -x "$gpumap" ] || { echo "no gpumap in $build" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found: run this on the GPU host" >&2; exit 2; }
fields="index,temperature.gpu,power.draw,power.limit,enforced.power.limit,clocks.sm,clocks.mem,fan.speed,pstate,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nvidia-smi --query-gpu="$fields" --format=csv,noheader > "$tmp/smi.csv" || exit 2
"$gpumap" list --query-gpu="$fields" --format=csv,noheader > "$tmp/gpumap.csv" || exit 2
echo "nvidia-smi header:"; nvidia-smi --query-gpu="$fields" --format=csv | head -1
echo "gpumap header:    "; "$gpumap" list --query-gpu="$fields" --format=csv | head -1
python3 - "$fields" "$tmp/smi.csv" "$tmp/gpumap.csv" <<'PY'
import csv, re, sys
fields = sys.argv[1].split(",")
read = lambda p: [ [c.strip() for c in row] for row in csv.reader(open(p), skipinitialspace=True) if row]
smi, gm = read(sys.argv[2]), read(sys.argv[3])
na = {"[N/A]", "[Not Supported]", "N/A", "[Unknown Error]"}
tol = {"power.draw": ("rel", 0.15), "clocks.sm": ("rel", 0.10), "clocks.mem": ("rel", 0.10), "temperature.gpu": ("abs", 3)}
bad = 0
if len(smi) != len(gm): print(f"GPU count differs: nvidia-smi {len(smi)}, gpumap {len(gm)}"); sys.exit(1)
def number(v):
    m = re.match(r"^-?[0-9.]+", v); return float(m.group()) if m else None
for a, b in zip(smi, gm):
    for f, x, y in zip(fields, a, b):
        if x == y: verdict = "SAME"
        elif x in na and y in na: verdict = "SPELLING"
        elif f in tol and number(x) is not None and number(y) is not None:
            kind, t = tol[f]; d = abs(number(x) - number(y))
            verdict = "CLOSE" if (d <= t if kind == "abs" else d <= t * max(number(x), 1)) else "DIFFERS"
        else: verdict = "DIFFERS"
        bad += verdict == "DIFFERS"
        print(f"GPU {a[0]:>2} {f:40} {verdict:8} nvidia-smi={x!r} gpumap={y!r}")
print(f"{bad} field(s) differ")
sys.exit(1 if bad else 0)
PY
cmp=$?
echo
echo "Cost of the per-process utilisation call per GPU (NVML only, 200 calls each):"
python3 - <<'PY'
import ctypes, time
nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
n = ctypes.c_uint(); nvml.nvmlDeviceGetCount_v2(ctypes.byref(n))
class Info(ctypes.Structure):
    _fields_ = [("ts", ctypes.c_ulonglong), ("pid", ctypes.c_uint), ("sm", ctypes.c_uint), ("mem", ctypes.c_uint),
                ("enc", ctypes.c_uint), ("dec", ctypes.c_uint), ("jpg", ctypes.c_uint), ("ofa", ctypes.c_uint)]
class Infos(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("count", ctypes.c_uint), ("last", ctypes.c_ulonglong), ("arr", ctypes.POINTER(Info))]
class Sample(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("ts", ctypes.c_ulonglong), ("sm", ctypes.c_uint), ("mem", ctypes.c_uint),
                ("enc", ctypes.c_uint), ("dec", ctypes.c_uint)]
for i in range(n.value):
    h = ctypes.c_void_p(); nvml.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
    for name in ("nvmlDeviceGetProcessesUtilizationInfo", "nvmlDeviceGetProcessUtilization"):
        fn = getattr(nvml, name, None)
        if fn is None: print(f"GPU {i} {name}: absent"); continue
        arr = (Info * 64)() if name.endswith("Info") else (Sample * 64)()
        t0 = time.perf_counter(); rc = None
        for _ in range(200):
            if name.endswith("Info"):
                s = Infos(ctypes.sizeof(Infos) | (1 << 24), 64, 0, ctypes.cast(arr, ctypes.POINTER(Info)))
                rc = fn(h, ctypes.byref(s)); got = s.count
            else:
                c = ctypes.c_uint(64); rc = fn(h, arr, ctypes.byref(c), ctypes.c_ulonglong(0)); got = c.value
        ms = (time.perf_counter() - t0) / 200 * 1000
        print(f"GPU {i} {name}: {ms:.3f} ms per call (last return {rc}, {got if rc == 0 else 0} samples)")
PY
echo
echo "Per-process utilisation as gpumap reads it (start a torch process first to see non-zero values):"
"$gpumap" ps --query=pid,gpu_index,utilization.sm,utilization.memory,rank,process_name --format=csv
exit $cmp
