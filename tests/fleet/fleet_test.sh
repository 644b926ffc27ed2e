#!/usr/bin/env bash
# `gpumap fleet` as a person runs it: three `gpumap serve` on three simulated hosts, each in its
# own network namespace (ip netns, a veth pair to a bridge, as tests/slurm/multinode.sh), with real
# sleeping processes as their GPU processes (one Slurm job of four ranks split over two nodes, a
# torchrun-style pair sharing a GPU, a process outside its visible set) and, on the third node, a
# Kubernetes pod: a real process in a cgroup named as the kubelet names a pod's container, and a
# real gRPC server speaking the kubelet's pod-resources API (tests/kube/fake_kubelet.cc) that
# lists the pod, asked by that node's serve through gpumap-kubelet; a real Prometheus (Debian's)
# scraping them every second under a job name that is not "gpumap"; then:
#   - two more targets in the scrape job: one where nothing ever listens (it never comes up) and
#     Prometheus's own /metrics (scraped, none of gpumap's series): both DOWN nodes, never read,
#     and --fail-on warning fails for the one that never came up alone;
#   - fleet shows three nodes up, the job as one job of four ranks on two nodes with each rank's
#     cuda:N, the pod's process with its pod, namespace and container and its own cuda:N, the
#     findings grouped by cause (the pod's GPU outside its allocation among them); --node and a
#     hostile --node value; --processes with-findings against the full listing; --fail-on;
#   - one serve stopped: shown DOWN, and Prometheus's first failed scrape of it came within two
#     scrape intervals of the stop (Prometheus's own timestamps; the wait itself is for the event);
#   - Prometheus stopped: exit 1 naming the URL, at once; a server that never answers: exit 1
#     after --timeout, never a hang; a DNS server that never answers (a namespace whose
#     resolv.conf names a silent one): exit 1 after --timeout, not after the resolver's own limit;
#   - a second Prometheus with --web.config.file (TLS + basic auth): fleet with --http.config.file
#     (ca_file, basic_auth password_file) reads it; without credentials, or with another CA, exit 1.
# Everything is started and stopped by PID, and the namespaces, their /etc/netns folders, links,
# cgroups and folder are removed by the trap, also on failure.  Every wait is bounded and waits for
# an event, never a fixed time.
#
# usage: tests/fleet/fleet_test.sh GPUMAP_BINARY [FAKE_KUBELET]
# FAKE_KUBELET: tests/kube/fake_kubelet (built with GPUMAP_KUBERNETES, as gpumap-kubelet beside
# GPUMAP_BINARY); without it, or without a cgroup2 hierarchy, the pod is left out and said (SKIP).
# Prints PASS/FAIL lines; exit 0 all passed, 1 a failure, 77 it cannot run here (not root, no ip
# netns, a tool missing: ctest skips it).
set -uo pipefail
[ -n "${1:-}" ] || { echo "usage: $0 GPUMAP_BINARY [FAKE_KUBELET]" >&2; exit 2; }
gpumap=$(readlink -f "$1")
fake_kubelet=${2:+$(readlink -f "$2")}
for t in prometheus curl python3 openssl ip nsenter; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (scripts/deps.sh installs it)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }

failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; printf '%s\n' "${2:-}" | sed 's/^/      /'; failed=1; }
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds, at most SECONDS
  local until=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $until ] || return 1; sleep 0.2; done
}

dir=$(mktemp -d /tmp/gpumap-fleet.XXXXXX)
tag=fl$(tr -dc 'a-z0-9' </dev/urandom | head -c 5)
bridge=${tag}b
netns=()
pids=()
cg2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
cgtop=  # the pod's cgroups live below this test's own folder in cg2 (made only if there is a pod)
[ -d /etc/netns ] && etc_netns_made=0 || etc_netns_made=1  # ip netns exec's folder: removed if made here
cleanup() {
  local p ns i
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  for ns in "${netns[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  done
  for ((i = 1; i <= 3; i++)); do ip link del "${tag}v$i" 2>/dev/null; done
  for ns in "${netns[@]}"; do ip netns del "$ns" 2>/dev/null; rm -rf "/etc/netns/$ns"; done
  [ $etc_netns_made = 1 ] && rmdir /etc/netns 2>/dev/null
  ip link del "$bridge" 2>/dev/null
  if [ -n "$cgtop" ] && [ -d "$cgtop" ]; then  # every process in it was ours and is gone: folders only
    find "$cgtop" -name cgroup.procs -exec cat {} + 2>/dev/null | while read -r p; do echo "$p" >"$cg2/cgroup.procs"; done
    find "$cgtop" -depth -type d -exec rmdir {} + 2>/dev/null
  fi
  local left
  left=$( (ip netns list; ip -o link show; ls /etc/netns) 2>/dev/null | grep -o "${tag}[a-z0-9]*" | sort -u)
  [ -n "$cgtop" ] && [ -d "$cgtop" ] && left+=" $cgtop"
  rm -rf "$dir"
  [ -z "$left" ] || { echo "FAIL left behind: $left"; exit 1; }
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- the network: a bridge (.1, where Prometheus reaches the nodes) and three namespaces ---
routes=$(ip -4 route show table all 2>/dev/null)
k=
for c in $(shuf -i 1-254 -n 40); do grep -q "10\.234\.$c\." <<<"$routes" || { k=$c; break; }; done
[ -n "$k" ] || { echo "SKIP: no free 10.234.K.0/24"; exit 77; }
ip link add "$bridge" type bridge 2>/dev/null || { echo "SKIP: cannot make a bridge here"; exit 77; }
ip addr add "10.234.$k.1/24" dev "$bridge" && ip link set "$bridge" up || { fail "bridge address"; exit 1; }
declare -A addr=()
for i in 1 2 3; do
  ns=${tag}n$i
  ip netns add "$ns" || { fail "ip netns add $ns"; exit 1; }
  netns+=("$ns")
  ip link add "${tag}v$i" type veth peer name eth0 netns "$ns" &&
    ip link set "${tag}v$i" master "$bridge" up &&
    ip -n "$ns" addr add "10.234.$k.$((10 + i))/24" dev eth0 &&
    ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up || { fail "veth for $ns"; exit 1; }
  addr[$i]=10.234.$k.$((10 + i))
done

# --- the GPU processes: real sleeps with the environments of the job, the pair, the stray ---
sleeper() {  # sleeper VAR=VALUE...: a sleep with exactly that environment; its PID in $last
  env -i "$@" sleep 600 &
  last=$!
  pids+=("$last")
}
# Slurm job 4711: ranks 0 and 1 on node 1 (GPUs 0 and 1), ranks 2 and 3 on node 2 (GPUs 0 and 1),
# each node's two tasks with all four GPUs visible and LOCAL_RANK = SLURM_LOCALID: cuda:0 and cuda:1.
job_env() { echo "SLURM_JOB_ID=4711 SLURM_PROCID=$1 SLURM_LOCALID=$2 SLURM_STEP_ID=0 LOCAL_RANK=$2 RANK=$1 WORLD_SIZE=4"; }
sleeper $(job_env 0 0); r0=$last
sleeper $(job_env 1 1); r1=$last
sleeper $(job_env 2 0); r2=$last
sleeper $(job_env 3 1); r3=$last
# Node 2: two local ranks of one torchrun run on one GPU (ranks-share-gpu).
sleeper LOCAL_RANK=0 TORCHELASTIC_RUN_ID=t1; t0=$last
sleeper LOCAL_RANK=1 TORCHELASTIC_RUN_ID=t1; t1=$last
# Node 3: a process on GPU 0 that can only see GPU 1 (outside-visible-set, an error).
sleeper CUDA_VISIBLE_DEVICES=1; stray=$last
for p in $r0 $r1 $r2 $r3 $t0 $t1 $stray; do
  wait_for 10 grep -q sleep "/proc/$p/cmdline" || fail "sleep $p did not start"
done
uuid() { printf 'GPU-f1ee0000-0000-4000-8000-0000000%02d%03d' "$1" "$2"; }  # node, index

# Node 3 also runs a Kubernetes pod, ml/train-0, whose container "trainer" the kubelet gave the
# node's GPU 1 (NVIDIA_VISIBLE_DEVICES as the device plugin sets it): its process uses GPU 1, its
# cuda:0, and also GPU 0 around the device plugin (pod-gpu-outside-allocation).  The process sits
# in a cgroup named as the kubelet (systemd driver) and containerd name a container of a
# burstable pod, root-owned, below a folder of this test's own (as a kubelet inside kind nests
# them); the pod-resources server answers for the pod on a Unix socket that node's serve asks.
pod=0
pod_uid=7c1d5e2a-9b8f-4c3d-8e7f-6a5b4c3d2e1f
if [ -z "$fake_kubelet" ] || [ ! -x "$fake_kubelet" ]; then
  echo "SKIP the pod: no fake_kubelet given (a build without GPUMAP_KUBERNETES)"
elif [ ! -x "$(dirname "$gpumap")/gpumap-kubelet" ]; then
  echo "SKIP the pod: no gpumap-kubelet beside $gpumap"
elif [ -z "$cg2" ]; then
  echo "SKIP the pod: no cgroup2 hierarchy mounted"
else
  cgtop=$cg2/gpumap-test-$tag
  ctr=$(printf 'c0de%.0s' {1..16})  # the container's 64-hex-digit ID
  cgleaf=$cgtop/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${pod_uid//-/_}.slice/cri-containerd-$ctr.scope
  mkdir -p "$cgleaf" || { fail "mkdir $cgleaf"; exit 1; }
  sleeper HOSTNAME=train-0 NVIDIA_VISIBLE_DEVICES="$(uuid 3 1)"; podp=$last
  wait_for 10 grep -q sleep "/proc/$podp/cmdline" || fail "sleep $podp did not start"
  echo "$podp" >"$cgleaf/cgroup.procs"
  grep -q "kubepods-burstable-pod${pod_uid//-/_}.slice/cri-containerd-$ctr.scope" "/proc/$podp/cgroup" ||
    { fail "the pod's process is not in its cgroup" "$(cat "/proc/$podp/cgroup")"; exit 1; }
  mkdir -p "$dir/kubelet"
  cat >"$dir/kubelet/answers.json" <<JSON
{"socket": "$dir/kubelet/kubelet.sock",
 "pods": [{"name": "train-0", "namespace": "ml", "containers": [
   {"name": "trainer", "devices": [{"resource": "nvidia.com/gpu", "ids": ["$(uuid 3 1)"]}], "cdi_devices": []}]}],
 "allocatable": [{"resource": "nvidia.com/gpu", "ids": ["$(uuid 3 0)", "$(uuid 3 1)"]}]}
JSON
  "$fake_kubelet" "$dir/kubelet/kubelet.sock" "$dir/kubelet/answers.json" >"$dir/kubelet/out" 2>"$dir/kubelet/err" &
  pids+=("$!")
  wait_for 30 grep -q ready "$dir/kubelet/out" || { fail "fake_kubelet did not start" "$(cat "$dir/kubelet/err")"; exit 1; }
  pod=1
fi

host() {  # host NODE "GPU0_PROCS" "GPU1_PROCS": a simulated host of two H100s
  local n=$1 g procs gpus=
  for g in 0 1; do
    procs=$([ $g = 0 ] && echo "$2" || echo "$3")
    gpus+="${gpus:+,}{\"name\": \"NVIDIA H100 80GB HBM3\", \"uuid\": \"$(uuid "$n" $g)\", \"pci_bus_id\": \"00000000:1$g:00.0\",
      \"minor_number\": $g, \"memory_total_mib\": 81559, \"memory_used_mib\": 1024, \"utilization_gpu\": 50,
      \"multiprocessor_count\": 132, \"processes\": [$procs]}"
  done
  echo "{\"driver_version\": \"580.159.04\", \"cuda_driver_version\": 13000, \"gpus\": [$gpus]}"
}
p() { echo "{\"pid\": $1, \"used_memory_mib\": 512}"; }
host 1 "$(p $r0)" "$(p $r1)" >"$dir/host1.json"
host 2 "$(p $r2), $(p $t0), $(p $t1)" "$(p $r3)" >"$dir/host2.json"
if [ $pod = 1 ]; then host 3 "$(p $stray), $(p $podp)" "$(p $podp)" >"$dir/host3.json"
else host 3 "$(p $stray)" "" >"$dir/host3.json"; fi

# --- three gpumap serve, one per namespace, on the node's address ---
declare -A serve=()
for i in 1 2 3; do
  mkdir -p "$dir/n$i/cache" "$dir/n$i/locks"
  kube=()  # the node with the pod asks its kubelet's socket
  [ $i = 3 ] && [ $pod = 1 ] && kube=(GPUMAP_KUBELET_SOCKET="$dir/kubelet/kubelet.sock")
  nsenter --net="/run/netns/${tag}n$i" env GPUMAP_CACHE_DIR="$dir/n$i/cache" GPUMAP_LOCK_DIR="$dir/n$i/locks" GPUMAP_IN_CONTAINER=0 \
    "${kube[@]}" "$gpumap" serve --simulate "$dir/host$i.json" --listen "${addr[$i]}:9467" >"$dir/serve$i.out" 2>"$dir/serve$i.err" &
  serve[$i]=$!
  pids+=("$!")
done
for i in 1 2 3; do
  wait_for 60 grep -q 'listening on' "$dir/serve$i.out" || { fail "serve $i did not start" "$(cat "$dir/serve$i.err")"; exit 1; }
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pport=$(free_port)
never_port=$(free_port)  # a target of the scrape job where nothing ever listens: it never comes up
mkdir -p "$dir/prom"
cat >"$dir/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: gpu-nodes
    static_configs: [{targets: ["${addr[1]}:9467", "${addr[2]}:9467", "${addr[3]}:9467", "127.0.0.1:$never_port", "127.0.0.1:$pport"]}]
YML
prometheus --config.file="$dir/prom/prometheus.yml" --storage.tsdb.path="$dir/prom/data" \
  --web.listen-address="127.0.0.1:$pport" >"$dir/prom/log" 2>&1 &
prom=$!
pids+=("$prom")

# VictoriaMetrics (Debian's single node) scraping the same five targets with the same config, its
# -search.latencyOffset left at its default (30 s); nginx (Debian's) in front of both with its
# default buffers and a tenant check, as a Mimir/Cortex gateway: /prom/ and /vm/ answer only a
# request whose X-Scope-OrgID is gpumap.  Each on a port of its own and a folder in $dir, started
# and stopped by PID (nginx in the foreground with its own -p prefix, never the system's service).
engines=0
if command -v victoria-metrics >/dev/null && command -v nginx >/dev/null; then
  engines=1
  vport=$(free_port)
  nport=$(free_port)
  mkdir -p "$dir/vm" "$dir/nginx/logs"
  # Prometheus's scrape config less evaluation_interval (VictoriaMetrics' strict reader refuses it).
  sed 's/evaluation_interval: 1s, //' "$dir/prom/prometheus.yml" >"$dir/vm/scrape.yml"
  victoria-metrics -storageDataPath="$dir/vm/data" -httpListenAddr="127.0.0.1:$vport" \
    -promscrape.config="$dir/vm/scrape.yml" >"$dir/vm/log" 2>&1 &
  pids+=("$!")
  cat >"$dir/nginx/nginx.conf" <<NGINX
daemon off;
user root;  # (the workers write proxy temp files below \$dir, which is 0700)
worker_processes 1;
pid $dir/nginx/nginx.pid;
error_log $dir/nginx/logs/error.log;
events { worker_connections 256; }
http {
  access_log $dir/nginx/logs/access.log;
  client_body_temp_path $dir/nginx/body;
  proxy_temp_path $dir/nginx/proxy;
  fastcgi_temp_path $dir/nginx/fastcgi;
  uwsgi_temp_path $dir/nginx/uwsgi;
  scgi_temp_path $dir/nginx/scgi;
  server {
    listen 127.0.0.1:$nport;
    location /prom/ {
      if (\$http_x_scope_orgid != "gpumap") { return 401; }
      proxy_pass http://127.0.0.1:$pport/;
    }
    location /vm/ {
      if (\$http_x_scope_orgid != "gpumap") { return 401; }
      proxy_pass http://127.0.0.1:$vport/;
    }
  }
}
NGINX
  nginx -p "$dir/nginx" -e "$dir/nginx/logs/error.log" -c "$dir/nginx/nginx.conf" >"$dir/nginx/out" 2>&1 &
  pids+=("$!")
else
  echo "SKIP VictoriaMetrics and nginx: victoria-metrics or nginx is not installed (scripts/deps.sh installs them)"
fi
purl=http://127.0.0.1:$pport
value() {  # value PROMQL: the first sample's value, "" for none
  curl -sf --get "$purl/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
all_scraped() {  # the three serves and Prometheus's own /metrics up, the fifth target scraped (and down)
  [ "$(value 'count(count by (instance) (gpumap_process_info))')" = 3 ] && [ "$(value 'sum(up{job="gpu-nodes"})')" = 4 ] &&
    [ "$(value 'count(up{job="gpu-nodes"})')" = 5 ]
}
if wait_for 120 all_scraped; then pass "Prometheus scrapes the three nodes"
else fail "Prometheus did not scrape all three nodes" "$(tail -5 "$dir/prom/log")"; exit 1; fi

# --- the fleet ---
"$gpumap" fleet --prometheus "$purl" --json >"$dir/fleet.json" 2>"$dir/fleet.err"; rc=$?
[ $rc = 0 ] || fail "fleet --json exit $rc" "$(cat "$dir/fleet.err")"
check() {  # check NAME PYTHON_EXPR_ON_d: PASS when it is true
  if python3 -c "import json,sys; d=json.load(open('$2')); sys.exit(0 if ($3) else 1)" 2>"$dir/py.err"; then pass "$1"
  else fail "$1" "$(cat "$dir/py.err"; head -c 3000 "$2")"; fi
}
n1=${addr[1]} n2=${addr[2]} n3=${addr[3]}
check "the three serves up" "$dir/fleet.json" "[n['node'] for n in d['nodes'] if n['up']] == sorted(['$n1', '$n2', '$n3']) and all(n['down_reason'] is None for n in d['nodes'] if n['up'])"
check "the target that never came up and the one without gpumap's series: DOWN nodes, never read" "$dir/fleet.json" \
  "sorted((n['instance'], n['down_reason'], n['last_read_age_seconds'], n['gpus']) for n in d['nodes'] if not n['up']) == sorted([('127.0.0.1:$never_port', 'scrape_failed', None, []), ('127.0.0.1:$pport', 'no_gpumap_series', None, [])])"
nprocs=$((7 + 2 * pod))  # the pod's process on two GPUs is a row on each
check "each node's two GPUs with their processes" "$dir/fleet.json" \
  "[len(n['gpus']) for n in d['nodes']] == [2, 2, 2, 0, 0] and sum(len(g['processes']) for n in d['nodes'] for g in n['gpus']) == $nprocs"
check "job 4711 is one job of four ranks on two nodes" "$dir/fleet.json" \
  "[(j['slurm_job_id'], j['nodes'], [r['rank'] for r in j['ranks']]) for j in d['jobs']] == [('4711', sorted(['$n1', '$n2']), ['0', '1', '2', '3'])]"
check "each rank's own cuda:N and GPU" "$dir/fleet.json" \
  "[(r['node'], r['pid'], r['gpus'][0]['nvml_index'], r['gpus'][0]['cuda_ordinal']) for r in d['jobs'][0]['ranks']] == [('$n1', $r0, 0, 0), ('$n1', $r1, 1, 1), ('$n2', $r2, 0, 0), ('$n2', $r3, 1, 1)]"
check "findings grouped by cause" "$dir/fleet.json" \
  "(lambda c: c['outside-visible-set'][0] == 'error' and c['outside-visible-set'][1] == {$stray} and c['ranks-share-gpu'][0] == 'error' and {$t0, $t1} <= c['ranks-share-gpu'][1] and 'rank-on-wrong-gpu' not in c)({c['id']: (c['severity'], {p['pid'] for p in c['places']}) for c in d['findings_by_cause']})"
"$gpumap" fleet --prometheus "$purl" >"$dir/fleet.txt" 2>&1
grep -q "5 nodes (2 down), 6 GPUs, $nprocs GPU processes, 1 Slurm job" "$dir/fleet.txt" &&
  grep -q "127.0.0.1 (127.0.0.1:$never_port, job gpu-nodes): DOWN (the last scrape failed), never read" "$dir/fleet.txt" &&
  grep -q "127.0.0.1 (127.0.0.1:$pport, job gpu-nodes): DOWN (scraped, but it exports none of gpumap's series" "$dir/fleet.txt" && grep -q "job 4711: 4 ranks on 2 nodes ($n1, $n2)" "$dir/fleet.txt" &&
  pass "the text: five nodes (two down, never read), the job across two" || fail "the text" "$(cat "$dir/fleet.txt")"
if [ $pod = 1 ]; then
  # Its pod, namespace and container as the kubelet named them, on each GPU it uses: GPU 1, its
  # container's only GPU, is its cuda:0; GPU 0 is none of its cuda:N and is said for its pod.
  mine="[(g['nvml_index'], p['pod'], p['namespace'], p['container'], p['cuda_ordinal']) for n in d['nodes'] if n['node'] == '$n3' for g in n['gpus'] for p in g['processes'] if p['pid'] == $podp]"
  check "the pod's process: pod, namespace, container and its own cuda:N on each GPU" "$dir/fleet.json" \
    "$mine == [(0, 'train-0', 'ml', 'trainer', None), (1, 'train-0', 'ml', 'trainer', 0)]"
  check "no other process is in a pod" "$dir/fleet.json" \
    "{p['pid'] for n in d['nodes'] for g in n['gpus'] for p in g['processes'] if p['pod'] is not None} == {$podp}"
  check "the pod's GPU outside its allocation, a cause of its own" "$dir/fleet.json" \
    "[(c['severity'], [(p['node'], p['pid'], p['uuid']) for p in c['places']]) for c in d['findings_by_cause'] if c['id'] == 'pod-gpu-outside-allocation'] == [('warning', [('$n3', $podp, '$(uuid 3 0)')])]"
  grep -Eq "pid $podp +cuda:0 .*pod ml/train-0" "$dir/fleet.txt" &&
    grep -Eq "pid $podp +none .*pod ml/train-0 .*\[pod-gpu-outside-allocation\]" "$dir/fleet.txt" &&  # GPU 0 is none of its cuda:N
    grep -Eq "^  \[warning\] pod-gpu-outside-allocation: 1 place on 1 node" "$dir/fleet.txt" &&
    pass "the text: the pod's process with ml/train-0, its finding by cause" || fail "the text of the pod" "$(cat "$dir/fleet.txt")"
fi

GPUMAP_PROMETHEUS=$purl "$gpumap" fleet --node "$n2" --json >"$dir/node2.json" 2>&1
check "--node: one node, from \$GPUMAP_PROMETHEUS" "$dir/node2.json" "[n['node'] for n in d['nodes']] == ['$n2']"
if [ $pod = 1 ]; then
  "$gpumap" fleet --prometheus "$purl" --node "$n3" --json >"$dir/node3.json" 2>&1
  check "--node: the pod's node alone, its pod with it" "$dir/node3.json" \
    "[n['node'] for n in d['nodes']] == ['$n3'] and $mine == [(0, 'train-0', 'ml', 'trainer', None), (1, 'train-0', 'ml', 'trainer', 0)] and [c['id'] for c in d['findings_by_cause']] == ['outside-visible-set', 'pod-gpu-outside-allocation']"
fi
"$gpumap" fleet --prometheus "$purl" --node 'x"} or vector(1) or up{a=~".*' --json >"$dir/hostile.json" 2>"$dir/hostile.err"; rc=$?
[ $rc = 0 ] && check "a hostile --node value is one value that matches nothing" "$dir/hostile.json" "d['nodes'] == []" ||
  fail "hostile --node: exit $rc" "$(cat "$dir/hostile.err")"
# --processes with-findings through the real PromQL: each GPU's count and each job's GPU processes
# as the full listing has them, only the processes with a warning or error finding listed, the
# same causes (the counts and the join are Prometheus's, not a fake's).
"$gpumap" fleet --prometheus "$purl" --processes with-findings --json >"$dir/wf.json" 2>"$dir/wf.err"; rc=$?
[ $rc = 0 ] && check "--processes with-findings: the full listing's counts, only the processes with findings" "$dir/wf.json" \
  "(lambda f: d['processes_listed'] == 'with-findings' and f['processes_listed'] == 'all'
     and [[(g['uuid'], g['process_count']) for g in n['gpus']] for n in d['nodes']] == [[(g['uuid'], len({p['pid'] for p in g['processes']})) for g in n['gpus']] for n in f['nodes']]
     and [(j['slurm_job_id'], j['nodes'], j['gpu_processes']) for j in d['jobs']] == [(j['slurm_job_id'], j['nodes'], sum(len(r['gpus']) for r in j['ranks'])) for j in f['jobs']]
     and {(n['node'], p['pid']) for n in d['nodes'] for g in n['gpus'] for p in g['processes']} == {(x['node'], x['pid']) for c in f['findings_by_cause'] for x in c['places'] if x['pid'] is not None}
     and len({(n['node'], p['pid']) for n in d['nodes'] for g in n['gpus'] for p in g['processes']}) < len({(n['node'], p['pid']) for n in f['nodes'] for g in n['gpus'] for p in g['processes']})
     and d['findings_by_cause'] == f['findings_by_cause'])(json.load(open('$dir/fleet.json')))" ||
  fail "--processes with-findings: exit $rc" "$(cat "$dir/wf.err")"
"$gpumap" fleet --prometheus "$purl" --fail-on error >/dev/null 2>&1; rc=$?
[ $rc = 7 ] && pass "--fail-on error: exit 7 (outside-visible-set)" || fail "--fail-on error: exit $rc, want 7"
"$gpumap" fleet --prometheus "$purl" --node "$n1" --fail-on error >/dev/null 2>&1; rc=$?
[ $rc = 0 ] && pass "--fail-on error on a clean node: exit 0" || fail "--fail-on error --node $n1: exit $rc, want 0"
"$gpumap" fleet --prometheus "$purl" --node "127.0.0.1:$never_port" --fail-on warning --json >"$dir/never.json" 2>&1; rc=$?
[ $rc = 7 ] && check "--fail-on warning on the target that never came up: exit 7, that node alone, DOWN" "$dir/never.json" \
  "[(n['instance'], n['up'], n['down_reason']) for n in d['nodes']] == [('127.0.0.1:$never_port', False, 'scrape_failed')] and d['findings_by_cause'] == []" ||
  fail "--fail-on warning --node 127.0.0.1:$never_port: exit $rc, want 7" "$(cat "$dir/never.json")"

# --- the same fleet through VictoriaMetrics and nginx in front of either, with a tenant header ---
if [ $engines = 1 ]; then
  vurl=http://127.0.0.1:$vport
  vvalue() {  # vvalue PROMQL: VictoriaMetrics' first sample (nocache: its latency offset aside)
    curl -sf --get "$vurl/api/v1/query" --data-urlencode "query=$1" --data-urlencode nocache=1 |
      python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
  }
  vm_scraped() {
    [ "$(vvalue 'count(count by (instance) (gpumap_process_info))')" = 3 ] && [ "$(vvalue 'sum(up{job="gpu-nodes"})')" = 4 ] &&
      [ "$(vvalue 'count(up{job="gpu-nodes"})')" = 5 ]
  }
  nginx_up() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$nport/prom/-/ready")" = 401 ]; }
  if wait_for 120 vm_scraped && wait_for 30 nginx_up; then pass "VictoriaMetrics scrapes the five targets; nginx is up"
  else fail "VictoriaMetrics or nginx did not start" "$(tail -5 "$dir/vm/log"; cat "$dir/nginx/out" "$dir/nginx/logs/error.log" 2>/dev/null)"; fi
  printf 'gpumap\n' >"$dir/tenant"
  printf 'http_headers:\n  X-Scope-OrgID:\n    files: [tenant]\n' >"$dir/tenant.yml"
  same() {  # same FILE_A FILE_B: the two answers equal but for the instant and the ages
    python3 - "$1" "$2" <<'PY'
import json, sys
def norm(path):
    d = json.load(open(path))
    for n in d["nodes"]:
        n.pop("last_read_age_seconds")
    return {k: d[k] for k in ("nodes", "jobs", "findings_by_cause", "info_findings_not_listed", "processes_listed", "warnings", "partial")}
a, b = norm(sys.argv[1]), norm(sys.argv[2])
sys.exit(0 if a == b else print(json.dumps(a, sort_keys=True)[:1500], "\n---\n", json.dumps(b, sort_keys=True)[:1500]) or 1)
PY
  }
  "$gpumap" fleet --prometheus "$purl" --json >"$dir/e-prom.json" 2>"$dir/e.err"
  for e in "vm $vurl" "nginx-prom http://127.0.0.1:$nport/prom" "nginx-vm http://127.0.0.1:$nport/vm"; do
    name=${e%% *} url=${e#* }
    cfg=(); [[ $name == nginx-* ]] && cfg=(--http.config.file "$dir/tenant.yml")
    "$gpumap" fleet --prometheus "$url" "${cfg[@]}" --json >"$dir/e-$name.json" 2>"$dir/e-$name.err"; rc=$? out=
    if [ $rc = 0 ] && out=$(same "$dir/e-prom.json" "$dir/e-$name.json"); then pass "$name: the same answer as Prometheus's"
    else fail "$name: exit $rc, not Prometheus's answer" "$(cat "$dir/e-$name.err"; echo "$out")"; fi
  done
  # The ages through VictoriaMetrics are its last scrape's (1 s), not 30 s behind: nocache=1 keeps
  # its -search.latencyOffset from moving the instant back.
  check "VictoriaMetrics: each node up read within 10 s (its latency offset is 30 s)" "$dir/e-vm.json" \
    "all(n['last_read_age_seconds'] < 10 for n in d['nodes'] if n['up']) and sum(n['up'] for n in d['nodes']) == 3"
  out=$("$gpumap" fleet --prometheus "http://127.0.0.1:$nport/vm" 2>&1); rc=$?
  [ $rc = 1 ] && [[ $out == *"HTTP 401"* ]] && pass "nginx without the tenant header: exit 1, HTTP 401" || fail "no tenant: exit $rc" "$out"
  # 300 fully qualified --node values: about 12 kB of PromQL, past nginx's 8 kB header buffers in
  # a GET's URL (414); in a POST's body, the answer.
  long=(); for ((i = 0; i < 300; i++)); do long+=(--node "gpu-node-$i.rack-$((i / 32)).cluster.example.org"); done
  lq="up{instance=~\"$(printf 'gpu-node-%d.cluster.example.org|' $(seq 0 299))\"}"
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'X-Scope-OrgID: gpumap' --get "http://127.0.0.1:$nport/prom/api/v1/query" --data-urlencode "query=$lq")
  [ "$code" = 414 ] || [ "$code" = 400 ] && pass "nginx refuses that query in a GET's URL (HTTP $code)" || fail "a 12 kB GET through nginx: HTTP $code"
  for name in prom vm; do
    "$gpumap" fleet --prometheus "http://127.0.0.1:$nport/$name" --http.config.file "$dir/tenant.yml" "${long[@]}" --node "$n1" --json \
      >"$dir/long-$name.json" 2>"$dir/long.err"; rc=$?
    [ $rc = 0 ] && check "nginx-$name: 301 --node values in a POST, node $n1 answered" "$dir/long-$name.json" "[n['node'] for n in d['nodes']] == ['$n1']" ||
      fail "nginx-$name: 301 --node values: exit $rc" "$(cat "$dir/long.err")"
  done
  grep -q '"POST /prom/api/v1/query HTTP/1.1" 200' "$dir/nginx/logs/access.log" && ! grep -q '"GET /vm/api/v1/query' "$dir/nginx/logs/access.log" &&
    pass "nginx's log: gpumap's queries are POSTs" || fail "nginx's log" "$(tail -5 "$dir/nginx/logs/access.log")"
fi

# --- gpumap top --prometheus as a person sees it (tmux): the three nodes, the second expanded ---
# --- with its ranks' own cuda:N, q quits with exit 0.  (One block: the tmux server's PID is in ---
# --- pids, so the trap ends it too.)                                                            ---
if command -v tmux >/dev/null; then
  tsock="$dir/tmux.sock"
  printf '%s\n' "#!/bin/sh" "\"$gpumap\" top --prometheus \"$purl\" --interval 1 2>\"$dir/top.err\"; echo \$? >\"$dir/top.rc\"" >"$dir/top.sh"
  tmux -S "$tsock" -f /dev/null new-session -d -x 100 -y 30 sh "$dir/top.sh"
  pids+=("$(tmux -S "$tsock" display-message -p '#{pid}')")
  pane() { tmux -S "$tsock" capture-pane -p 2>/dev/null; }
  pane_has() { local p; p=$(pane); for want in "$@"; do [[ $p == *"$want"* ]] || return 1; done; }
  if wait_for 60 pane_has "$n1" "$n2" "$n3" "5 nodes (2 down)" "DOWN never"; then pass "top --prometheus: the three nodes and the two DOWN targets"
  else fail "top --prometheus: the three nodes" "$(pane; cat "$dir/top.err")"; fi
  second=$(printf '%s\n' "$n1" "$n2" "$n3" 127.0.0.1 | sort | sed -n 2p)  # the node table's order
  [ "$second" = "$n2" ] || fail "top --prometheus: $n2 is not the second node ($second)"
  tmux -S "$tsock" send-keys Down Enter
  if wait_for 30 pane_has "pid $r2  cuda:0  " "pid $r3  cuda:1  " "job 4711 rank 3"; then
    pass "top --prometheus: Enter expands $n2: its ranks with their own cuda:N"
  else fail "top --prometheus: $n2 expanded" "$(pane)"; fi
  tmux -S "$tsock" send-keys q
  if wait_for 30 test -s "$dir/top.rc"; then
    [ "$(cat "$dir/top.rc")" = 0 ] && pass "top --prometheus: q quits, exit 0" || fail "top --prometheus: exit $(cat "$dir/top.rc")" "$(cat "$dir/top.err")"
  else fail "top --prometheus did not quit on q" "$(pane)"; fi
  tmux -S "$tsock" kill-server 2>/dev/null
else
  echo "SKIP top --prometheus in a terminal: tmux is not installed"
fi

# --- a shard that fails: a partial answer ---
# A second Prometheus that holds nothing itself and reads two stores by remote read: the first
# Prometheus, and a port where nothing listens (a store down).  Prometheus answers 200 with the
# first store's series and a warning naming the one that failed (its partial answer, as Thanos's):
# fleet says PARTIAL, JSON marks it, and --fail-on fails even for a node with no finding.
gport=$(free_port) dead_store=$(free_port)
mkdir -p "$dir/global"
cat >"$dir/global/prometheus.yml" <<YML
global: {scrape_interval: 1s}
remote_read:
  - {url: "$purl/api/v1/read", read_recent: true, name: site-a}
  - {url: "http://127.0.0.1:$dead_store/api/v1/read", read_recent: true, name: site-b, remote_timeout: 2s}
YML
prometheus --config.file="$dir/global/prometheus.yml" --storage.tsdb.path="$dir/global/data" \
  --web.listen-address="127.0.0.1:$gport" >"$dir/global/log" 2>&1 &
pids+=("$!")
gurl=http://127.0.0.1:$gport
wait_for 60 curl -sf "$gurl/-/ready" || fail "the second Prometheus did not start" "$(tail -5 "$dir/global/log")"
"$gpumap" fleet --prometheus "$gurl" --json >"$dir/partial.json" 2>"$dir/partial.err"; rc=$?
[ $rc = 0 ] && check "a store down: the answer partial, the warning naming it, the other store's nodes shown" "$dir/partial.json" \
  "d['partial'] and 'up' in d['partial_queries'] and any('127.0.0.1:$dead_store' in w for w in d['warnings']) and sorted(n['node'] for n in d['nodes'] if n['up']) == sorted(['$n1', '$n2', '$n3'])" ||
  fail "fleet through a Prometheus with a store down: exit $rc" "$(cat "$dir/partial.err")"
"$gpumap" fleet --prometheus "$gurl" --node "$n1" >"$dir/partial.txt" 2>&1
grep -q "^PARTIAL: the answer lacks part of the fleet" "$dir/partial.txt" && grep -q "127.0.0.1:$dead_store" "$dir/partial.txt" &&
  pass "the text says PARTIAL and names the store that failed" || fail "the text of a partial answer" "$(cat "$dir/partial.txt")"
"$gpumap" fleet --prometheus "$gurl" --node "$n1" --fail-on error >/dev/null 2>&1; rc=$?
[ $rc = 7 ] && pass "a partial answer: --fail-on error exit 7 for a clean node (the same node whole: 0)" ||
  fail "a partial answer: --fail-on error --node $n1: exit $rc, want 7"

# --- one serve stopped: DOWN, Prometheus's first failed scrape within two intervals ---
stopped_at=$(date +%s.%N)
kill "${serve[3]}"; wait "${serve[3]}" 2>/dev/null
# Through nginx and VictoriaMetrics, the stopped node is DOWN within seconds, not after its 30 s
# latency offset (gpumap asks with nocache=1).
if [ $engines = 1 ]; then
  vm_down() {
    "$gpumap" fleet --prometheus "http://127.0.0.1:$nport/vm" --http.config.file "$dir/tenant.yml" --node "$n3" --json >"$dir/vmdown.json" 2>/dev/null &&
      python3 -c "import json; d=json.load(open('$dir/vmdown.json')); exit(0 if d['nodes'] and not d['nodes'][0]['up'] else 1)"
  }
  if wait_for 60 vm_down; then
    late=$(python3 -c "import json; print(round(json.load(open('$dir/vmdown.json'))['evaluated_at'] - $stopped_at, 1))")
    python3 -c "exit(0 if $late < 20 else 1)" && pass "VictoriaMetrics via nginx: the stopped node DOWN ${late} s after the stop (its latency offset: 30 s)" ||
      fail "VictoriaMetrics: the stopped node DOWN only ${late} s after the stop (the 30 s latency offset not accounted for)"
    "$gpumap" fleet --prometheus "http://127.0.0.1:$nport/vm" --http.config.file "$dir/tenant.yml" --fail-on warning >/dev/null 2>&1; rc=$?
    [ $rc = 7 ] && pass "VictoriaMetrics via nginx: --fail-on warning exit 7" || fail "VictoriaMetrics --fail-on warning: exit $rc, want 7"
  else
    fail "VictoriaMetrics never showed the stopped node down" "$(cat "$dir/vmdown.json")"
  fi
fi

shown_down() {
  "$gpumap" fleet --prometheus "$purl" --node "$n3" --json >"$dir/down.json" 2>/dev/null &&
    python3 -c "import json; d=json.load(open('$dir/down.json')); exit(0 if d['nodes'] and not d['nodes'][0]['up'] else 1)"
}
if wait_for 60 shown_down; then
  check "the stopped node is DOWN with its last read's age" "$dir/down.json" "d['nodes'][0]['last_read_age_seconds'] is not None"
  first_down=$(curl -sf --get "$purl/api/v1/query" --data-urlencode "query=up{instance=\"$n3:9467\"}[60s]" |
    python3 -c 'import json,sys; v=json.load(sys.stdin)["data"]["result"][0]["values"]; print(min(float(t) for t, x in v if x == "0"))')
  late=$(python3 -c "print(round($first_down - $stopped_at, 2))")
  python3 -c "exit(0 if $late <= 2.0 else 1)" && pass "its first failed scrape came ${late} s after the stop (two intervals: 2 s)" ||
    fail "its first failed scrape came ${late} s after the stop, more than two 1 s intervals"
  "$gpumap" fleet --prometheus "$purl" >"$dir/down.txt" 2>&1
  grep -q "5 nodes (3 down)" "$dir/down.txt" && grep -q "DOWN (the last scrape failed)" "$dir/down.txt" &&
    pass "the text says it is down" || fail "the text of a node down" "$(cat "$dir/down.txt")"
else
  fail "the stopped node was never shown down" "$(cat "$dir/down.json")"
fi

# --- Prometheus stopped; a server that never answers ---
kill "$prom"; wait "$prom" 2>/dev/null
out=$(timeout 60 "$gpumap" fleet --prometheus "$purl" 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"Prometheus at $purl refused the connection"* ]] &&
  pass "Prometheus stopped: exit 1 naming the URL" || fail "Prometheus stopped: exit $rc" "$out"
silent_port=$(free_port)
python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$silent_port)); s.listen(8); print('ready', flush=True); time.sleep(600)" >"$dir/silent.out" &
pids+=("$!")
wait_for 10 grep -q ready "$dir/silent.out"
out=$(timeout 60 "$gpumap" fleet --prometheus "http://127.0.0.1:$silent_port" --timeout 1 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"did not answer within 1 s"* ]] &&
  pass "a server that never answers: exit 1 after --timeout" || fail "a silent server: exit $rc (124: a hang)" "$out"

# A DNS server that never answers: --timeout bounds the name lookup too.  A namespace of its own
# whose resolv.conf (ip netns exec puts /etc/netns/NS/resolv.conf over /etc/resolv.conf) names a
# DNS server on that namespace's loopback that takes every query and answers none, with one try
# of 30 s: the resolver alone would give up after 30 s; fleet must say so after its 1 s.
dns=${tag}d
ip netns add "$dns" && netns+=("$dns") && ip -n "$dns" link set lo up || { fail "ip netns add $dns"; exit 1; }
mkdir -p "/etc/netns/$dns" && printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:1\n' >"/etc/netns/$dns/resolv.conf"
cat >"$dir/silent_dns.py" <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
print("ready", flush=True)
while True:
    s.recvfrom(4096)
    print("query", flush=True)
PY
ip netns exec "$dns" python3 "$dir/silent_dns.py" >"$dir/dns.out" 2>&1 &
pids+=("$!")
wait_for 10 grep -q ready "$dir/dns.out" || fail "the silent DNS server did not start" "$(cat "$dir/dns.out")"
asked_at=$SECONDS
out=$(ip netns exec "$dns" timeout 60 "$gpumap" fleet --prometheus http://no-such.example:9090 --timeout 1 2>&1); rc=$?
took=$((SECONDS - asked_at))
[ $rc = 1 ] && [[ $out == *"Prometheus at http://no-such.example:9090 did not answer within 1 s: the name lookup of no-such.example did not finish in time"* ]] &&
  [[ $out == *"/etc/resolv.conf"* ]] && grep -q query "$dir/dns.out" && [ $took -lt 20 ] &&
  pass "a DNS server that never answers: exit 1 after --timeout (${took} s, the resolver's own limit 30 s)" ||
  fail "a silent DNS server: exit $rc after ${took} s (124: a hang; the resolver's limit is 30 s)" "$out
$(head -3 "$dir/dns.out")"

# --- TLS and basic auth to Prometheus (its --web.config.file), read with --http.config.file ---
(
  cd "$dir" &&
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=fleet-test-ca -keyout ca.key -out ca.crt &&
    openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr &&
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext &&
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt &&
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca -keyout other.key -out other.crt
) >"$dir/openssl.log" 2>&1 || { fail "openssl" "$(tail "$dir/openssl.log")"; exit 1; }
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("fleet pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
printf 'tls_server_config: {cert_file: %s/server.crt, key_file: %s/server.key}\nbasic_auth_users: {fleet: "%s"}\n' "$dir" "$dir" "$hash" >"$dir/web.yml"
tport=$(free_port)
prometheus --config.file="$dir/prom/prometheus.yml" --storage.tsdb.path="$dir/prom/data" --web.config.file="$dir/web.yml" \
  --web.listen-address="127.0.0.1:$tport" >"$dir/prom/tls.log" 2>&1 &
pids+=("$!")
turl=https://127.0.0.1:$tport
printf 'fleet pw\n' >"$dir/pw"
chmod 600 "$dir/pw"
printf 'basic_auth: {username: fleet, password_file: pw}\ntls_config: {ca_file: ca.crt}\n' >"$dir/http.yml"
# Ready, and its own scrapes of the two nodes still serving have come in (the first ones after a
# start can fail under load, and its `up` is what fleet reads): the wait is for that event.
tls_up() {
  curl -sf --cacert "$dir/ca.crt" -u 'fleet:fleet pw' "$turl/-/ready" >/dev/null &&
    [ "$(curl -sf --cacert "$dir/ca.crt" -u 'fleet:fleet pw' --get "$turl/api/v1/query" --data-urlencode 'query=sum(up{job="gpu-nodes"})' |
      python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")')" = 2 ]
}
wait_for 60 tls_up || fail "Prometheus with TLS did not start and scrape the two nodes serving" "$(tail -5 "$dir/prom/tls.log")"
out=$("$gpumap" fleet --prometheus "$turl" --http.config.file "$dir/http.yml" 2>&1); rc=$?
[ $rc = 0 ] && [[ $out == *"job 4711: 4 ranks on 2 nodes"* ]] &&
  pass "TLS + basic auth: fleet reads it with --http.config.file" || fail "TLS + basic auth: exit $rc" "$out"
printf 'tls_config: {ca_file: ca.crt}\n' >"$dir/nopw.yml"
out=$("$gpumap" fleet --prometheus "$turl" --http.config.file "$dir/nopw.yml" 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"HTTP 401"* ]] && pass "no credentials: exit 1, HTTP 401" || fail "no credentials: exit $rc" "$out"
printf 'basic_auth: {username: fleet, password_file: pw}\ntls_config: {ca_file: other.crt}\n' >"$dir/otherca.yml"
out=$("$gpumap" fleet --prometheus "$turl" --http.config.file "$dir/otherca.yml" 2>&1); rc=$?
[ $rc = 1 ] && [[ $out == *"certificate"* ]] && pass "another CA: exit 1, the certificate named" || fail "another CA: exit $rc" "$out"

[ $failed = 0 ] && echo "fleet_test: all passed" || echo "fleet_test: FAILED"
exit $failed
