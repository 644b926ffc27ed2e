#!/usr/bin/env bash
# One per-process utilisation reading for every front end (issue 43): with a busy torch matmul on
# GPU 0 (nvidia-smi pmon's sm near 100 %), `ps --query=pid,utilization.sm`, `ps --json`'s
# sm_utilization, `metrics`' gpumap_process_sm_utilization_ratio and `top --once`'s SM% must all
# show it busy, three rounds a second apart (each front end a fresh process, as a user runs them).
# usage: tools/device/suite.sh monitor   (or: checks/utilization_real.sh BUILD_DIR)
source "$(dirname "$0")/common.sh" utilization_real "${1:-${BUILD:-build}}"
T=$(mktemp -d /tmp/gpumap-util.XXXXXX)
cleanup() { kill ${bp:-} 2>/dev/null; wait ${bp:-} 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
CUDA_VISIBLE_DEVICES=0 python3 -c '
import torch
a = torch.randn(8192, 8192, device="cuda:0"); torch.cuda.synchronize()
print("ready", flush=True)
while True:
    for _ in range(50): a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()' >"$T/busy.out" 2>&1 & bp=$!
for _ in $(seq 300); do grep -q ready "$T/busy.out" && break; sleep 0.1; done
sleep 3
check "a busy torch process runs on GPU 0 (pid $bp)" "grep -q ready '$T/busy.out'"
nvidia-smi pmon -c 1 -s u | tee "$T/pmon.txt"
for round in 1 2 3; do
  q=$("$G" ps --query=pid,utilization.sm --format=csv,noheader,nounits | awk -F', *' -v p="$bp" '$1 == p {print $2}')
  j=$("$G" ps --json | python3 -c "import json,sys; r=[p for p in json.load(sys.stdin)['processes'] if p['pid']==$bp]; print(r[0].get('sm_utilization') if r else 'absent')")
  m=$("$G" metrics | awk -v p="pid=\"$bp\"" '/^gpumap_process_sm_utilization_ratio/ && index($0, p) {print $NF}')
  # top's SM% cell: the row's field under the header's SM% (the cells are single words up to there)
  t=$(COLUMNS=200 "$G" top --once | awk -v p="$bp" '$1 == "PID" { for (i = 1; i <= NF; i++) if ($i == "SM%") c = i }
                                                      c && $1 == p { print $c; exit }')
  echo "round $round: ps --query '$q'; ps --json $j; metrics $m; top SM% '$t'"
  check "round $round: ps --query utilization.sm is a number above 50 ('$q')" "[[ '$q' =~ ^[0-9]+$ ]] && [ '$q' -gt 50 ]"
  check "round $round: ps --json sm_utilization above 50 ($j)" "[[ '$j' =~ ^[0-9]+$ ]] && [ '$j' -gt 50 ]"
  check "round $round: metrics' ratio above 0.5 ($m)" "python3 -c 'import sys; sys.exit(0 if float(\"${m:-0}\") > 0.5 else 1)'"
  check "round $round: top --once's SM% above 50 ('$t')" "[[ '$t' =~ ^[0-9]+%?$ ]] && [ '${t%\%}' -gt 50 ]"
  sleep 1
done
echo "failures: $fails"
exit $((fails > 0))
