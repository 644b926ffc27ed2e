#!/usr/bin/env bash
# `gpumap job` across the nodes of a real Slurm (Debian's 22.05): three slurmd, each in its own
# network and mount namespace (tests/slurm/multinode.sh), one slurmctld and one munged, in both
# configurations (plain: task/none; cgroup: task/cgroup + ConstrainDevices=yes).  Each node has
# its own simulated host (four H200s whose UUIDs name the node, so a wrong join shows) at the same
# path, and its own fake device nodes.  The ranks are real processes of real Slurm steps; each
# node's host file lists their PIDs on the GPUs the test says they use.
#
# usage: tests/slurm/multinode_test.sh GPUMAP_BINARY [plain] [cgroup]
# Prints PASS/FAIL/SKIP lines.  Exit 0: all ran passed (a configuration this machine cannot run is
# a SKIP line, never a pass); 1: a failure; 77: it cannot run here at all (ctest: skipped).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cluster.sh"
source "$here/multinode.sh"
slurm_test_args "$0" "$@"
# A failed check, a signal or an error anywhere: the cluster goes, and what is left is named.
cleanup() {
  [ -n "$MN_TAG" ] || return 0
  local t0=$SECONDS
  mn_stop
  echo "      [$mode] the cluster stopped in $((SECONDS - t0)) s"
  local left
  left=$(mn_leftovers)
  [ -z "$left" ] || { echo "FAIL [$mode] left behind after the cluster stopped:"; sed 's/^/      /' <<<"$left"; failed=1; }
  MN_TAG= MN_DIR=
}
trap 'cleanup' EXIT
trap 'exit 1' INT TERM

uuid() { printf 'GPU-6e0d0000-0000-4000-8000-0000000%02d%03d' "$1" "$2"; }  # node number, minor

# write_hosts "NODE MINOR PID MIB"...: each node's host file, the listed processes on its GPUs.
# $FAULT_NODE's file also gets the fault $FAULT.
write_hosts() {
  local specs=("$@") i n g spec gpus procs f_node f_minor f_pid f_mib faults
  for ((i = 1; i <= ${#SLURM_NODES[@]}; i++)); do
    n=${SLURM_NODES[$((i - 1))]} gpus=
    for g in 0 1 2 3; do
      procs=
      for spec in "${specs[@]}"; do
        read -r f_node f_minor f_pid f_mib <<<"$spec"
        [ "$f_node" = "$n" ] && [ "$f_minor" = "$g" ] && procs+="${procs:+,}{\"pid\": $f_pid, \"used_memory_mib\": $f_mib}"
      done
      gpus+="${gpus:+,}{\"name\": \"NVIDIA H200\", \"uuid\": \"$(uuid "$i" "$g")\", \"pci_bus_id\": \"00000000:1$g:00.0\",
        \"minor_number\": $g, \"memory_total_mib\": 143771, \"processes\": [$procs]}"
    done
    faults=
    [ "${FAULT_NODE:-}" = "$n" ] && faults=", \"faults\": [$FAULT]"
    echo "{\"dev_dir\": \"$SLURM_NODE_DIR/dev\", \"gpus\": [$gpus]$faults}" >"$SLURM_DIR/nodes/$n/host.json.new"
    mv "$SLURM_DIR/nodes/$n/host.json.new" "$SLURM_DIR/nodes/$n/host.json"
  done
}
node_number() { local i; for ((i = 0; i < ${#SLURM_NODES[@]}; i++)); do [ "${SLURM_NODES[$i]}" = "$1" ] && echo $((i + 1)); done; }

# The stand-in rank: records what Slurm gave it, then sleeps (the PID the host files list).
# Which device nodes it may open is how the device cgroup shows: EPERM for one it may not.
write_rank() {
  cat >"$SLURM_DIR/rank.sh" <<'RANK'
#!/bin/bash
allowed=
for i in 0 1 2 3; do
  err=$( (exec 3<"$SLURM_NODE_DIR/dev/nvidia$i") 2>&1 )
  case "$err" in *"not permitted"* | *"Permission denied"*) ;; *) allowed+="${allowed:+,}$i" ;; esac
done
f=$1/$SLURM_JOB_ID.$SLURM_PROCID
echo "$$ $SLURMD_NODENAME $SLURM_PROCID $SLURM_LOCALID ${CUDA_VISIBLE_DEVICES:--} $allowed" >"$f.tmp" && mv "$f.tmp" "$f"
exec sleep 300
RANK
  chmod +x "$SLURM_DIR/rank.sh"
}

# start_job NAME SRUN_ARGS...: 4 ranks in the background; JOB[NAME] is the job id once all 4 have
# reported.  RANKS[job.procid] = "pid node procid localid cvd allowed".
declare -A JOB=() RANKS=()
start_job() {
  local name=$1 f j
  shift
  mkdir -p "$SLURM_DIR/ranks"
  srun "$@" "$SLURM_DIR/rank.sh" "$SLURM_DIR/ranks" >"$SLURM_DIR/log/$name.out" 2>&1 &
  local pid=$! t
  for t in $(seq 1 100); do
    j=$(squeue -h -o '%i %j' 2>/dev/null | awk -v n="$name" '$2 == n {print $1}')
    [ -n "$j" ] && [ "$(ls "$SLURM_DIR/ranks" | grep -c "^$j\.[0-3]$")" = 4 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  [ -n "$j" ] && [ "$(ls "$SLURM_DIR/ranks" | grep -c "^$j\.[0-3]$")" = 4 ] || { cat "$SLURM_DIR/log/$name.out"; return 1; }
  JOB[$name]=$j
  for f in "$SLURM_DIR/ranks/$j".*; do RANKS[${f##*/}]=$(cat "$f"); done
}
rank_field() { local a=(${RANKS[$1]}); echo "${a[$2]}"; }  # 0 pid 1 node 2 procid 3 localid 4 cvd 5 allowed
# The GPU (minor) rank $1 (job.procid) calls cuda:$2: its CUDA_VISIBLE_DEVICES entries count
# among the device nodes it may open (all four without a device cgroup, so they are Slurm's ids).
phys() {
  local cvd allowed
  IFS=, read -ra cvd <<<"$(rank_field "$1" 4)"
  IFS=, read -ra allowed <<<"$(rank_field "$1" 5)"
  echo "${allowed[${cvd[$2]}]}"
}
# The cuda:N a rank works on when it is right: cuda:$SLURM_LOCALID when it sees several GPUs.
own_cuda() { local c; c=$(rank_field "$1" 4); [[ $c == *,* ]] && rank_field "$1" 3 || echo 0; }
own_gpu() { phys "$1" "$(own_cuda "$1")"; }

# Every rank of every job on its own GPU, 1000 MiB.
right_layout() {
  local k
  for k in "${!RANKS[@]}"; do echo "$(rank_field "$k" 1) $(own_gpu "$k") $(rank_field "$k" 0) 1000"; done
}

# job_rows JSON: "rank node uuid cuda:N" per process row, sorted.
job_rows() {
  python3 -c '
import json, sys
d = json.load(sys.stdin)
for p in d["processes"]:
    c = p["cuda_ordinal"]
    print(p["rank"], p["node"], p["uuid"], "cuda:%s" % c if c is not None else "-")
' | sort
}
want_rows() {  # want_rows JOB: the rows a right report of JOB gives
  local k
  for k in "${!RANKS[@]}"; do
    [ "${k%%.*}" = "$1" ] || continue
    local n; n=$(rank_field "$k" 1)
    echo "$(rank_field "$k" 2) $n $(uuid "$(node_number "$n")" "$(own_gpu "$k")") cuda:$(own_cuda "$k")"
  done | sort
}
json_field() { python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[sys.argv[1]]))' "$1"; }

run_mode() {
  mode=$1
  if [ "$mode" = cgroup ]; then
    slurm_has_device_cgroups || return
  fi
  local left
  left=$(mn_leftovers all)
  if [ -n "$left" ]; then fail "nothing left by an earlier run" "$left"; else pass "nothing left by an earlier run"; fi
  local t0=$SECONDS
  if ! mn_start "$mode" 3; then fail "3-node slurm starts" "see the logs above"; mn_stop; return; fi
  pass "3 nodes idle in $((SECONDS - t0)) s: ${SLURM_NODES[*]}"
  local N1=${SLURM_NODES[0]} N2=${SLURM_NODES[1]} N3=${SLURM_NODES[2]} out rc
  export GPUMAP_SIMULATE=$SLURM_NODE_DIR/host.json GPUMAP_LOCK_DIR=$SLURM_DIR/leases GPUMAP_CACHE_DIR=$SLURM_DIR/cache SLURM_NODE_DIR
  write_hosts
  write_rank
  # The login node (this namespace, where gpumap job runs) has no GPUs, at the same path.
  echo '{"gpus": []}' >"$SLURM_NODE_DIR/host.json"

  # Each node: its own network namespace, and its own GPUs at the one path.
  out=$(timeout 60 srun -N3 --gres=gpu:1 -l bash -c 'echo "$SLURMD_NODENAME $(readlink /proc/self/ns/net) $(gpumap list --json | python3 -c "import json,sys; print(json.load(sys.stdin)[\"gpus\"][0][\"uuid\"])")"' 2>&1)
  local mine nets
  mine=$(readlink /proc/self/ns/net)
  nets=$(awk '{print $3}' <<<"$out" | sort -u | grep -vx "$mine" | wc -l)
  if [ "$nets" = 3 ] && grep -q "$N1 .* $(uuid 1 0)\$" <<<"$out" && grep -q "$N2 .* $(uuid 2 0)\$" <<<"$out" &&
     grep -q "$N3 .* $(uuid 3 0)\$" <<<"$out"; then
    pass "3 network namespaces, each node sees its own simulated GPUs"
  else fail "3 network namespaces, each node sees its own simulated GPUs" "$out"; fi

  # Job A: 2 nodes x 2 ranks, one GPU per task (the issue's layout).  Job B beside it on nodes 2
  # and 3: 2 ranks per node sharing 2 GPUs (cuda:$SLURM_LOCALID); on node 2 it gets GPUs 2,3.
  RANKS=() JOB=()
  if ! start_job A -N2 --ntasks-per-node=2 --gpus-per-task=1 -w "$N1,$N2" -J A; then fail "job A starts" ""; return; fi
  if ! start_job B -N2 --ntasks-per-node=2 --gres=gpu:2 -w "$N2,$N3" -J B; then fail "job B starts" ""; return; fi
  local A=${JOB[A]} B=${JOB[B]} k
  for k in $(printf '%s\n' "${!RANKS[@]}" | sort -V); do echo "      [$mode] rank $k: ${RANKS[$k]}  (pid node procid localid CUDA_VISIBLE_DEVICES may-open)"; done

  local lay
  mapfile -t lay < <(right_layout)
  write_hosts "${lay[@]}"
  local j
  for j in A B; do
    out=$(timeout 60 gpumap job "${JOB[$j]}" 2>&1); rc=$?
    echo "$out" >"$SLURM_DIR/log/job$j-right.txt"
    sed "s/^/      [$mode] job $j: /" <<<"$out"
    local json got want
    json=$(timeout 60 gpumap job "${JOB[$j]}" --json 2>&1)
    got=$(job_rows <<<"$json" 2>&1) want=$(want_rows "${JOB[$j]}")
    local clean=0
    [ $rc = 0 ] && ! grep -qE '\[(warning|error)\]' <<<"$out" && [ "$(json_field missing_nodes <<<"$json")" = "[]" ] && clean=1
    if [ $clean = 1 ] && [ "$got" = "$want" ]; then
      pass "job $j (${JOB[$j]}): rank -> node -> GPU -> its cuda:N, no finding"
    elif [ $clean = 1 ] && [ "$mode" = cgroup ] && [ "$j" = A ] && [ "$(cut -d' ' -f1-3 <<<"$got")" = "$(cut -d' ' -f1-3 <<<"$want")" ] &&
         [ "$(sed 's/ -$/ cuda:0/' <<<"$got")" = "$want" ]; then
      # Every rank, node and GPU right; but a rank whose per-task device cgroup holds a GPU
      # other than the job's first on its node has CUDA_VISIBLE_DEVICES=0 (Slurm 22.05), and
      # `ps` predicts another process's view from its environment only, over the GPUs the ps
      # step sees: its cuda:0 is then taken for the node's first GPU, and the column shows "-".
      pass "job A (${JOB[$j]}): rank -> node -> GPU, no finding"
      echo "KNOWN [$mode] job A: the CUDA column is \"-\" (want cuda:0) for ranks in a per-task device cgroup (--gpus-per-task=1 under ConstrainDevices=yes); not a pass: gpumap ps would have to read each process's device cgroup"
      sed 's/^/      /' <<<"$got"
    else fail "job $j (${JOB[$j]}): rank -> node -> GPU -> its cuda:N, no finding" "exit $rc"$'\n'"want:"$'\n'"$want"$'\n'"got:"$'\n'"$got"$'\n'"$out"; fi
  done

  # Broken A: on node 1 both ranks on rank 0's GPU (rank 1's sits idle); without device cgroups
  # also rank 3 (node 2) on GPU 3, which job A was not given (with them it cannot reach it).
  local r0=$A.0 r1=$A.1 r3=$A.3 n1idle
  n1idle=$(own_gpu "$r1")
  mapfile -t lay < <(right_layout | grep -v " $(rank_field "$r1" 0) " | grep -v " $(rank_field "$r3" 0) ")
  lay+=("$N1 $(own_gpu "$r0") $(rank_field "$r1" 0) 1000")
  [ "$mode" = plain ] && lay+=("$N2 3 $(rank_field "$r3" 0) 1000") || lay+=("$N2 $(own_gpu "$r3") $(rank_field "$r3" 0) 1000")
  write_hosts "${lay[@]}"
  out=$(timeout 60 gpumap job "$A" 2>&1); rc=$?
  echo "$out" >"$SLURM_DIR/log/jobA-broken.txt"
  sed "s/^/      [$mode] jobA-broken (exit $rc): /" <<<"$out"
  local ok=1
  # (nvidia-smi's indices under a device cgroup count only the job's GPUs: the UUIDs tell.)
  grep -q "job-ranks-share-gpu: ranks 0, 1 of job $A all run on nvidia-smi GPU [0-9] ($(uuid 1 "$(own_gpu "$r0")")) on $N1" <<<"$out" || ok=0
  grep -q "job-gpu-idle: nvidia-smi GPU [0-9] ($(uuid 1 "$n1idle")) on $N1 is allocated" <<<"$out" || ok=0
  if [ "$mode" = plain ]; then  # rank 3 left its GPU idle too
    grep -q "job-gpu-outside-allocation: rank(s) 3 of job $A run on nvidia-smi GPU 3 ($(uuid 2 3)) on $N2" <<<"$out" &&
      grep -q "job-gpu-idle: nvidia-smi GPU [0-9] ($(uuid 2 "$(own_gpu "$r3")")) on $N2 is allocated" <<<"$out" &&
      [ "$(grep -c 'job-gpu-idle' <<<"$out")" = 2 ] && [ $rc = 7 ] || ok=0
  else
    ! grep -q 'job-gpu-outside-allocation' <<<"$out" && [ "$(grep -c 'job-gpu-idle' <<<"$out")" = 1 ] && [ $rc = 0 ] || ok=0
  fi
  if [ $ok = 1 ]; then pass "job A broken: shared GPU, idle GPU$([ "$mode" = plain ] && echo ', GPU outside the allocation (exit 7)')"
  else fail "job A broken: shared GPU, idle GPU$([ "$mode" = plain ] && echo ', GPU outside the allocation (exit 7)')" "exit $rc"$'\n'"$out"; fi

  # Broken B: on node 2 local rank 1 works on local rank 0's GPU (its cuda:0, not cuda:1), and
  # local rank 0 also holds memory on rank 1's GPU (a context made before set_device).
  local b0 b1
  for k in "${!RANKS[@]}"; do
    [ "${k%%.*}" = "$B" ] && [ "$(rank_field "$k" 1)" = "$N2" ] || continue
    [ "$(rank_field "$k" 3)" = 0 ] && b0=$k || b1=$k
  done
  mapfile -t lay < <(right_layout | grep -v " $(rank_field "$b1" 0) ")
  lay+=("$N2 $(own_gpu "$b0") $(rank_field "$b1" 0) 2000" "$N2 $(own_gpu "$b1") $(rank_field "$b0" 0) 300")
  write_hosts "${lay[@]}"
  out=$(timeout 60 gpumap job "$B" 2>&1); rc=$?
  echo "$out" >"$SLURM_DIR/log/jobB-broken.txt"
  sed "s/^/      [$mode] jobB-broken (exit $rc): /" <<<"$out"
  local rb1 rb0
  rb1=$(rank_field "$b1" 2) rb0=$(rank_field "$b0" 2)
  if [ $rc = 7 ] && grep -q "rank-on-wrong-gpu: rank $rb1 (pid $(rank_field "$b1" 0)) on $N2 has SLURM_LOCALID=1 and sees 2 GPUs, but works only on nvidia-smi GPU [0-9] ($(uuid 2 "$(own_gpu "$b0")")) on $N2, its cuda:0" <<<"$out" &&
     grep -q "stray-context: rank $rb0 (pid $(rank_field "$b0" 0)) on $N2 has SLURM_LOCALID=0 and works on its own GPU" <<<"$out" &&
     [ "$(grep -cE 'rank-on-wrong-gpu|stray-context' <<<"$out")" = 2 ]; then
    pass "job B broken: rank-on-wrong-gpu and stray-context on node 2 (exit 7)"
  else fail "job B broken: rank-on-wrong-gpu and stray-context on node 2 (exit 7)" "exit $rc"$'\n'"$out"; fi

  # A node that does not answer.  First node 3's ps hangs in nvmlInit (a hung driver): job B's
  # report names it after --timeout and shows node 2.  Then node 2's slurmd stops: job A's
  # report names node 2 and shows node 1.  Partial, exit 9, not a failure.
  mapfile -t lay < <(right_layout)
  FAULT_NODE=$N3 FAULT='{"call": "nvmlInit", "delay_ms": 8000}' write_hosts "${lay[@]}"
  out=$(timeout 60 gpumap job "$B" --timeout 3 2>&1); rc=$?
  echo "$out" >"$SLURM_DIR/log/jobB-hung.txt"
  sed "s/^/      [$mode] jobB-hung (exit $rc): /" <<<"$out"
  if [ $rc = 9 ] && grep -q "^$N2 " <<<"$out" && ! grep -q "^$N3 " <<<"$out" && grep -q "no report from node $N3" <<<"$out"; then
    pass "job B, node 3's ps hangs: partial report naming node 3 (exit 9)"
  else fail "job B, node 3's ps hangs: partial report naming node 3 (exit 9)" "exit $rc"$'\n'"$out"; fi
  write_hosts "${lay[@]}"
  mn_stop_slurmd "$N2"
  out=$(timeout 60 gpumap job "$A" 2>&1); rc=$?
  echo "$out" >"$SLURM_DIR/log/jobA-slurmd-down.txt"
  sed "s/^/      [$mode] jobA-slurmd-down (exit $rc): /" <<<"$out"
  if [ $rc = 9 ] && [ "$(grep -c "^$N1 " <<<"$out")" = 2 ] && grep -q "no report from node $N2: it did not answer (is its slurmd up?.*failed on node $N2" <<<"$out"; then
    pass "job A, node 2's slurmd stopped: partial report naming node 2 (exit 9)"
  else fail "job A, node 2's slurmd stopped: partial report naming node 2 (exit 9)" "exit $rc"$'\n'"$out"; fi
  [ -n "${KEEP_OUTPUT:-}" ] && cp "$SLURM_DIR"/log/job*.txt "$KEEP_OUTPUT"/ 2>/dev/null

  cleanup
  left=$(mn_leftovers all)
  if [ -n "$left" ]; then fail "nothing left after the run" "$left"; else pass "nothing left after the run (namespaces, links, daemons, folder)"; fi
}

if [ "$(id -u)" != 0 ]; then
  echo "SKIP slurm-multinode: needs root (network namespaces, slurmctld/slurmd/munged, mknod); CI runs as root"
  exit 77
fi
for tool in ip nsenter unshare python3; do
  command -v $tool >/dev/null || { echo "SKIP slurm-multinode: \`$tool\` is missing (scripts/deps.sh installs iproute2)"; exit 77; }
done
if ! slurm_install; then echo "SKIP slurm-multinode: the Slurm packages are missing and cannot be installed here"; exit 77; fi
# Can this machine make a network namespace and a bridge at all?  (A container without
# CAP_NET_ADMIN/CAP_SYS_ADMIN cannot.)
probe=gmprobe$$
if ! err=$(ip netns add "$probe" 2>&1); then echo "SKIP slurm-multinode: \`ip netns add\` fails here: $err"; exit 77; fi
ip netns del "$probe"
if ! err=$(ip link add "${probe}b" type bridge 2>&1); then echo "SKIP slurm-multinode: \`ip link add type bridge\` fails here: $err"; exit 77; fi
ip link del "${probe}b"
export PATH=$(dirname "$gpumap"):$PATH
for m in "${modes[@]}"; do run_mode "$m"; done
mode=end
slurm_test_end "slurm multinode tests"
