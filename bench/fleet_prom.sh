# Sourced by bench/fleet_scale.sh and tests/fleet/fleet_scale_selfcheck.sh: a real `gpumap metrics`
# exposition to generate a fleet from, a backfilled Prometheus started and stopped by PID, and its
# instant-query API.  The caller owns the array `pids` (every process started here is appended to it
# and must be killed on exit) and sets `fleet_work` (a temporary folder it removes on exit).

fleet_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# fleet_template GPUMAP OUT: the exposition of a simulated eight-GPU host (hosts/dgx8.json) with 64
# real sleeping processes in eight torchrun jobs of eight ranks (one a GPU, all GPUs visible, a Slurm
# job id each), one rank moved to the wrong GPU (so every label of gpumap_finding shows), into OUT.
fleet_template() {
  local gpumap=$1 out=$2 i p until
  local -a mine=()
  for ((i = 0; i < 64; i++)); do
    env -i PATH=/bin LOCAL_RANK=$((i % 8)) RANK=$((i % 8)) WORLD_SIZE=8 LOCAL_WORLD_SIZE=8 \
      SLURM_JOB_ID=$((7000 + i / 8)) TORCHELASTIC_RUN_ID="run$((7000 + i / 8))" /bin/sleep 600 &
    pids+=($!)
    mine+=($!)
  done
  for p in "${mine[@]}"; do  # each has exec'd sleep with its environment (bounded wait)
    until=$((SECONDS + 10))
    until grep -q SLURM_JOB_ID "/proc/$p/environ" 2>/dev/null; do
      [ $SECONDS -lt $until ] || { echo "fleet_template: process $p never started" >&2; return 1; }
      sleep 0.05
    done
  done
  python3 - "$fleet_src/hosts/dgx8.json" "$fleet_work/template-host.json" "${mine[@]}" <<'PY'
import json, sys
src, out, pids = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
h = json.load(open(src))
for g in h["gpus"]:
    g["processes"] = []
for i, p in enumerate(pids):
    gpu = i % 8
    if i == 8 + 3:
        gpu = 5  # the second job's local rank 3 on GPU 5: rank-on-wrong-gpu, ranks-share-gpu
    h["gpus"][gpu]["processes"].append({"pid": p, "used_memory_mib": 512})
json.dump(h, open(out, "w"))
PY
  GPUMAP_CACHE_DIR=$fleet_work/cache GPUMAP_LOCK_DIR=$fleet_work/locks GPUMAP_IN_CONTAINER=0 \
    "$gpumap" metrics --simulate "$fleet_work/template-host.json" >"$out" || return 1
  for p in "${mine[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${mine[@]}"; do wait "$p" 2>/dev/null || true; done
  local -a rest=()  # reaped: no longer the caller's to kill (their PIDs may be reused)
  for p in "${pids[@]}"; do [[ " ${mine[*]} " == *" $p "* ]] || rest+=("$p"); done
  pids=(${rest[@]+"${rest[@]}"})
}

# fleet_template_key TEMPLATE: a hash of what the generator takes from the exposition (HELP, TYPE,
# each family's label keys) and of the generator itself: a cached backfill is reused only for both.
fleet_template_key() {
  { grep '^# ' "$1"; grep -v '^#' "$1" | sed -E 's/="([^"\\]|\\.)*"/=/g; s/ [^ ]+$//' | sort -u
    cat "$fleet_src/bench/fleet_backfill.py"; } | sha1sum | cut -c1-12
}

# prom_start DATA_DIR: Prometheus (Debian's /usr/bin/prometheus) on DATA_DIR, no scrape targets, on a
# free loopback port; returns when /-/ready answers 200 (polled; at most 600 s).  Sets prom_pid,
# prom_url, prom_ready_s.
prom_start() {
  local data=$1 port t0 until
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  printf 'global:\n  scrape_interval: 60s\n' >"$fleet_work/prometheus.yml"
  t0=$(date +%s.%N)
  prometheus --config.file="$fleet_work/prometheus.yml" --storage.tsdb.path="$data" \
    --storage.tsdb.retention.time=36500d --web.listen-address="127.0.0.1:$port" \
    --log.level=warn >"$fleet_work/prometheus.log" 2>&1 &
  prom_pid=$!
  pids+=($prom_pid)
  prom_url="http://127.0.0.1:$port"
  until=$((SECONDS + 600))
  until curl -sf -o /dev/null "$prom_url/-/ready"; do
    if ! kill -0 "$prom_pid" 2>/dev/null; then
      echo "prometheus exited before it was ready:" >&2; tail -5 "$fleet_work/prometheus.log" >&2; return 1
    fi
    [ $SECONDS -lt $until ] || { echo "prometheus not ready in 600 s" >&2; return 1; }
    sleep 0.1
  done
  prom_ready_s=$(python3 -c "import time; print('%.2f' % (time.time() - $t0))")
}

# prom_stop: SIGTERM, then SIGKILL if it has not exited within 30 s.
prom_stop() {
  local until=$((SECONDS + 30))
  [ -n "${prom_pid:-}" ] || return 0
  kill "$prom_pid" 2>/dev/null || true
  while kill -0 "$prom_pid" 2>/dev/null; do
    [ $SECONDS -lt $until ] || { kill -9 "$prom_pid" 2>/dev/null || true; break; }
    sleep 0.1
  done
  wait "$prom_pid" 2>/dev/null || true
  prom_pid=
}

# vm_start DATA_DIR: VictoriaMetrics' single node (Debian's /usr/bin/victoria-metrics) on DATA_DIR,
# no scraping, on a free loopback port, its -search.latencyOffset at the default; returns when
# /health answers.  Sets vm_pid, vm_url.
vm_start() {
  local data=$1 port until
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  victoria-metrics -storageDataPath="$data" -retentionPeriod=100y -httpListenAddr="127.0.0.1:$port" \
    -loggerLevel=ERROR >"$fleet_work/vm.log" 2>&1 &
  vm_pid=$!
  pids+=($vm_pid)
  vm_url="http://127.0.0.1:$port"
  until=$((SECONDS + 120))
  until curl -sf -o /dev/null "$vm_url/health"; do
    kill -0 "$vm_pid" 2>/dev/null || { echo "victoria-metrics exited:" >&2; tail -5 "$fleet_work/vm.log" >&2; return 1; }
    [ $SECONDS -lt $until ] || { echo "victoria-metrics not ready in 120 s" >&2; return 1; }
    sleep 0.1
  done
}

# vm_stop: as prom_stop.
vm_stop() {
  local until=$((SECONDS + 30))
  [ -n "${vm_pid:-}" ] || return 0
  kill "$vm_pid" 2>/dev/null || true
  while kill -0 "$vm_pid" 2>/dev/null; do
    [ $SECONDS -lt $until ] || { kill -9 "$vm_pid" 2>/dev/null || true; break; }
    sleep 0.1
  done
  wait "$vm_pid" 2>/dev/null || true
  vm_pid=
}

# proc_cpu_ms PID / proc_kib PID FIELD: prom_cpu_ms and prom_kib of any process.
proc_cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) * 1000 / hz }' "/proc/$1/stat"; }
proc_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# prom_kib FIELD: Prometheus's VmRSS or VmHWM (peak resident memory) in KiB.
prom_kib() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$prom_pid/status"; }

# prom_cpu_ms: the CPU time (user + system) Prometheus has used, in ms (clock ticks of 10 ms): the
# cost of a query apart from what other processes on a shared machine take from its wall time.
prom_cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) * 1000 / hz }' "/proc/$prom_pid/stat"; }

# prom_query EXPR [TIME]: the instant query's JSON answer on stdout (gzip, as `gpumap fleet` asks);
# non-zero when Prometheus does not answer success.
prom_query() {
  local args=(-sS --compressed -G "$prom_url/api/v1/query" --data-urlencode "query=$1")
  [ -z "${2:-}" ] || args+=(--data-urlencode "time=$2")
  curl "${args[@]}" | python3 -c 'import json,sys; d=json.load(sys.stdin); json.dump(d,sys.stdout); sys.exit(d.get("status")!="success")'
}

# prom_scalar EXPR [TIME]: the single value of a one-sample answer ("none" when the answer is empty).
prom_scalar() {
  prom_query "$@" | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "none")'
}
