#!/usr/bin/env bash
# Issue 25 on the GPU host: gpumap's prediction against the real driver for thousands of generated
# CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER values (tools/difftest/difftest.py).  Builds the minimal
# cuInit probe (tools/difftest/difftest_probe.c: cuInit and device queries, no context, no GPU
# memory) with the host's cc, then runs the harness over every CPU.  Results under $OUT:
# summary.json, vectors.jsonl (each disagreement shrunk, in tests/vectors/ format, with driver
# version and host), disagreements.jsonl, cases.jsonl, log.txt.  Prints progress and the counts
# (generated / compared / agreeing / disagreeing).  Ends within DEADLINE seconds (default 500).
#
# usage (repo root, with the carried build folder): bash tools/device/checks/difftest.sh [COUNT] [SEED]
#   GPUMAP=path/to/gpumap (default build/gpumap), DEADLINE=seconds, JOBS=n (default nproc)
#   A dry run anywhere, against the simulated driver: SIMULATE=build/hosts/h200x2.json
#   CUDA_LIB=build/sim/libcuda.so.1 bash tools/device/checks/difftest.sh 200
set -u
G=${GPUMAP:-build/gpumap}
COUNT=${1:-5000}
SEED=${2:-25}
OUT=${OUT:-/tmp/difftest-out}
mkdir -p "$OUT"
[ -x "$G" ] || { echo "FAIL: no $G (carry the build folder, or set GPUMAP=)"; exit 2; }
W=$(mktemp -d /tmp/gpumap-difftest-XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -o "$W/difftest_probe" tools/difftest/difftest_probe.c -ldl || { echo "FAIL: cannot build the probe"; exit 2; }
echo "== $(date -u +%FT%TZ) $(hostname) $(nproc) CPUs; $("$G" --version | head -1)"
if [ -z "${SIMULATE:-}" ]; then
  nvidia-smi --query-gpu=index,uuid,pci.bus_id,name,driver_version --format=csv,noheader 2>&1 | sed 's/^/== nvidia-smi: /'
  # The first cuInit after boot may load the module and take longer: one warm-up probe.
  "$W/difftest_probe" >/dev/null 2>&1
fi
sim=()
[ -n "${SIMULATE:-}" ] && sim=(--simulate "$SIMULATE" --cuda-lib "${CUDA_LIB:-build/sim/libcuda.so.1}")
PYTHONUNBUFFERED=1 python3 tools/difftest/difftest.py --gpumap "$G" --probe "$W/difftest_probe" "${sim[@]}" \
  --count "$COUNT" --seed "$SEED" --jobs "${JOBS:-$(nproc)}" --deadline "${DEADLINE:-500}" --out "$OUT"
rc=$?
echo "== difftest exit $rc; results in $OUT: $(ls "$OUT" | tr '\n' ' ')"
# The verdict: every compared value agrees (a disagreement is a new driver rule or a gpumap bug:
# its shrunk vector is in vectors.jsonl, ready for tests/vectors/).
python3 - "$OUT/summary.json" <<'PY' || rc=1
import json, sys
s = json.load(open(sys.argv[1]))
ok = s.get("compared", 0) > 0 and s.get("disagreeing", 1) == 0
print(("PASS" if ok else "FAIL") + ": %s of %s generated values compared, %s agree with the real cuInit"
      % (s.get("compared"), s.get("generated"), s.get("agreeing")))
sys.exit(0 if ok else 1)
PY
exit $rc
