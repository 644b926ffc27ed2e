#!/usr/bin/env bash
# This session's driver-facing changes against the real driver (one H200): ps --pid N explains a
# real torch process, completion's GPU words (__describe --format gpus) name nvidia-smi's GPUs,
# list at 80 columns keeps the model whole, ps/metrics with no pod on the host never ask a
# kubelet (and say nothing about one), every --help fits 80 columns, a full stdout is said.
# usage: tools/device/suite.sh cli
source "$(dirname "$0")/common.sh" cli_real "${1:-${BUILD:-build}}"
date -u; nvidia-smi -L; head -1 /proc/driver/nvidia/version; "$G" --version
U0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
export GPUMAP_LOCK_DIR=$OUT/locks
# Completion's GPU words: nvidia-smi's indices and UUIDs, NVML only (no CUDA context).
"$G" __describe --format gpus >"$OUT/gpus.txt"; cat "$OUT/gpus.txt"
check "__describe --format gpus lists index 0 and nvidia-smi's UUID" "grep -qx 0 '$OUT/gpus.txt' && grep -qx '$U0' '$OUT/gpus.txt'"
source "$B/completion/bash/gpumap"
COMP_WORDS=("$G" which ""); COMP_CWORD=2; _gpumap
check "bash: which <Tab> offers the real GPU's UUID" "printf '%s\n' \"\${COMPREPLY[@]}\" | grep -qx '$U0'"
# list at 80 columns: the model whole.
COLUMNS=80 script -qc "'$G' list" /dev/null >"$OUT/list80.txt"; cat "$OUT/list80.txt"
short=${NAME#NVIDIA }
check "list at 80 columns keeps the name ($short)" "grep -q '$short' '$OUT/list80.txt'"
check "list at 80 columns: no line past 80" "[ \$(sed 's/\r$//' '$OUT/list80.txt' | awk '{ if (length(\$0) > m) m = length(\$0) } END { print m + 0 }') -le 80 ]"
# A real torch process: ps --pid explains it.
CUDA_VISIBLE_DEVICES=$U0 python3 -c "import torch,time; x=torch.ones(1<<26,device='cuda'); print('ready',flush=True); time.sleep(60)" >"$OUT/holder.out" 2>&1 &
holder=$!
for i in $(seq 1 60); do grep -q ready "$OUT/holder.out" && break; sleep 1; done
sleep 1
"$G" ps --pid $holder >"$OUT/ps_pid.txt"; cat "$OUT/ps_pid.txt"
check "ps --pid explains the torch process: its variables" "grep -q 'CUDA_VISIBLE_DEVICES=$U0' '$OUT/ps_pid.txt'"
check "ps --pid: its cuda:0 is nvidia-smi 0" "grep -q 'cuda:0 -> nvidia-smi 0  $U0' '$OUT/ps_pid.txt'"
"$G" ps --json >"$OUT/ps.json"
check "ps --json: no pod on this host, the kubelet never asked" "python3 -c \"import json,sys; d=json.load(open('$OUT/ps.json')); assert d['kubelet'] is None; assert all(p['pod_uid'] is None for p in d['processes']), d\""
check "ps -v is ps --all" "[ \"\$('$G' ps -v --wide | sed 1d)\" = \"\$('$G' ps --all --wide | sed 1d)\" ]"
"$G" metrics >"$OUT/metrics.txt"
check "metrics: process_info for the torch pid, pod labels empty" "grep 'gpumap_process_info' '$OUT/metrics.txt' | grep -q 'pid=\"$holder\"'"
kill $holder; wait $holder 2>/dev/null
# Every --help within 80 columns, and a full stdout said with its reason.
w=0; for c in "" map list ps top pick run bind which explain doctor verify job job-map snapshot serve metrics; do
  n=$("$G" $c --help | awk 'length($0) > 80' | wc -l); w=$((w + n)); done
check "every --help fits 80 columns" "[ $w -eq 0 ]"
"$G" metrics >/dev/full 2>"$OUT/full.err"; r=$?
check "metrics into /dev/full: exit 1, 'No space left on device'" "[ $r -eq 1 ] && grep -q 'No space left on device' '$OUT/full.err'"
echo "failures: $fails"
exit $fails
