#!/usr/bin/env bash
# `gpumap serve` on the real driver: one scrape with a real torch process on the GPU, parsed by
# prometheus_client's own parser (the text format as Prometheus reads it); one gpumap_gpu_info per
# GPU nvidia-smi lists, with its UUID; the torch process's series with its own cuda_ordinal; /healthz;
# SIGTERM stops it with exit 0.  No GPU setting is changed; the only CUDA context is torch's.
# usage: tools/device/suite.sh exporter   (or: checks/exporter_real.sh BUILD_DIR)
source "$(dirname "$0")/common.sh" exporter_real "${1:-${BUILD:-build}}"
T=$(mktemp -d /tmp/gpumap-exporter.XXXXXX)
# (wait names its PIDs: a bare wait would also wait for common.sh's tee, which never ends)
cleanup() { kill ${tp:-} ${sp:-} 2>/dev/null; wait ${tp:-} ${sp:-} 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
CUDA_VISIBLE_DEVICES=0 LOCAL_RANK=0 python3 -c '
import torch, time
x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda:0"); x.fill_(1); torch.cuda.synchronize()
print("torch ready", flush=True); time.sleep(120)' >"$T/torch.out" 2>&1 & tp=$!
for _ in $(seq 300); do grep -q "torch ready" "$T/torch.out" && break; sleep 0.1; done
check "a torch process holds the GPU (pid $tp)" "grep -q 'torch ready' '$T/torch.out'"
GPUMAP_CACHE_DIR=$T/cache "$G" serve --listen 127.0.0.1:0 >"$T/serve.out" 2>"$T/serve.err" & sp=$!
for _ in $(seq 100); do grep -q 'listening on' "$T/serve.out" && break; sleep 0.1; done
url=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$T/serve.out")
check "serve says where it listens ($url)" "[ -n '$url' ]"
# The process table is read once per scrape: scrape until the torch process is in it (NVML lists a
# process a moment after its context exists), at most 20 scrapes.
for _ in $(seq 20); do
  curl -s -m 10 -o "$T/m.prom" -w '%{http_code}\n' "$url" >"$T/code"
  grep -q "pid=\"$tp\"" "$T/m.prom" && break
  sleep 0.5
done
check "scrape answered 200" "[ \"\$(cat '$T/code')\" = 200 ]"
python3 - "$T/m.prom" "$tp" >"$T/parsed.txt" 2>&1 <<'PY'
import subprocess, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
tp = sys.argv[2]
fams = {f.name: f for f in text_string_to_metric_families(text)}
smi = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid", "--format=csv,noheader"], capture_output=True,
                     text=True).stdout.split("\n")
want = {l.split(", ")[1] for l in smi if l.strip()}
info = fams.get("gpumap_gpu_info") or fams.get("gpumap_gpu")
got = {s.labels.get("uuid") for s in info.samples} if info else set()
print("families:", len(fams), "series:", sum(len(f.samples) for f in fams.values()))
print("gpu_info uuids:", sorted(got), "nvidia-smi:", sorted(want))
print(("PASS" if got == want else "FAIL") + ": one gpumap_gpu_info per nvidia-smi GPU, UUIDs equal")
procs = [s for f in fams.values() for s in f.samples if s.labels.get("pid") == tp]
print("series of the torch process:", len(procs))
for s in procs[:12]:
    print("  ", s.name, dict(sorted(s.labels.items())), s.value)
cuda = {s.labels.get("cuda_ordinal") for s in procs} - {None}
print(("PASS" if procs else "FAIL") + f": the torch process (pid {tp}) has series ({len(procs)})")
print(("PASS" if cuda == {"0"} else "FAIL") + f": its own cuda_ordinal is 0 (labels say {sorted(cuda)})")
PY
cat "$T/parsed.txt"
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "${url%/metrics}/healthz")
check "/healthz 200 on the real driver" "[ '$code' = 200 ]"
kill -TERM "$sp"; wait "$sp"; rc=$?; sp=
check "serve stops on SIGTERM with exit 0 (exit $rc)" "[ $rc = 0 ]"
echo "serve's stderr:"; cat "$T/serve.err"
echo "failures: $fails"
exit $((fails > 0))
