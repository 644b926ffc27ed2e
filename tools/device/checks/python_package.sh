#!/usr/bin/env bash
# Issue 9 on a real GPU host (2 x H200, Python 3.12 with torch/transformers/accelerate): the
# Python package over libgpumap.so from the carried build/ and python/ folders.
# usage (from the repository root): bash tools/device/checks/python_package.sh     -> PASS/FAIL/SKIP lines,
# a log in $OUT/issue9.log.  Each PASS line is a check that would print FAIL if it were wrong.
set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/issue9-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/issue9.log") 2>&1
export PYTHONPATH=$PWD/python GPUMAP_BUILD_DIR=${BUILD:-$PWD/build}
export GPUMAP_LOCK_DIR=$(mktemp -d /tmp/gpumap-issue9-XXXXXX)
trap 'rm -rf "$GPUMAP_LOCK_DIR"' EXIT
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUMAP_SIMULATE
echo "== $(date -u +%FT%TZ) $(hostname)"
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv
ldd "$GPUMAP_BUILD_DIR/libgpumap.so.1" | sed 's/^/  ldd: /'

py() { python3 - "$@"; }

echo "== A: pin() before import torch: torch's cuda:0 is the pinned GPU (each of GPU 0 and GPU 1)"
for want in 0 1; do
  py "$want" <<'PY'
import sys, gpumap
want = int(sys.argv[1])
p = gpumap.pin(include=want)
import torch
props = torch.cuda.get_device_properties(0)
uuid = "GPU-" + str(props.uuid)
ok = uuid.lower() == p.uuids[0].lower() and p.devices[0]["nvml_index"] == want and torch.cuda.device_count() == 1
print(("PASS" if ok else "FAIL") + f": pin(include={want}) -> {p.uuids[0]}; torch cuda:0 = {uuid}, "
      f"device_count {torch.cuda.device_count()}")
PY
done

echo "== B: TooLateError once CUDA started; import torch alone is not too late"
py <<'PY'
import gpumap, torch
late = gpumap.cuda_initialized()
p = gpumap.pin()
print(("PASS" if not late else "FAIL") + f": after import torch (no CUDA call) cuda_initialized()={late}, pin worked: {p.uuids}")
PY
py <<'PY'
import gpumap, torch
torch.cuda.init()
try:
    gpumap.pin()
    print("FAIL: pin() after torch.cuda.init() did not raise")
except gpumap.TooLateError as e:
    print("PASS: TooLateError after torch.cuda.init():", e.message)
PY
py <<'PY'
import ctypes, gpumap
cuda = ctypes.CDLL("libcuda.so.1")
before = gpumap.cuda_initialized()
cuda.cuInit(0)
after = gpumap.cuda_initialized()
try:
    gpumap.pin()
    raised = False
except gpumap.TooLateError:
    raised = True
print(("PASS" if (not before and after and raised) else "FAIL") +
      f": libcuda loaded {before} -> cuInit {after}, TooLateError raised: {raised}")
PY

echo "== C: max_memory + device_map with a tiny random-weight transformers model, on physical GPU 1"
py <<'PY'
import os
os.environ["CUDA_VISIBLE_DEVICES"] = "1,0"  # physical GPU 1 is cuda:0 here: the trap max_memory avoids
import gpumap
mm = gpumap.max_memory({1: "2GiB", "cpu": "8GiB"})
import torch
from transformers import GPT2Config, GPT2LMHeadModel
from accelerate import infer_auto_device_map, dispatch_model
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000))
device_map = infer_auto_device_map(model, max_memory=mm)
model = dispatch_model(model, device_map=device_map)
placed = gpumap.check_device_map(device_map)
u1 = [d for d in gpumap.devices() if d["nvml_index"] == 1][0]["uuid"]
params_ok = all("GPU-" + str(torch.cuda.get_device_properties(p.device).uuid) == u1
                for p in model.parameters() if p.device.type == "cuda")
n_gpu = sum(1 for p in model.parameters() if p.device.type == "cuda")
map_ok = all(v != "cpu" and v["nvml_index"] == 1 for v in placed.values())
print(("PASS" if params_ok and map_ok and n_gpu else "FAIL") +
      f": max_memory={mm}; {n_gpu} parameters on cuda, all on {u1}: {params_ok}; check_device_map all GPU 1: {map_ok}")
try:
    gpumap.check_device_map({"x": 2})
    print("FAIL: check_device_map accepted cuda:2")
except gpumap.NotVisibleError as e:
    print("PASS: check_device_map refuses cuda:2:", e.message)
PY

echo "== D: two concurrent pin() processes get disjoint GPUs; the leases end with them"
[ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ] || echo "SKIP: one GPU on this host: D needs two"
[ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ] && py <<'PY'
import os, subprocess, sys
code = "import gpumap, sys; p = gpumap.pin(); print(p.uuids[0], flush=True); sys.stdin.read()"
kids = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(2)]
got = [k.stdout.readline().strip() for k in kids]
print(("PASS" if all(got) and got[0] != got[1] else "FAIL") + f": disjoint: {got}")
rc = subprocess.run([os.environ["GPUMAP_BUILD_DIR"] + "/gpumap", "run", "--gpus", "1", "--", "true"], capture_output=True).returncode
print(("PASS" if rc == 6 else "FAIL") + f": gpumap run finds no free GPU while both are pinned (exit {rc}, want 6)")
for k in kids:
    k.stdin.close()
    k.wait(30)
rc = subprocess.run([os.environ["GPUMAP_BUILD_DIR"] + "/gpumap", "run", "--gpus", "2", "--", "true"], capture_output=True).returncode
print(("PASS" if rc == 0 else "FAIL") + f": both leases ended with their processes (gpumap run --gpus 2 exit {rc})")
PY

echo "== E: timings (best of 10 process runs, ms): import gpumap, devices(); nvitop's select_devices"
py <<'PY'
import os, subprocess, sys, time
def best(code, env=None, n=10):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        ts.append((time.perf_counter() - t) * 1000)
        if r.returncode:
            return None, r.stderr.strip().splitlines()[-1:]
    return min(ts), None
bare, _ = best("pass")
imp, _ = best("import gpumap")
dev, _ = best("import gpumap; gpumap.devices()")
print(f"TIME bare python {bare:.1f} ms; import gpumap {imp:.1f} ms (+{imp - bare:.1f}); "
      f"import + devices() {dev:.1f} ms (+{dev - bare:.1f})")
print(("PASS" if imp - bare <= 50 else "FAIL") + f": import gpumap costs {imp - bare:.1f} ms over a bare interpreter (<= 50)")
import gpumap
t = time.perf_counter(); gpumap.devices(); first = (time.perf_counter() - t) * 1000
t = time.perf_counter(); gpumap.devices(); second = (time.perf_counter() - t) * 1000
print(("PASS" if first <= 60 else "FAIL") + f": gpumap.devices() in-process {first:.1f} ms first call (<= 60), {second:.2f} ms again")
nv = os.path.join(os.getcwd(), ".dev", "nvitop")
if not os.path.isdir(nv):
    print("SKIP: nvitop source not carried (.dev/nvitop): no select_devices comparison")
else:
    env = dict(os.environ, PYTHONPATH=nv + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sel, err = best("from nvitop import select_devices; select_devices(format='index', min_count=1)", env)
    if sel is None:
        print("SKIP: nvitop's select_devices did not run here:", err)
    else:
        pin, _ = best("import gpumap; gpumap.pin()")
        print(f"TIME nvitop select_devices {sel:.1f} ms (+{sel - bare:.1f}) vs gpumap import+devices "
              f"{dev:.1f} ms (+{dev - bare:.1f}), import+pin {pin:.1f} ms (+{pin - bare:.1f}); "
              f"ratio select_devices/devices over bare: {(sel - bare) / max(dev - bare, 0.1):.1f}x")
PY
echo "== done"
