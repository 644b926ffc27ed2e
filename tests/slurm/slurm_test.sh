#!/usr/bin/env bash
# gpumap inside a real Slurm (Debian's 22.05): every layout of issue 10, in both configurations
# (plain: task/none; cgroup: task/cgroup + ConstrainDevices=yes).  The jobs use the simulated
# driver on a 4-GPU host whose dev_dir is the fake device-node folder Slurm's gres.conf names,
# so inside a device cgroup the fake NVML/CUDA see only what the job may open.
#
# usage: tests/slurm/slurm_test.sh GPUMAP_BINARY [plain] [cgroup]
# Prints PASS/FAIL/SKIP lines.  Exit 0: all ran passed (a configuration this machine cannot run is
# a SKIP line, never a pass); 1: a failure; 77: Slurm cannot start here at all (ctest: skipped).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster.sh"
slurm_test_args "$0" "$@"
trap 'slurm_stop' EXIT

U=(GPU-5a000000-0000-4000-8000-000000000000 GPU-5a000000-0000-4000-8000-000000000001
   GPU-5a000000-0000-4000-8000-000000000002 GPU-5a000000-0000-4000-8000-000000000003)

# The simulated host: four H200s, minor numbers in PCI order, device nodes in $SLURM_DEV.
write_host() {
  local gpus= i
  for i in 0 1 2 3; do
    gpus+="${gpus:+,}{\"name\": \"NVIDIA H200\", \"uuid\": \"${U[$i]}\", \"pci_bus_id\": \"00000000:1$i:00.0\",
      \"minor_number\": $i, \"memory_total_mib\": 143771, \"multiprocessor_count\": 132}"
  done
  echo "{\"dev_dir\": \"$SLURM_DEV\", \"gpus\": [$gpus]}" >"$SLURM_DIR/host.json"
}

# Run in every task: `task.sh EXPECT0 EXPECT1 ...` takes the UUID list for its $SLURM_PROCID and
# checks with `gpumap verify` that cuda:0.. are exactly those physical GPUs.  The Slurm variables
# go to a "vars" line (kept in the log: docs/launch.md's table comes from them).
write_task() {
  cat >"$SLURM_DIR/task.sh" <<'TASK'
#!/bin/bash
shift "${SLURM_PROCID:-0}"
echo "vars rank=$SLURM_PROCID CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} SLURM_STEP_GPUS=${SLURM_STEP_GPUS-unset} SLURM_JOB_GPUS=${SLURM_JOB_GPUS-unset} SLURM_GPUS_ON_NODE=${SLURM_GPUS_ON_NODE-unset}"
if out=$(gpumap verify --expect "$1" 2>&1); then echo "rank ${SLURM_PROCID:-0} ok"; else
  echo "rank ${SLURM_PROCID:-0} wrong: $out" | tr '\n' ' '; echo; fi
TASK
  chmod +x "$SLURM_DIR/task.sh"
}

# check NAME EXPECTED_RANK_LINES COMMAND...: the "rank" lines of COMMAND's output, sorted.
check() {
  local name=$1 want=$2 out got
  shift 2
  out=$(timeout 60 "$@" 2>&1)
  got=$(grep '^rank ' <<<"$out" | sort)
  grep '^vars ' <<<"$out" | sort | sed "s/^/      [$mode] $name: /"
  if [ "$got" = "$want" ]; then pass "$name"; else fail "$name" "want: $want"$'\n'"got: $out"; fi
}
ok_ranks() { local i; for ((i = 0; i < $1; i++)); do echo "rank $i ok"; done; }

wait_running() {  # wait_running JOBID: until the job runs (or 60 s: a bound, not a wait)
  for _ in $(seq 1 300); do
    [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = RUNNING ] && return 0
    sleep 0.2
  done
  return 1
}

run_mode() {
  mode=$1
  if [ "$mode" = cgroup ]; then
    slurm_has_device_cgroups || return
  fi
  if ! slurm_start "$mode"; then fail "slurm starts" "see the logs above"; return; fi
  pass "slurm starts, node idle"
  write_host
  write_task
  export GPUMAP_SIMULATE=$SLURM_DIR/host.json GPUMAP_LOCK_DIR=$SLURM_DIR/leases GPUMAP_CACHE_DIR=$SLURM_DIR/cache
  local T=$SLURM_DIR/task.sh

  check "srun --gres=gpu:2" "$(ok_ranks 1)" srun --gres=gpu:2 "$T" "${U[0]},${U[1]}"
  check "srun -n 2 --gpus-per-task=1" "$(ok_ranks 2)" srun -n 2 --gpus-per-task=1 "$T" "${U[0]}" "${U[1]}"
  check "srun -n 2 --gres=gpu:2 --gpu-bind=map_gpu:1,0" "$(ok_ranks 2)" \
    srun -n 2 --gres=gpu:2 --gpu-bind=map_gpu:1,0 "$T" "${U[1]}" "${U[0]}"

  # sbatch --gpus=3: the batch step, an inner srun, an inner srun --gpus=1.
  check "sbatch --gpus=3 (batch step, srun, srun --gpus=1)" "$(printf 'rank 0 ok\nrank 0 ok\nrank 0 ok')" \
    bash -c "sbatch -Q --wait --gpus=3 -o '$SLURM_DIR/b3.out' --wrap '$T ${U[0]},${U[1]},${U[2]}; srun $T ${U[0]},${U[1]},${U[2]}; srun --gpus=1 $T ${U[0]}' && cat '$SLURM_DIR/b3.out'"

  # Two concurrent jobs: A holds GPUs 0,1 while B runs; B's GPUs are 2,3 (under a device cgroup
  # CUDA_VISIBLE_DEVICES=0,1 there, renumbered).  Inside B also: doctor, pick, run.
  local a
  a=$(sbatch --parsable --gpus=2 -o /dev/null --wrap "sleep 300")  # (cancelled below; long enough for any load)
  if ! wait_running "$a"; then fail "two concurrent jobs" "job A never ran"; scancel "$a"; return; fi
  cat >"$SLURM_DIR/jobb.sh" <<JOBB
#!/bin/bash
$T ${U[2]},${U[3]}
echo "pick \$(gpumap pick --gpus 2 --format uuid | tr '\n' ' ')"
gpumap run --gpus 1 -- $T ${U[2]} 2>/dev/null | sed 's/^rank 0/run/'
gpumap doctor; echo "doctor-exit \$?"
# Planted: Slurm's node-global id used as the CUDA ordinal (torch.cuda.set_device(LOCAL_RANK)).
LOCAL_RANK=\${SLURM_JOB_GPUS%%,*} gpumap doctor; echo "planted-local-rank-exit \$?"
JOBB
  # Under a device cgroup the ids also fail as CUDA_VISIBLE_DEVICES (only 0,1 exist there).
  [ "$mode" = cgroup ] && echo 'CUDA_VISIBLE_DEVICES=$SLURM_JOB_GPUS gpumap doctor; echo "planted-visible-exit $?"' >>"$SLURM_DIR/jobb.sh"
  chmod +x "$SLURM_DIR/jobb.sh"
  local out
  out=$(timeout 60 sbatch -Q --wait --gpus=2 -o "$SLURM_DIR/b.out" "$SLURM_DIR/jobb.sh"; cat "$SLURM_DIR/b.out")
  scancel "$a"
  grep '^vars ' <<<"$out" | sed "s/^/      [$mode] job B: /"
  if grep -qx 'rank 0 ok' <<<"$out"; then pass "second of two concurrent jobs: map shows GPUs 2,3"; else fail "second of two concurrent jobs: map shows GPUs 2,3" "$out"; fi
  local picked
  picked=$(grep '^pick ' <<<"$out" | tr ' ,' '\n\n' | grep '^GPU-' | sort | tr '\n' ' ')
  if [ "$picked" = "${U[2]} ${U[3]} " ]; then pass "pick inside job B chooses only its GPUs"; else fail "pick inside job B chooses only its GPUs" "$out"; fi
  if grep -qx 'run ok' <<<"$out"; then pass "run inside job B runs on its own GPU"; else fail "run inside job B runs on its own GPU" "$out"; fi
  if grep -qx 'doctor-exit 0' <<<"$out" && ! sed -n '/^run ok/,/^doctor-exit/p' <<<"$out" | grep -qE '\[(warning|error)\]'; then
    pass "doctor in job B (GPUs 2,3): no trap"; else fail "doctor in job B (GPUs 2,3): no trap" "$out"; fi
  if grep -qx 'planted-local-rank-exit 7' <<<"$out" && { [ "$mode" != cgroup ] || grep -qx 'planted-visible-exit 7' <<<"$out"; }; then
    pass "doctor in job B: \$SLURM_JOB_GPUS used as a CUDA ordinal is an error"
  else fail "doctor in job B: \$SLURM_JOB_GPUS used as a CUDA ordinal is an error" "$out"; fi

  # doctor: nothing to warn about in a correct step; more ranks than GPUs is an error.  Only the
  # "rank" lines are compared: on a loaded machine srun also says "job N queued and waiting for
  # resources" while the previous step's GPUs are still being released.
  out=$(timeout 60 srun --gres=gpu:2 gpumap doctor 2>&1; echo "exit $?")
  if grep -q '^exit 0$' <<<"$out" && ! grep -qE '\[(warning|error)\]' <<<"$out"; then pass "doctor: a correct step has no trap"
  else fail "doctor: a correct step has no trap" "$out"; fi
  out=$(timeout 60 srun -n 4 --gres=gpu:2 bash -c 'gpumap doctor >/dev/null; echo "rank $SLURM_PROCID doctor $?"' 2>&1 | grep '^rank ' | sort)
  if [ "$out" = "$(printf 'rank 0 doctor 0\nrank 1 doctor 0\nrank 2 doctor 7\nrank 3 doctor 7')" ]; then
    pass "doctor: 4 ranks on 2 GPUs, ranks 2 and 3 have no cuda:\$SLURM_LOCALID"
  else fail "doctor: 4 ranks on 2 GPUs, ranks 2 and 3 have no cuda:\$SLURM_LOCALID" "$out"; fi

  out=$(timeout 60 srun -n 2 --gpus-per-task=1 bash -c 'gpumap doctor >/dev/null; echo "rank $SLURM_PROCID doctor $?"' 2>&1 | grep '^rank ' | sort)
  if [ "$out" = "$(printf 'rank 0 doctor 0\nrank 1 doctor 0')" ]; then
    pass "doctor: --gpus-per-task=1, task 1 rightly has only cuda:0"
  else fail "doctor: --gpus-per-task=1, task 1 rightly has only cuda:0" "$out"; fi

  # bind: each of 4 tasks gets its own GPU.
  check "srun -n 4 --gres=gpu:4 gpumap bind" "$(ok_ranks 4)" srun -n 4 --gres=gpu:4 gpumap bind -- "$T" "${U[@]}"

  job_tests
  [ "$mode" = plain ] && prolog_tests
  slurm_stop
}

# Host file with processes: `write_host_procs PID:GPU...` (the ranks' real PIDs, so gpumap ps
# reads their environments from /proc).
write_host_procs() {
  local gpus= i pair procs
  for i in 0 1 2 3; do
    procs=
    for pair in "$@"; do
      [ "${pair#*:}" = "$i" ] && procs+="${procs:+,}{\"pid\": ${pair%:*}, \"used_memory_mib\": 1000}"
    done
    gpus+="${gpus:+,}{\"name\": \"NVIDIA H200\", \"uuid\": \"${U[$i]}\", \"pci_bus_id\": \"00000000:1$i:00.0\",
      \"minor_number\": $i, \"memory_total_mib\": 143771, \"processes\": [$procs]}"
  done
  echo "{\"dev_dir\": \"$SLURM_DEV\", \"gpus\": [$gpus]}" >"$SLURM_DIR/host.json.new"
  mv "$SLURM_DIR/host.json.new" "$SLURM_DIR/host.json"
}

# start_ranks GRES: a job of 4 ranks that sleep; prints the job id once all 4 PIDs are known.
start_ranks() {
  rm -rf "$SLURM_DIR/pids" && mkdir -p "$SLURM_DIR/pids"
  local j
  j=$(sbatch --parsable -n 4 --gres="$1" -o "$SLURM_DIR/ranks.out" \
    --wrap "srun bash -c 'echo \$\$ >$SLURM_DIR/pids/\$SLURM_PROCID.tmp && mv $SLURM_DIR/pids/\$SLURM_PROCID.tmp $SLURM_DIR/pids/\$SLURM_PROCID; exec sleep 300'")
  for _ in $(seq 1 300); do
    [ "$(ls "$SLURM_DIR/pids" | grep -c '^[0-3]$')" = 4 ] && { echo "$j"; return 0; }
    sleep 0.2
  done
  scancel "$j"
  return 1
}
pid_of() { cat "$SLURM_DIR/pids/$1"; }

job_tests() {
  local j out rc
  # 4 ranks on 4 GPUs, one each: one row per rank, nothing to report.
  if ! j=$(start_ranks gpu:4); then fail "gpumap job" "the ranks never started"; return; fi
  write_host_procs "$(pid_of 0):0" "$(pid_of 1):1" "$(pid_of 2):2" "$(pid_of 3):3"
  out=$(timeout 60 gpumap job "$j" 2>&1); rc=$?
  local rows
  rows=$(grep -cE "^$SLURM_NODE +[0-3] +[0-9]+ " <<<"$out")
  if [ $rc = 0 ] && [ "$rows" = 4 ] && ! grep -qE '\[(warning|error)\]' <<<"$out"; then
    pass "gpumap job: 4 ranks on their own GPUs, one row each, no finding"
  else fail "gpumap job: 4 ranks on their own GPUs, one row each, no finding" "exit $rc"$'\n'"$out"; fi
  out=$(timeout 60 gpumap job "$j" --json 2>&1)
  if grep -q "\"rank\": *\"3\"" <<<"$out" && grep -q "\"job_id\": *\"$j\"" <<<"$out"; then pass "gpumap job --json"
  else fail "gpumap job --json" "$out"; fi
  scancel "$j"

  # 4 ranks on 3 allocated GPUs (Slurm ids 0-2): ranks 0 and 1 share GPU 0, rank 3 runs on
  # GPU 3 (not allocated), GPU 2 is idle.  Without device cgroups only: with them, a rank
  # cannot reach GPU 3 at all.  Every rank sees the 3 GPUs: local rank 1 on GPU 0 and local
  # rank 2 on GPU 1 are not on their cuda:{SLURM_LOCALID}.
  [ "$mode" = plain ] || return
  if ! j=$(start_ranks gpu:3); then fail "gpumap job findings" "the ranks never started"; return; fi
  write_host_procs "$(pid_of 0):0" "$(pid_of 1):0" "$(pid_of 2):1" "$(pid_of 3):3"
  out=$(timeout 60 gpumap job "$j" 2>&1); rc=$?
  if [ $rc = 7 ] && grep -q 'job-ranks-share-gpu' <<<"$out" && grep -q 'job-gpu-outside-allocation' <<<"$out" &&
     grep -q "job-gpu-idle: nvidia-smi GPU 2 " <<<"$out"; then
    pass "gpumap job: shared GPU, GPU outside the allocation, idle GPU (exit 7)"
  else fail "gpumap job: shared GPU, GPU outside the allocation, idle GPU (exit 7)" "exit $rc"$'\n'"$out"; fi
  if [ "$(grep -c 'rank-on-wrong-gpu:' <<<"$out")" = 2 ] && grep -q 'rank 1 (pid [0-9]*) on .*SLURM_LOCALID=1 and sees 3 GPUs' <<<"$out" &&
     grep -q 'rank 2 (pid [0-9]*) on .*SLURM_LOCALID=2 and sees 3 GPUs' <<<"$out"; then
    pass "gpumap job: local ranks 1 and 2 not on their cuda:{SLURM_LOCALID}"
  else fail "gpumap job: local ranks 1 and 2 not on their cuda:{SLURM_LOCALID}" "exit $rc"$'\n'"$out"; fi
  scancel "$j"
  write_host
}

prolog_tests() {
  # A copy in the cluster's folder: slurm.conf cannot hold a path with a space (the checkout's may).
  cp "$here/../../contrib/slurm/gpumap-taskprolog" "$SLURM_DIR/gpumap-taskprolog"
  slurm_reconfigure "TaskProlog=$SLURM_DIR/gpumap-taskprolog"
  local out
  out=$(timeout 60 srun -n 2 --gpus-per-task=1 bash -c 'echo "order=$CUDA_DEVICE_ORDER"' 2>&1)
  # --gpus-per-task=1: each task sees one GPU as cuda:0, so a rank that calls set_device(LOCAL_RANK)
  # fails on every task but 0: real Slurm's binding is what slurm-per-task-binding warns about
  # (issue 52 item 2), and the only finding.
  if [ "$(grep -c "^gpumap: rank [01] on $SLURM_NODE: cuda:0 = nvidia-smi [01] GPU-5a.*; 1 finding(s): slurm-per-task-binding (run gpumap doctor)\$" <<<"$out")" = 2 ] &&
     [ "$(grep -c '^order=PCI_BUS_ID$' <<<"$out")" = 2 ]; then
    pass "TaskProlog: one line per task, CUDA_DEVICE_ORDER=PCI_BUS_ID exported"
  else fail "TaskProlog: one line per task, CUDA_DEVICE_ORDER=PCI_BUS_ID exported" "$out"; fi
  out=$(timeout 60 srun -n 1 --gres=gpu:1 --export=ALL,CUDA_DEVICE_ORDER=FASTEST_FIRST bash -c 'echo "order=$CUDA_DEVICE_ORDER"' 2>&1)
  if grep -qx 'order=FASTEST_FIRST' <<<"$out"; then pass "TaskProlog: keeps a CUDA_DEVICE_ORDER the task has"
  else fail "TaskProlog: keeps a CUDA_DEVICE_ORDER the task has" "$out"; fi
  # gpumap gone from PATH: the job still runs, no line.
  out=$(PATH=/usr/sbin:/usr/bin:/sbin:/bin timeout 60 srun -n 2 --gres=gpu:2 bash -c 'echo ran' 2>&1); local rc=$?
  if [ $rc = 0 ] && [ "$(grep -cx ran <<<"$out")" = 2 ] && ! grep -q '^gpumap:' <<<"$out"; then
    pass "TaskProlog: without gpumap in PATH the job still runs"
  else fail "TaskProlog: without gpumap in PATH the job still runs" "exit $rc"$'\n'"$out"; fi
  # gpumap that fails (a broken host file): the job still runs.
  out=$(GPUMAP_SIMULATE=$SLURM_DIR/missing.json timeout 60 srun -n 1 --gres=gpu:1 bash -c 'echo ran' 2>&1); rc=$?
  if [ $rc = 0 ] && grep -qx ran <<<"$out" && ! grep -q '^gpumap:' <<<"$out"; then pass "TaskProlog: a failing gpumap does not stop the job"
  else fail "TaskProlog: a failing gpumap does not stop the job" "exit $rc"$'\n'"$out"; fi
}

if [ "$(id -u)" != 0 ]; then
  echo "SKIP slurm: needs root (it starts slurmctld/slurmd/munged and makes device nodes with mknod); CI runs as root"
  exit 77
fi
if ! slurm_install; then echo "SKIP slurm: the Slurm packages are missing and cannot be installed here"; exit 77; fi
export PATH=$(dirname "$gpumap"):$PATH
for m in "${modes[@]}"; do run_mode "$m"; done
slurm_test_end "slurm tests"
