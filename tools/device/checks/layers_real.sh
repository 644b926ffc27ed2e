#!/usr/bin/env bash
# Issue 30 against the real driver (one GPU is all this host has): the allowed set with Slurm's
# variables set by hand (no Slurm here), bind's warning about a GPU another program uses (a real torch
# process holding memory), and the commands the merge touched (list, map --check, doctor, ps --json,
# which) still right beside nvidia-smi.  Needs the carried build folder (gpumap, sim/, hosts/).
# usage: tools/device/checks/layers_real.sh BUILD_DIR   (writes $OUT/layers_real.log)
source "$(dirname "$0")/common.sh" layers_real "${1:-${BUILD:-build}}"
date -u; nvidia-smi -L; head -1 /proc/driver/nvidia/version; "$G" --version
U0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
export GPUMAP_LOCK_DIR=$OUT/locks
check "map --check agrees with the driver" "'$G' map --check >/dev/null"
check "list --json names nvidia-smi's GPU 0" "'$G' list --json | grep -q '$U0'"
check "doctor runs (exit 0 or 7)" "'$G' doctor >/dev/null; [ \$? -eq 0 -o \$? -eq 7 ]"
# A Slurm step whose ids place GPU 0 (minor 0): pick takes it, --gpus 2 is refused naming the step.
S="SLURM_JOB_ID=7 SLURM_STEP_GPUS=0"
check "pick in a step of GPU 0 gives GPU 0" "env $S '$G' pick --format uuid | grep -q '$U0'"
env $S "$G" pick --gpus 2 >/dev/null 2>"$OUT/pick2.err"; r=$?
check "pick --gpus 2 on this one-GPU host: exit 6 (not enough GPUs)" "[ $r -eq 6 ]"
# Ids that cannot be placed on one GPU (a cgroup would leave exactly it): nothing refused.
check "SLURM_STEP_GPUS=5 on one GPU reads as a device cgroup: pick still works" "env SLURM_STEP_GPUS=5 '$G' pick >/dev/null"
# bind where no scheduler chose: a real process holding memory on GPU 0 makes bind warn, naming it.
python3 -c "import torch,sys,time; x=torch.ones(1<<26,device='cuda'); print('ready',flush=True); time.sleep(60)" >"$OUT/holder.out" 2>&1 &
holder=$!
for _ in $(seq 300); do grep -q ready "$OUT/holder.out" && break; sleep 0.1; done
LOCAL_RANK=0 "$G" bind -- true 2>"$OUT/bind.err"; echo "bind exit $?"; cat "$OUT/bind.err"
check "bind warns that its GPU runs another program, naming its pid ($holder)" \
  "grep -q 'gpumap bind: warning: local rank 0' '$OUT/bind.err' && grep -q '$holder' '$OUT/bind.err'"
env SLURM_LOCALID=0 SLURM_STEP_GPUS=0 "$G" bind -- true 2>"$OUT/bind-slurm.err"
check "under a Slurm allocation bind does not warn (the scheduler chose)" "! grep -q warning '$OUT/bind-slurm.err'"
"$G" ps --json >"$OUT/ps.json"
check "ps --json sees the holder on GPU 0 with its command" \
  "python3 -c 'import json,sys; j=json.load(open(\"$OUT/ps.json\")); sys.exit(0 if any(p.get(\"pid\")==$holder for p in j.get(\"processes\",[])) else 1)'"
kill "$holder"; wait "$holder" 2>/dev/null
check "which 0 answers; which 0 in a step of another GPU id is refused or read as a cgroup" "'$G' which 0 >/dev/null"
echo "failures: $fails"
exit $((fails > 0))
