#!/usr/bin/env bash
# Session 9 on the GPU host (2 x H200): the per-peer NVLink model through the real NVML (pick and
# run of 2 GPUs), issue 9's checks and timings
# (python_package.sh, python_first_call_time.sh), and in-process times against nvitop's select_devices.
# usage (repo root, build/ and .dev/nvitop carried): bash tools/device/nvlink_pick_and_python.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/session9-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/session9.log") 2>&1
export PYTHONPATH=$PWD/python GPUMAP_BUILD_DIR=$PWD/build
T=$(mktemp -d /tmp/gpumap-s9-XXXXXX); trap 'rm -rf "$T"' EXIT
export GPUMAP_LOCK_DIR=$T/locks GPUMAP_CACHE_DIR=$T/cache
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER GPUMAP_SIMULATE
echo "== $(date -u +%FT%TZ) $(hostname) $(build/gpumap --version)"
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name,persistence_mode --format=csv
nvidia-smi topo -m 2>&1 | head -4

echo "== A: NVLink counted per peer through the real NVML"
if [ "$(nvidia-smi -L | grep -c '^GPU')" -lt 2 ]; then
  echo "SKIP: one GPU on this host: no NVLink pair to pick"
else
build/gpumap pick --gpus 2 --json > "$T/pick.json"; echo "pick exit $?"
python3 - "$T/pick.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n = j["notes"][0] if j.get("notes") else ""
print(("PASS" if n == "every pair joined by NVLink (18 links over 1 pair)" else "FAIL") + ": pick --gpus 2: " + n)
PY
build/gpumap run --gpus 2 --json -- true 2> "$T/run.json"; echo "run exit $?"
python3 -c "import json,sys; j=json.load(open('$T/run.json')); print(('PASS' if len(j['devices'])==2 else 'FAIL')+': run --gpus 2 -> '+str([d['nvml_index'] for d in j['devices']]))"
fi

echo "== C: issue 9 checks"; bash tools/device/python_package.sh > /dev/null 2>&1; cat "$OUT/issue9.log" | grep -E "PASS|FAIL|SKIP|TIME"
echo "== D: issue 9 timing"; bash tools/device/python_first_call_time.sh 2>&1 | grep -v "^gpumap trace" | head -40

echo "== E: in-process, fresh interpreters (ms): gpumap import+devices() vs nvitop import+select_devices()"
for i in 1 2 3 4 5; do
python3 - <<'PY'
import time
t = time.perf_counter(); import gpumap; gpumap.devices(); print(f"gpumap import+devices {1e3*(time.perf_counter()-t):.1f}")
PY
PYTHONPATH=$PWD/.dev/nvitop:$PYTHONPATH python3 - <<'PY'
import time
t = time.perf_counter(); from nvitop import select_devices; select_devices(format='index', min_count=1)
print(f"nvitop import+select_devices {1e3*(time.perf_counter()-t):.1f}")
PY
done
echo "== done"
