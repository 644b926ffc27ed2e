#!/usr/bin/env bash
# Issue 13 on a real GPU host: mapping snapshots against the real driver.
# Run from the repository root with the carried build:   bash tools/device/checks/snapshots_real.sh
# (GPUMAP=path/to/gpumap to use another binary).  Writes nothing outside a temporary folder (removed
# at the end) and $OUT/issue13.log when $OUT is set.
#
# Expected: every line PASS:
#   save                  -> exit 0, the file lists every GPU nvidia-smi lists (same UUIDs, same order)
#   diff right after      -> exit 0 ("SAME"), --json "same": true
#   verify --snapshot     -> exit 0
#   diff vs doctored copy -> exit 4 (driver version and one UUID changed in the copy), with the words
#                            "driver" and "the board in slot"
#   missing snapshot      -> exit 2
set -u
GPUMAP=${GPUMAP:-build/gpumap}
OUT=${OUT:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -n "$OUT" ]; then mkdir -p "$OUT"; exec > >(tee "$OUT/issue13.log") 2>&1; fi
export GPUMAP_STATE_DIR=$TMP/state GPUMAP_CACHE_DIR=$TMP/cache
fails=0
check() {  # $1 name, $2 expected exit code, $3 actual exit code, [$4 text that must appear, $5 output]
  if [ "$3" -eq "$2" ] && { [ -z "${4:-}" ] || printf '%s' "$5" | grep -qF -- "$4"; }; then
    echo "PASS: $1 (exit $3)"
  else
    echo "FAIL: $1: exit $3, expected $2${4:+ and the text '$4'}"
    printf '%s\n' "${5:-}" | sed 's/^/    /'
    fails=$((fails + 1))
  fi
}
echo "== $(date -u +%FT%TZ) $(hostname) $("$GPUMAP" --version)"
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader

F=$TMP/snap.json
out=$("$GPUMAP" snapshot save "$F" 2>&1); check "snapshot save" 0 $? "Saved the numbering" "$out"
echo "$out"
want=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | tr -d ' ' | paste -sd,)
got=$(python3 -c 'import json,sys; print(",".join(g["uuid"] for g in json.load(open(sys.argv[1]))["gpus"]))' "$F" 2>&1)
[ "$want" = "$got" ] && echo "PASS: snapshot lists nvidia-smi's GPUs in order" ||
  { echo "FAIL: snapshot GPUs '$got', nvidia-smi '$want'"; fails=$((fails + 1)); }
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("cuda_order:", json.dumps(j["cuda_order"]))' "$F"

out=$("$GPUMAP" snapshot diff "$F" 2>&1); check "snapshot diff right after save" 0 $? "SAME" "$out"
echo "$out"
out=$("$GPUMAP" snapshot diff "$F" --json 2>&1); check "snapshot diff --json" 0 $? '"same": true' "$out"
out=$("$GPUMAP" verify --snapshot "$F" 2>&1); check "verify --snapshot" 0 $? "" "$out"

python3 - "$F" "$TMP/doctored.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["driver_version"] = "1.0.0"
j["gpus"][-1]["uuid"] = "GPU-0badc0de-0000-4000-8000-000000000001"
json.dump(j, open(sys.argv[2], "w"), indent=1)
PY
out=$("$GPUMAP" snapshot diff "$TMP/doctored.json" 2>&1); check "diff against a doctored copy" 4 $? "the board in slot" "$out"
echo "$out"
out=$("$GPUMAP" verify --snapshot "$TMP/doctored.json" 2>&1); check "verify --snapshot doctored" 4 $? "driver 1.0.0 →" "$out"
out=$("$GPUMAP" snapshot diff "$TMP/none.json" 2>&1); check "missing snapshot" 2 $? "no snapshot at" "$out"
out=$("$GPUMAP" snapshot save 2>&1); check "save to the default file (GPUMAP_STATE_DIR)" 0 $? "$TMP/state/snapshot.json" "$out"
out=$("$GPUMAP" snapshot diff 2>&1); check "diff of the default file" 0 $? "SAME" "$out"

[ "$fails" -eq 0 ] && echo "ALL PASS" || echo "$fails FAILED"
exit "$fails"
