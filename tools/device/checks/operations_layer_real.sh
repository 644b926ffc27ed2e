#!/usr/bin/env bash
# The operations layer against the real driver (issue 21): the typed NVML binding reads what
# nvidia-smi lists, the library's devices() is `map --json`'s cuda.devices object for object (live
# and predicted), pin's environment round-trips through torch, gpumap_cuda_initialized follows a
# real cuInit, and an error under --json is JSON.  Needs the carried build folder (gpumap,
# libgpumap.so, gpumap-probe, sim/, hosts/) and python/.  One PASS/FAIL line per check.
# usage: tools/device/checks/operations_layer_real.sh BUILD_DIR   (writes $OUT/operations_layer.log)
source "$(dirname "$0")/common.sh" operations_layer "${1:-${BUILD:-build}}"
date -u; nvidia-smi -L; head -1 /proc/driver/nvidia/version; "$G" --version
"$G" list --json > "$OUT/list.json"
check "list --json is valid JSON and lists nvidia-smi's GPUs (UUIDs, order)" \
  "python3 -c 'import json,sys,subprocess; j=json.load(open(\"$OUT/list.json\")); s=subprocess.run([\"nvidia-smi\",\"--query-gpu=uuid\",\"--format=csv,noheader\"],capture_output=True,text=True).stdout.split(); sys.exit(0 if [g[\"uuid\"] for g in j[\"gpus\"]]==s else 1)'"
check "every required NVML call bound (bindings)" \
  "python3 -c 'import json,sys; j=json.load(open(\"$OUT/list.json\")); b=j.get(\"bindings\") or j.get(\"driver\",{}).get(\"bindings\") or []; sys.exit(0 if all(x.get(\"bound\") for x in b if x.get(\"required\")) else 1)'"
"$G" ps --json > "$OUT/ps.json"; check "ps --json is valid JSON" "python3 -m json.tool '$OUT/ps.json' >/dev/null"
check "map --check agrees with the driver" "'$G' map --check >/dev/null"
check "global options before the command" "'$G' --json which 0 | python3 -m json.tool >/dev/null"
check "an error under --json is a JSON object on stdout" \
  "'$G' --json which 99 2>/dev/null | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)[\"error\"][\"code\"]==2 else 1)'"
# serve and metrics through their session operations (serve_exporter, write_metrics_textfile): the
# same series over HTTP and in a textfile, one gpumap_gpu_info per nvidia-smi GPU, /healthz 200.
"$G" serve --listen 127.0.0.1:0 > "$OUT/serve.out" 2>&1 & serve_pid=$!
for _ in $(seq 50); do grep -q listening "$OUT/serve.out" && break; sleep 0.1; done
url=$(sed -n 's/.*listening on \(http[^ ]*\)/\1/p' "$OUT/serve.out")
check "serve: /metrics has one gpumap_gpu_info per nvidia-smi GPU, /healthz is 200" \
  "python3 -c 'import sys,urllib.request as u,subprocess; m=u.urlopen(\"$url\",timeout=30).read().decode(); h=u.urlopen(\"$url\".replace(\"/metrics\",\"/healthz\"),timeout=30).status; n=len(subprocess.run([\"nvidia-smi\",\"-L\"],capture_output=True,text=True).stdout.splitlines()); sys.exit(0 if h==200 and sum(1 for l in m.splitlines() if l.startswith(\"gpumap_gpu_info{\"))==n else 1)'"
kill "$serve_pid"; wait "$serve_pid"; echo "serve exit $? after SIGTERM"
check "metrics --textfile writes the series atomically" \
  "'$G' metrics --textfile '$OUT/gpumap.prom' && grep -q '^gpumap_exporter_up 1' '$OUT/gpumap.prom'"
GPUMAP_LIBRARY=$B/libgpumap.so PYTHONPATH=python python3 - "$G" <<'PY'
import json, os, subprocess, sys
import gpumap
G = sys.argv[1]
fails = 0
def check(what, ok):
    global fails
    print(("PASS: " if ok else "FAIL: ") + what)
    fails += 0 if ok else 1
cli = json.loads(subprocess.run([G, "map", "--json"], capture_output=True, text=True).stdout)["cuda"]["devices"]
# Not enough GPUs: the error's passed_over holds device objects, as pick --json's does.
try:
    gpumap.pin(gpus=1, min_free_mib=2**40)
    check("pin asking 1 TiB free raises NotEnoughGpusError", False)
except gpumap.NotEnoughGpusError as e:
    over = e.details.get("passed_over", [])
    check("pin's passed_over names every GPU as a device object with reasons, like pick --json",
          len(over) == len(cli) and all(set(x) >= {"nvml_index", "uuid", "pci_bus_id", "name", "mig", "reasons"} and x["reasons"] for x in over))
check("devices() (predicted) == map --json's cuda.devices", gpumap.devices() == cli and gpumap.devices().source == "predicted")
check("cuda_initialized() is False before torch starts CUDA", not gpumap.cuda_initialized())
p = gpumap.pin()
check("pin sets UUIDs and PCI_BUS_ID", os.environ["CUDA_VISIBLE_DEVICES"] == ",".join(p.uuids) and os.environ["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID")
import torch
torch.cuda.init()
import ctypes
lib = ctypes.CDLL(os.environ["GPUMAP_LIBRARY"])
check("gpumap_cuda_initialized is 1 after torch.cuda.init()", lib.gpumap_cuda_initialized() == 1)
live = gpumap.devices()
check("devices() is live after cuInit and names pin's GPU", live.source == "live" and [d["uuid"] for d in live] == p.uuids)
check("torch's cuda:0 is pin's GPU", str(torch.cuda.get_device_properties(0).uuid) in p.uuids[0])
p.release()
sys.exit(1 if fails else 0)
PY
[ $? -eq 0 ] || fails=$((fails + 1))
OUT=$OUT bash tools/device/checks/cuda_ipc.sh "$G" >/dev/null 2>&1; echo "cuda_ipc.sh exit $? (log: cuda_ipc.log)"
echo "operations_layer: $fails failed"
[ "$fails" -eq 0 ]
