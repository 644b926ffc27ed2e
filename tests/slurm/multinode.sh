# A throw-away Slurm of several nodes on one machine, for the tests: one munged and one slurmctld
# in this network namespace (the "login node"), and one slurmd per node, each in a network
# namespace of its own (ip netns; a veth pair to a bridge) and a mount namespace of its own.
# Sourced after tests/slurm/cluster.sh, whose pieces it uses (munged, slurm.conf, stopping by PID).
#
# Addresses: 10.233.K.0/24, K chosen so that no route of this machine already covers it; the
# bridge has .1 (slurmctld, srun and scontrol reach the nodes through it), node i has .(10+i).
# Nothing else is ever addressed.  Namespaces and links are named gm<tag>..., <tag> the
# folder's random suffix, so a second cluster (another test run) never meets this one.
#
# Each node has its own folder $SLURM_DIR/nodes/<node> (four fake device nodes dev/nvidia0-3,
# character devices 195:N; the test puts the node's simulated host file there), which its slurmd
# and every process it starts see at the same path, $SLURM_NODE_DIR (a bind mount in the node's
# mount namespace): like a real cluster, where /dev/nvidia0 and a host's files are per machine at
# one path.  gres.conf names $SLURM_NODE_DIR/dev/nvidia[0-3] once for all nodes.
#
#   mn_start MODE N        MODE plain|cgroup (as slurm_start); N nodes (3 or more)
#   mn_stop_slurmd NODE    stop that node's slurmd (by PID): the node stops answering
#   mn_stop                stop everything, remove namespaces, links and the folder
#   mn_leftovers [all]     print what is left of this cluster (all: of any gpumap cluster whose
#                          folder is gone, i.e. of a run that died); prints nothing when clean
# After mn_start: $SLURM_CONF, $SLURM_DIR, $SLURM_NODE_DIR, SLURM_NODES=(names), MN_ADDR[node].

MN_TAG=
MN_DIR=
MN_BRIDGE=
MN_NETNS=()
declare -A MN_ADDR=() MN_SLURMD=()

# mn_subnet: a K in 10.233.K.0/24 that no route here covers.
mn_subnet() {
  local k routes
  routes=$(ip -4 route show table all 2>/dev/null)
  for k in $(shuf -i 1-254 -n 40); do
    grep -q "10\.233\.$k\." <<<"$routes" || { echo "$k"; return 0; }
  done
  return 1
}

mn_start() {
  local mode=$1 count=$2 i k node ns
  slurm_make_dir gpumap-mn || return 1
  local suffix=${SLURM_DIR##*.}
  MN_TAG=gm${suffix,,} MN_DIR=$SLURM_DIR
  SLURM_NODE_DIR=$SLURM_DIR/node
  mkdir -p "$SLURM_NODE_DIR"
  k=$(mn_subnet) || { slurm_log "no free 10.233.K.0/24"; return 1; }
  MN_BRIDGE=${MN_TAG}b
  ip link add "$MN_BRIDGE" type bridge || { slurm_log "ip link add $MN_BRIDGE type bridge failed"; return 1; }
  ip addr add "10.233.$k.1/24" dev "$MN_BRIDGE" && ip link set "$MN_BRIDGE" up || return 1
  SLURM_NODES=()
  for ((i = 1; i <= count; i++)); do
    node=${MN_TAG}n$i ns=${MN_TAG}n$i
    SLURM_NODES+=("$node")
    ip netns add "$ns" || { slurm_log "ip netns add $ns failed"; return 1; }
    MN_NETNS+=("$ns")
    ip link add "${MN_TAG}v$i" type veth peer name eth0 netns "$ns" || { slurm_log "veth for $ns failed"; return 1; }
    ip link set "${MN_TAG}v$i" master "$MN_BRIDGE" up &&
      ip -n "$ns" addr add "10.233.$k.$((10 + i))/24" dev eth0 &&
      ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up || return 1
    MN_ADDR[$node]=10.233.$k.$((10 + i))
    mkdir -p "$SLURM_DIR/nodes/$node/dev"
    local g
    for g in 0 1 2 3; do mknod -m 666 "$SLURM_DIR/nodes/$node/dev/nvidia$g" c 195 $g || return 1; done
  done
  slurm_start_munged
  slurm_write_conf "$mode" "10.233.$k.1" || return 1
  for node in "${SLURM_NODES[@]}"; do
    echo "NodeName=$node NodeAddr=${MN_ADDR[$node]} CPUs=8 Gres=gpu:4 State=UNKNOWN" >>"$SLURM_CONF"
  done
  echo "PartitionName=debug Nodes=$(IFS=,; echo "${SLURM_NODES[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO" >>"$SLURM_CONF"
  echo "AutoDetect=off
Name=gpu File=$SLURM_NODE_DIR/dev/nvidia[0-3]" >"$SLURM_DIR/gres.conf"
  slurmctld -D -i -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmctld.out" 2>&1 &
  SLURM_PIDS+=($!)
  # nsenter enters only the network namespace (`ip netns exec` would also remount /sys, and so
  # hide the cgroup controllers task/cgroup needs); unshare gives the node a private mount
  # namespace for its bind mount.  Each step execs the next: $! is slurmd's PID.
  for node in "${SLURM_NODES[@]}"; do
    nsenter --net="/run/netns/$node" unshare --mount --propagation private -- \
      sh -c 'mount --bind "$1" "$2" && exec slurmd -D -N "$3" -f "$4"' sh \
      "$SLURM_DIR/nodes/$node" "$SLURM_NODE_DIR" "$node" "$SLURM_CONF" >"$SLURM_DIR/log/slurmd.$node.out" 2>&1 &
    SLURM_PIDS+=($!)
    MN_SLURMD[$node]=$!
  done
  slurm_wait_idle "$count"
}

mn_stop_slurmd() {
  local pid=${MN_SLURMD[$1]}
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

mn_stop() {
  local nodes=("${SLURM_NODES[@]}")
  slurm_stop
  # Whatever still runs in a node's namespace is this cluster's: a task whose slurmstepd was
  # killed above (its slurmd had been stopped, so scancel could not reach it) lives on, and
  # keeps the namespace, its veth and its cgroup folders.  Stopped by PID, as `ip netns pids`
  # lists them; then their cgroup folders go.
  local ns pid i left
  for ns in "${MN_NETNS[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
  for _ in $(seq 1 50); do
    left=
    for ns in "${MN_NETNS[@]}"; do left+=$(ip netns pids "$ns" 2>/dev/null); done
    [ -z "$left" ] && break
    sleep 0.1
  done
  slurm_remove_cgroups "${nodes[@]}"
  for ((i = 1; i <= ${#MN_NETNS[@]}; i++)); do ip link del "${MN_TAG}v$i" 2>/dev/null; done
  for ns in "${MN_NETNS[@]}"; do ip netns del "$ns" 2>/dev/null; done
  MN_NETNS=()
  [ -n "$MN_BRIDGE" ] && ip link del "$MN_BRIDGE" 2>/dev/null
  MN_BRIDGE=
  MN_SLURMD=()
  MN_ADDR=()
}

# Names (namespaces, links, folders, processes) left behind.  Without `all`: of this cluster
# (after mn_stop, nothing may remain).  With `all`: of any gpumap test cluster whose folder is
# gone, that is of a run that died without cleaning up (a live run's folder exists).
mn_leftovers() {
  local tags=() t
  if [ "${1:-}" = all ]; then
    mapfile -t tags < <({ ip netns list 2>/dev/null | awk '{print $1}'; ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//'
      ls -d /sys/fs/cgroup/*/slurm_gm* 2>/dev/null | sed 's|.*/slurm_||'; } |
      sed -n 's/^\(gm[a-z0-9]\{6\}\)[bvn][0-9]*$/\1/p' | sort -u)
  elif [ -n "$MN_TAG" ]; then
    tags=("$MN_TAG")
  fi
  for t in "${tags[@]}"; do
    if [ "${1:-}" = all ] && compgen -G "/tmp/gpumap-mn.*" >/dev/null &&
       ls -d /tmp/gpumap-mn.* | sed 's/.*\.//' | tr 'A-Z' 'a-z' | grep -qx "${t#gm}"; then continue; fi
    ip netns list 2>/dev/null | awk '{print $1}' | grep "^${t}n[0-9]*$" | sed 's/^/network namespace /'
    ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^${t}[bv][0-9]*$" | sed 's/^/link /'
    ls -d /sys/fs/cgroup/*/slurm_"${t}"n* 2>/dev/null | sed 's/^/cgroup folder /'
    local p comm
    for p in /proc/[0-9]*; do
      comm=
      read -r comm 2>/dev/null <"$p/comm"  # a builtin: no process per /proc entry
      case "$comm" in slurmd | slurmctld | slurmstepd | munged) ;; *) continue ;; esac
      { tr '\0' ' ' <"$p/cmdline"; echo; tr '\0' '\n' <"$p/environ"; } 2>/dev/null |
        grep -qi "gpumap-mn\.${t#gm}\|${t}n[0-9]" && echo "process ${p#/proc/} ($comm)"
    done
  done
  if [ "${1:-}" != all ] && [ -n "$MN_DIR" ] && [ -e "$MN_DIR" ]; then echo "folder $MN_DIR"; fi
  local pid
  for pid in "${SLURM_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && echo "process $pid (started by this run)"; done
}
