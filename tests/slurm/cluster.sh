# A throw-away one-node Slurm (munged, slurmctld, slurmd) on loopback, for the tests.
# Sourced by tests/slurm/*.sh.  Everything lives in one temporary folder: config, state,
# logs, the munge socket and key, and four fake GPU device nodes (character devices
# 195:N, never under /dev).  Daemons run in the foreground in the background, are
# remembered by PID and stopped by PID; the folder is removed.  Facts behind each setting:
# /work/shared/reference/slurm-observed.md, summarised in docs/launch.md.
#
#   slurm_install           apt-get the Debian packages when missing (root only); 1 if unavailable
#   slurm_start MODE        MODE: plain (task/none) or cgroup (task/cgroup + ConstrainDevices=yes)
#   slurm_reconfigure LINE  append LINE to slurm.conf and reload it
#   slurm_stop              stop every daemon started here, remove the folder
# After slurm_start: $SLURM_CONF, $SLURM_DIR, $SLURM_DEV (the device-node folder), $SLURM_NODE.
# tests/slurm/multinode.sh builds a cluster of several nodes from the same pieces.

SLURM_PIDS=()
SLURM_NODES=()
SLURM_DIR=

# The test scripts' frame.  slurm_test_args SCRIPT "$@": GPUMAP_BINARY [MODE...] into $gpumap and
# modes (default: plain cgroup).  pass/fail print one line (with the seconds since the start) and
# count it.  slurm_test_end NAME: exit 1 when a check failed, 77 when none could run, else 0.
slurm_test_args() {
  local script=$1
  shift
  [ $# -ge 1 ] || { echo "usage: $script GPUMAP_BINARY [plain] [cgroup]" >&2; exit 2; }
  gpumap=$(readlink -f "$1")
  shift
  modes=("$@")
  [ ${#modes[@]} -gt 0 ] || modes=(plain cgroup)
  failed=0 ran=0 mode= start=$SECONDS
}
pass() { echo "PASS [$mode] $1 (at $((SECONDS - start)) s)"; ran=$((ran + 1)); }
fail() { echo "FAIL [$mode] $1 (at $((SECONDS - start)) s)"; printf '%s\n' "$2" | sed 's/^/      /'; failed=1; ran=$((ran + 1)); }
slurm_test_end() {
  [ "$failed" = 0 ] || { echo "$1: FAILED"; exit 1; }
  [ "$ran" -gt 0 ] || { echo "$1: nothing could run"; exit 77; }
  echo "$1: all $ran passed"
}

slurm_log() { echo "slurm-cluster: $*" >&2; }

slurm_install() {
  local need=()
  command -v munged >/dev/null || need+=(munge)
  command -v slurmctld >/dev/null || need+=(slurmctld)
  command -v slurmd >/dev/null || need+=(slurmd)
  command -v srun >/dev/null || need+=(slurm-client)
  [ ${#need[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    slurm_log "missing ${need[*]} and cannot install them (needs root and apt-get: apt-get install ${need[*]})"
    return 1
  fi
  # Their install scripts would start the services: a policy-rc.d that says no stops that.
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e $policy ]; then printf '#!/bin/sh\nexit 101\n' >$policy && chmod +x $policy && made_policy=1; fi
  # ctest runs tests/slurm's two tests at once: the second apt-get waits for the first's lock
  # (then finds the packages there) instead of failing.
  local wait=(-o DPkg::Lock::Timeout=300)
  DEBIAN_FRONTEND=noninteractive apt-get install "${wait[@]}" -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
    { apt-get update "${wait[@]}" -q >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install "${wait[@]}" -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1; }
  local rc=$?
  [ $made_policy = 1 ] && rm -f $policy
  [ $rc = 0 ] || slurm_log "apt-get install ${need[*]} failed"
  return $rc
}

# Whether the cgroup configuration can run here: Slurm 22.05's cgroup/v1 plugin needs the v1
# devices controller mounted writable.  Else prints the SKIP line and returns 1.
slurm_has_device_cgroups() {
  if [ ! -w /sys/fs/cgroup/devices ] || ! grep -q ' /sys/fs/cgroup/devices cgroup ' /proc/mounts; then
    echo "SKIP [cgroup] configuration: needs the cgroup v1 devices controller mounted writable at /sys/fs/cgroup/devices (Slurm 22.05's cgroup/v1 plugin); this machine has none"
    return 1
  fi
}

# A TCP port nobody listens on, from a range away from Slurm's defaults.
slurm_free_port() {
  local p
  for p in $(shuf -i 20000-40000 -n 50); do
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo $p; return 0; fi
  done
  return 1
}

# slurm_make_dir PREFIX: the cluster's folder (/tmp/PREFIX.XXXXXX) with state, spool, log and
# munge folders; sets SLURM_DIR.
slurm_make_dir() {
  SLURM_DIR=$(mktemp -d "/tmp/$1.XXXXXX") || return 1
  chmod 755 "$SLURM_DIR"
  mkdir -p "$SLURM_DIR"/{state,spool,log,munge}
}

# munged with its own key, socket and files, run as the munge user; sets SLURM_MUNGE_SOCKET.
slurm_start_munged() {
  chown munge: "$SLURM_DIR/munge" && chmod 711 "$SLURM_DIR/munge"
  setpriv --reuid=munge --regid=munge --init-groups mungekey -c -k "$SLURM_DIR/munge/munge.key" >/dev/null 2>&1 ||
    { cp /etc/munge/munge.key "$SLURM_DIR/munge/munge.key" && chown munge: "$SLURM_DIR/munge/munge.key"; }
  SLURM_MUNGE_SOCKET=$SLURM_DIR/munge/munge.socket
  setpriv --reuid=munge --regid=munge --init-groups munged -F --force --socket="$SLURM_MUNGE_SOCKET" \
    --key-file="$SLURM_DIR/munge/munge.key" --pid-file="$SLURM_DIR/munge/munged.pid" \
    --seed-file="$SLURM_DIR/munge/munged.seed" --log-file="$SLURM_DIR/munge/munged.log" >/dev/null 2>&1 &
  SLURM_PIDS+=($!)
}

# slurm_write_conf MODE CTLD_ADDR: slurm.conf (everything but the node and partition lines, which
# the caller appends) and cgroup.conf; sets SLURM_CONF.  Spool, pid and log files carry the node
# name (%n), so several slurmd can share the folder.
slurm_write_conf() {
  local mode=$1 addr=$2 ctl_port slurmd_port task proctrack
  ctl_port=$(slurm_free_port) && slurmd_port=$(slurm_free_port) || return 1
  if [ "$mode" = cgroup ]; then task=task/cgroup proctrack=proctrack/cgroup; else task=task/none proctrack=proctrack/linuxproc; fi
  export SLURM_CONF=$SLURM_DIR/slurm.conf
  cat >"$SLURM_CONF" <<CONF
ClusterName=gpumaptest
SlurmctldHost=$(hostname -s)($addr)
SlurmctldPort=$ctl_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SLURM_MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.%n.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ProctrackType=$proctrack
TaskPlugin=$task
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
KillWait=2
InactiveLimit=0
MinJobAge=2
CONF
  echo "CgroupPlugin=cgroup/v1
CgroupAutomount=no
ConstrainDevices=yes" >"$SLURM_DIR/cgroup.conf"
}

# slurm_wait_idle N: until sinfo shows N idle nodes (30 s), every daemon still running.
slurm_wait_idle() {
  local t pid
  for t in $(seq 1 150); do
    if [ "$(sinfo -h -N -o %t 2>/dev/null | grep -cx idle)" -ge "$1" ]; then return 0; fi
    for pid in "${SLURM_PIDS[@]}"; do
      kill -0 "$pid" 2>/dev/null || { slurm_log "a daemon (pid $pid) exited during start-up"; slurm_dump_logs; return 1; }
    done
    sleep 0.2
  done
  slurm_log "$1 node(s) did not become idle in 30 s"
  slurm_dump_logs
  return 1
}

slurm_start() {
  local mode=$1
  slurm_make_dir gpumap-slurm || return 1
  # A node name of its own: slurmd's cgroup folders are slurm_<node>, so two test clusters
  # (or a real Slurm on this machine) never share them.
  local suffix=${SLURM_DIR##*.}
  SLURM_NODE=gpumap${suffix,,}
  SLURM_NODES=("$SLURM_NODE")
  SLURM_DEV=$SLURM_DIR/dev
  mkdir -p "$SLURM_DEV"
  local i
  for i in 0 1 2 3; do mknod -m 666 "$SLURM_DEV/nvidia$i" c 195 $i || return 1; done
  slurm_start_munged
  slurm_write_conf "$mode" 127.0.0.1 || return 1
  cat >>"$SLURM_CONF" <<CONF
NodeName=$SLURM_NODE NodeAddr=127.0.0.1 CPUs=8 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  echo "AutoDetect=off
Name=gpu File=$SLURM_DEV/nvidia[0-3]" >"$SLURM_DIR/gres.conf"
  slurmctld -D -i -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmctld.out" 2>&1 &
  SLURM_PIDS+=($!)
  slurmd -D -N "$SLURM_NODE" -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmd.out" 2>&1 &
  SLURM_PIDS+=($!)
  slurm_wait_idle 1
}

slurm_dump_logs() {
  local f
  for f in "$SLURM_DIR"/log/* "$SLURM_DIR"/munge/munged.log; do
    [ -s "$f" ] && { echo "--- $f" >&2; tail -15 "$f" >&2; }
  done
}

slurm_reconfigure() {
  echo "$1" >>"$SLURM_CONF"
  scontrol reconfigure >/dev/null
}

# slurm_remove_cgroups NODE...: the empty cgroup folders slurmd leaves under slurm_<node> in
# each controller.
slurm_remove_cgroups() {
  local d n
  for n in "$@"; do
    for d in /sys/fs/cgroup/*/slurm_"$n"; do
      [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
  done
}

slurm_stop() {
  local pid i
  # Jobs first: a step still running when slurmd goes keeps its slurmstepd alive for ever
  # (seen on a loaded machine).  Cancel them, give them a moment, then stop the daemons.
  if [ -n "${SLURM_CONF:-}" ] && [ ${#SLURM_PIDS[@]} -gt 0 ]; then
    scancel --full "--user=$(id -un)" 2>/dev/null
    for _ in $(seq 1 30); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
    pid=${SLURM_PIDS[$i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  SLURM_PIDS=()
  # Any slurmstepd of this cluster that outlived its slurmd (its environment names our slurm.conf).
  if [ -n "$SLURM_DIR" ]; then
    local p
    for p in /proc/[0-9]*; do
      local comm=
      read -r comm 2>/dev/null <"$p/comm"  # a builtin: no process per /proc entry
      [ "$comm" = slurmstepd ] || continue
      # (the braces: a step that ended since the read must not print "No such process")
      { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_DIR/slurm.conf" && kill -KILL "${p#/proc/}" 2>/dev/null
    done
  fi
  slurm_remove_cgroups "${SLURM_NODES[@]}"
  SLURM_NODES=()
  [ -n "$SLURM_DIR" ] && rm -rf "$SLURM_DIR"
  SLURM_DIR=
  unset SLURM_CONF
}
