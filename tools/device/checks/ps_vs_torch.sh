#!/usr/bin/env bash
# Issue 5 on a real GPU host (2 x H200, python3 with torch, gpumap built at build/gpumap):
# start PyTorch processes with different CUDA_VISIBLE_DEVICES, then check `gpumap ps` against
# them and time it next to nvidia-smi's process query.  Writes $OUT/issue5.log (and the JSON).
#
# Expected (what the log lets you check):
#   A  CUDA_VISIBLE_DEVICES=1              -> on nvidia-smi GPU 1, its cuda:0, no outside-visible-set
#   B  CUDA_VISIBLE_DEVICES=GPU-<uuid 0>   -> on GPU 0, its cuda:0
#   C  unset; after CUDA started, Python sets os.environ["CUDA_VISIBLE_DEVICES"]="1"
#                                          -> on GPU 0 (cuda:0 at start); /proc/PID/environ still shows
#                                             it unset, so gpumap says cuda:0 and no-visibility-shared-host
#   D  CUDA_VISIBLE_DEVICES=1 at exec, Python sets it to "0" BEFORE CUDA starts
#                                          -> on GPU 0, outside its starting set: outside-visible-set (error)
set -u
OUT=${OUT:-/tmp/issue5-out}; mkdir -p "$OUT"
LOG=$OUT/issue5.log
GPUMAP=${GPUMAP:-build/gpumap}
exec > >(tee "$LOG") 2>&1
echo "== $(date -u +%FT%TZ) $(hostname)"
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv
U0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | tr -d ' ')
echo "GPU 0 uuid: $U0"
READY=$(mktemp -d)

worker() {  # $1 tag, $2 python code run before CUDA, $3 python code run after CUDA started
  python3 - "$READY/$1" <<PY &
import os, sys, time
$2
import torch
x = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")  # 256 MiB on its cuda:0
torch.cuda.synchronize()
$3
open(sys.argv[1], "w").write(str(os.getpid()))
print("$1 pid", os.getpid(), "CUDA_VISIBLE_DEVICES now", os.environ.get("CUDA_VISIBLE_DEVICES"),
      "torch device", torch.cuda.get_device_name(0), flush=True)
time.sleep(30)
PY
}

CUDA_VISIBLE_DEVICES=1 worker A "" ""
CUDA_VISIBLE_DEVICES=$U0 worker B "" ""
(unset CUDA_VISIBLE_DEVICES; worker C "" 'os.environ["CUDA_VISIBLE_DEVICES"] = "1"')
CUDA_VISIBLE_DEVICES=1 worker D 'os.environ["CUDA_VISIBLE_DEVICES"] = "0"' ""
for i in $(seq 1 120); do [ "$(ls "$READY" | wc -l)" -ge 4 ] && break; sleep 0.5; done
echo "ready: $(ls "$READY" | tr '\n' ' ')"
for t in A B C D; do [ -f "$READY/$t" ] && echo "$t = pid $(cat "$READY/$t")"; done

echo; echo "== nvidia-smi --query-compute-apps"
nvidia-smi --query-compute-apps=pid,used_memory,gpu_uuid --format=csv
echo; echo "== gpumap ps"
"$GPUMAP" ps
echo; echo "== gpumap ps --json"
"$GPUMAP" ps --json | tee "$OUT/issue5-ps.json"
echo; echo "== checks"
python3 - "$OUT/issue5-ps.json" "$READY" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1])); ready = sys.argv[2]
for t, want in [("A", (1, 0, None)), ("B", (0, 0, None)), ("C", (0, 0, None)), ("D", (0, None, "outside-visible-set"))]:
    p = os.path.join(ready, t)
    if not os.path.exists(p): print(t, "not started"); continue
    pid = int(open(p).read())
    rows = [r for r in j["processes"] if r["pid"] == pid]
    for r in rows:
        ids = [f["id"] for f in r["findings"]]
        ok = (r["nvml_index"], r["cuda_ordinal"]) == want[:2] and (want[2] is None or want[2] in ids)
        print(t, "pid", pid, "gpu", r["nvml_index"], "ordinal", r["cuda_ordinal"], "cvd", r["cuda_visible_devices"],
              "findings", ids, "OK" if ok else "UNEXPECTED (want gpu %s ordinal %s %s)" % want)
    if not rows: print(t, "pid", pid, "MISSING from gpumap ps")
PY

echo; echo "== timing, 10 runs each (ms)"
t() { local s e; s=$(date +%s%N); "$@" > /dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
echo "gpumap ps --json:      $(for i in $(seq 10); do t "$GPUMAP" ps --json; done | tr '\n' ' ')"
echo "gpumap ps:             $(for i in $(seq 10); do t "$GPUMAP" ps; done | tr '\n' ' ')"
echo "nvidia-smi query-apps: $(for i in $(seq 10); do t nvidia-smi --query-compute-apps=pid,used_memory,gpu_uuid --format=csv; done | tr '\n' ' ')"

echo; echo "== from a new PID namespace with its own /proc (expect: not visible from here)"
if command -v unshare > /dev/null; then
  unshare --pid --fork --mount-proc "$GPUMAP" ps 2>&1 | head -20 || echo "unshare not permitted"
fi
rm -rf "$READY"  # the workers exit by themselves after 30 s
echo "== done"
