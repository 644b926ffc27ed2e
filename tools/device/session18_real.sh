#!/usr/bin/env bash
# This session's driver-facing changes against the real driver (one H200): the comma lists of
# CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, launcher and cpu lists now cut by one helper
# (model/text.h: split): gpumap's prediction against the real cuInit for generated values
# (tools/device/difftest.sh, a shorter run); a relative $GPUMAP_CDI_DIRS is gpumap's usage error;
# then session17_real.sh again (a real torch process in a kubelet-named cgroup, counted inside its
# container: with one GPU its container numbers it as the host does, so ps marks no cell `cuda:N*`).
# usage: tools/device/session18_real.sh BUILD_DIR   (writes $OUT/session18_real.log and difftest/)
source "$(dirname "$0")/common.sh" session18_real "${1:-build-dev}"
L=$(cd "$B/lib" && pwd)
gm() { LD_LIBRARY_PATH=$L "$G" "$@"; }
date -u; nvidia-smi -L; head -1 /proc/driver/nvidia/version; gm --version

# The prediction: generated values, the real driver's answer for each.
LD_LIBRARY_PATH=$L GPUMAP=$G OUT=$OUT/difftest DEADLINE=${DEADLINE:-240} bash tools/device/difftest.sh "${COUNT:-3000}" 18 |
  tail -15
check "difftest: every compared value agrees with the real driver" \
  "python3 -c 'import json,sys; s=json.load(open(\"$OUT/difftest/summary.json\")); print(s); sys.exit(0 if s.get(\"compared\",0)>0 and s.get(\"disagreeing\",1)==0 else 1)'"

# Parsers that now share the helper, through the real binary: lists with empty pieces.
gm map --env CUDA_VISIBLE_DEVICES=0, --json >"$OUT/map_trailing.json"; rc=$?
check "CUDA_VISIBLE_DEVICES=0, (an empty last piece): cuda:0 kept, exit $rc" \
  "python3 -c 'import json; d=json.load(open(\"$OUT/map_trailing.json\")); assert len(d[\"cuda\"][\"devices\"])==1, d'"
GPUMAP_CDI_DIRS=etc/cdi gm pods >"$OUT/cdi_rel.out" 2>"$OUT/cdi_rel.err"; rc=$?
cat "$OUT/cdi_rel.err"
check "a relative GPUMAP_CDI_DIRS: exit 2, named, nothing on stdout" \
  "[ $rc = 2 ] && grep -q 'GPUMAP_CDI_DIRS=\`etc/cdi\`' '$OUT/cdi_rel.err' && [ ! -s '$OUT/cdi_rel.out' ]"

# The pods on the real GPU (session 17's script), then the table's mark.
OUT=$OUT/s17 bash "$(dirname "$0")/session17_real.sh" "$B" | tail -30
s17=${PIPESTATUS[0]}
check "session17_real.sh passes again (exit $s17)" "[ $s17 = 0 ]"
if [ -f "$OUT/s17/ps_pods.txt" ]; then
  check "one GPU: the container numbers it as the host does, no cuda:N* mark" "! grep -q 'cuda:[0-9]\\*' '$OUT/s17/ps_pods.txt'"
fi
echo "fails: $fails"
exit $((fails > 0))
