#!/usr/bin/env bash
# Issue 4 on a real GPU host (2 x H200): two real jobs started at once through `gpumap run --gpus 1`
# must land on different GPUs, and nvidia-smi must see each job's process on the UUID gpumap printed.
# Then the cost of `gpumap run -- true` against a bare `true`.
# Needs: build/gpumap (carried build), python3 with torch, nvidia-smi.  Writes $OUT/issue4.log.
set -u
G=${GPUMAP:-build/gpumap}
OUT=${OUT:-/tmp/issue4-out}
mkdir -p "$OUT"
LOG=$OUT/issue4.log
WORK=$(mktemp -d)
export GPUMAP_LOCK_DIR=$WORK/leases   # a private lease folder: nothing else on the host interferes
exec > >(tee "$LOG") 2>&1

echo "== host"; date -u; nvidia-smi -L; "$G" --version
echo "== gpumap list (before)"; "$G" list
echo "== gpumap pick --gpus 2 --json"; "$G" pick --gpus 2 --json

JOB='
import os, time, torch
x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:0"); torch.cuda.synchronize()
p = torch.cuda.get_device_properties(0)
print("job pid", os.getpid(), "CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES"),
      "CUDA_DEVICE_ORDER", os.environ.get("CUDA_DEVICE_ORDER"), "device_count", torch.cuda.device_count(),
      "torch uuid", getattr(p, "uuid", "n/a"), "affinity", sorted(os.sched_getaffinity(0))[:4], "...", flush=True)
time.sleep(5)
'
echo "== two jobs at once"
"$G" run --gpus 1 -- python3 -c "$JOB" > "$WORK/job1.out" 2> "$WORK/job1.err" & p1=$!
"$G" run --gpus 1 -- python3 -c "$JOB" > "$WORK/job2.out" 2> "$WORK/job2.err" & p2=$!
for i in 1 2 3 4 5 6; do
  sleep 1
  echo "-- t=${i}s nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory"
  nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader
  [ "$i" = 2 ] && { echo "-- gpumap list while running"; "$G" list; }
done
wait $p1; rc1=$?; wait $p2; rc2=$?
for j in 1 2; do echo "-- job$j stderr (gpumap's mapping)"; cat "$WORK/job$j.err"; echo "-- job$j stdout"; cat "$WORK/job$j.out"; done
echo "exit codes: job1=$rc1 job2=$rc2"
u1=$(grep -o 'CUDA_VISIBLE_DEVICES=GPU-[0-9a-f-]*' "$WORK/job1.err" | head -1 | cut -d= -f2)
u2=$(grep -o 'CUDA_VISIBLE_DEVICES=GPU-[0-9a-f-]*' "$WORK/job2.err" | head -1 | cut -d= -f2)
echo "gpumap printed: job1=$u1 job2=$u2"
if [ -n "$u1" ] && [ -n "$u2" ] && [ "$u1" != "$u2" ] && [ "$rc1" = 0 ] && [ "$rc2" = 0 ]; then
  echo "VERDICT two-jobs: PASS (different GPUs)"
else
  echo "VERDICT two-jobs: FAIL"
fi

echo "== overhead: 50 x gpumap run -- true vs 50 x /bin/true"
N=50
t0=$(date +%s%N); for i in $(seq $N); do /bin/true; done; t1=$(date +%s%N)
fails=0
t2=$(date +%s%N); for i in $(seq $N); do "$G" run -- true 2>/dev/null || fails=$((fails+1)); done; t3=$(date +%s%N)
t4=$(date +%s%N); for i in $(seq $N); do "$G" run --no-cpu-bind -- true 2>/dev/null || true; done; t5=$(date +%s%N)
awk -v b=$((t1-t0)) -v g=$((t3-t2)) -v n=$((t5-t4)) -v N=$N -v f=$fails 'BEGIN {
  printf "bare true:            %.3f ms per run\n", b/N/1e6
  printf "gpumap run -- true:   %.3f ms per run (%d failed)\n", g/N/1e6, f
  printf "  --no-cpu-bind:      %.3f ms per run\n", n/N/1e6
  printf "overhead:             %.3f ms per run (ratio %.1fx)\n", (g-b)/N/1e6, g/(b>0?b:1)
}'
rm -rf "$WORK"
