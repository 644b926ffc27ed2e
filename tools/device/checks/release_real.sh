#!/usr/bin/env bash
# The portable release artifacts against the real driver (issue 42, item 3): the tarball unpacked
# under a path with a space and run from there with no LD_LIBRARY_PATH: what it links; `list` against
# nvidia-smi field by field (tools/device/checks/csv_vs_nvidia_smi.sh); `map --check` (prediction vs the
# real cuInit); `top --once` with a real torch process on the GPU; the wheel installed with pip
# into a venv that sees the host's torch, and its devices() inside that torch process once CUDA
# runs there (live), against torch's own UUID; `python -m gpumap`.
# usage: tools/device/checks/release_real.sh ARTIFACT_DIR   (scripts/release.sh's output, carried;
#        writes $OUT/release_real.log)
source "$(dirname "$0")/common.sh" release_real "${1:-build-release/artifacts}"
A=$(cd "$B" && pwd)
date -u; nvidia-smi -L; head -1 /proc/driver/nvidia/version; ldd --version | head -1; python3 --version
. /etc/os-release && echo "host: $PRETTY_NAME"
T=$(mktemp -d "/tmp/gpumap release.XXXX")
tar -xzf "$A"/gpumap-*-linux-x86_64.tar.gz -C "$T"
G=$(echo "$T"/gpumap-*/bin/gpumap)
"$G" --version
echo "ldd:"; ldd "$G" "$(dirname "$G")/../lib/libgpumap.so.1"
check "the unpacked binary needs nothing but glibc here" \
  "! ldd '$G' '$(dirname "$G")/../lib/libgpumap.so.1' | grep -vE 'linux-vdso|libc.so.6|libm.so.6|libdl.so.2|libpthread.so.0|ld-linux|^/' | grep -q ."

bash "$(dirname "$0")/csv_vs_nvidia_smi.sh" "$G" | tee "$OUT/csv.txt" | tail -12
check "list and ps --query agree with nvidia-smi field by field" "grep -q ' 0 failed' '$OUT/csv.txt'"
"$G" list
"$G" map --check >"$OUT/check.txt" 2>&1; rc=$?
cat "$OUT/check.txt"
check "map --check: the prediction agrees with the real cuInit (exit $rc)" "[ $rc = 0 ] && grep -qi agree '$OUT/check.txt'"
CUDA_VISIBLE_DEVICES=0,0 "$G" map --check >"$OUT/check_dup.txt" 2>&1; rc=$?
cat "$OUT/check_dup.txt"
check "map --check with CUDA_VISIBLE_DEVICES=0,0 agrees with the driver too (exit $rc)" "grep -qi agree '$OUT/check_dup.txt'"

# A real torch process holding the GPU, then top --once and the wheel inside such a process.
python3 -c 'import torch, time; x = torch.ones(1 << 24, device="cuda"); open("/tmp/gpumap-holder-ready", "w").close(); time.sleep(60)' &
holder=$!
for _ in $(seq 300); do [ -e /tmp/gpumap-holder-ready ] && break; sleep 0.1; done
TERM=xterm "$G" top --once >"$OUT/top.txt" 2>&1; rc=$?
cat "$OUT/top.txt"
check "top --once shows the torch process (pid $holder) with its cuda:0 (exit $rc)" \
  "[ $rc = 0 ] && grep -E '(^| )$holder ' '$OUT/top.txt' | grep -q 'cuda:0'"

# Into a folder of its own on the python3 that has torch (a venv of it would not see torch: that
# python3 is itself a venv), then used through PYTHONPATH.
python3 -m pip install --no-index --no-cache-dir -q --target "$T/site" "$A"/pygpumap-*.whl; rc=$?
check "pip install the wheel (no index) (exit $rc)" "[ $rc = 0 ]"
export PYTHONPATH=$T/site
python3 - >"$OUT/wheel.txt" 2>&1 <<'PY'
import json, gpumap, torch
before = gpumap.devices()
x = torch.zeros(1, device="cuda")          # CUDA runs in this process now: devices() is live
after = gpumap.devices()
print(json.dumps({"file": gpumap.__file__, "before": before.source if hasattr(before, "source") else None,
                  "after": after.source if hasattr(after, "source") else None,
                  "uuid": after[0]["uuid"], "torch_uuid": "GPU-" + str(torch.cuda.get_device_properties(0).uuid),
                  "nvml_index": after[0]["nvml_index"], "line": gpumap.line()}))
PY
rc=$?
cat "$OUT/wheel.txt"
check "the wheel's devices() inside a torch process: cuda:0 is torch's GPU, from the bundled library (exit $rc)" \
  "python3 -c 'import json,sys; d=json.loads(open(\"$OUT/wheel.txt\").read().splitlines()[-1]); print(d); sys.exit(0 if d[\"uuid\"]==d[\"torch_uuid\"] and \"/site/\" in d[\"file\"] and d[\"after\"]==\"live\" else 1)'"
python3 -m gpumap >"$OUT/pym.txt" 2>&1; rc=$?
cat "$OUT/pym.txt"
check "python -m gpumap (doctor here) exits 0 (exit $rc)" "[ $rc = 0 ]"
"$T/site/bin/gpumap" list --json >/dev/null; rc=$?
check "the gpumap command pip installed reads the real driver (exit $rc)" "[ $rc = 0 ]"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
rm -rf "$T" /tmp/gpumap-holder-ready
echo "fails: $fails"
exit $((fails > 0))
