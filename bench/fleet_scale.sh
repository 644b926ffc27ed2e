#!/usr/bin/env bash
# The fleet view at scale, by simulation (issue 44 item 4): for 10, 100 and 1 000 nodes of eight GPUs
# and 64 processes each, Prometheus backfilled with the series gpumap serve would give it
# (bench/fleet_backfill.py from a real `gpumap metrics` exposition of the binary measured, then
# `promtool tsdb create-blocks-from openmetrics`; cached under BUILD_DIR/fleet-scale-cache, reused while
# its samples still cover "now"), a real Prometheus (Debian's) started on a copy of the blocks, and:
#   (a) the seven instant queries `gpumap fleet` makes (docs/fleet.md, "What it asks Prometheus"),
#       timed with curl (gzip), whole fleet and one node by its --node matcher, with Prometheus's CPU
#       time apart from the wall time (a shared machine's load inflates the latter);
#   (b) `$GPUMAP fleet --prometheus URL` (text and --json) and `--node X`, when the binary has a
#       `fleet` command (else said, and skipped);
#   (c) the same blocks in VictoriaMetrics (vmctl's Prometheus-snapshot import; FLEET_VM=0 skips it)
#       and `gpumap fleet` (text, --json, --node) against it, each engine's CPU per view;
#   memory: gpumap's max RSS (/usr/bin/time -v), Prometheus's peak RSS (VmHWM, the same figure) after
#   the queries, the blocks on disk.
# A table per N side by side, and the ratios to issue 44's targets: whole fleet < 2 s, one node
# < 200 ms.  A benchmark: it prints numbers and asserts nothing (tests/fleet/fleet_scale_selfcheck.sh
# checks the machinery).  Time it with a release build: an ASan binary is several times slower.
# Prometheus is stopped by its PID, the temporary folder removed, also on failure or Ctrl-C.
# usage: bench/fleet_scale.sh [BUILD_DIR]
#   env: GPUMAP (default BUILD_DIR/gpumap), FLEET_NODES ("10 100 1000"), FLEET_PROCESSES (64),
#        FLEET_VM (1: each N in VictoriaMetrics too, imported from the same blocks by vmctl; 0: not),
#        FLEET_CACHE (BUILD_DIR/fleet-scale-cache), FLEET_REPEAT (5: each timing is the median),
#        FLEET_INTERVAL (60: seconds between samples), FLEET_FUTURE (2400: seconds of samples after
#        now; the cache is reused while they cover the next 15 minutes: e.g. FLEET_FUTURE=14400
#        FLEET_INTERVAL=240 keeps a 1 000-node backfill usable for four hours at the same cost;
#        an instant query sees the last 5 minutes, so keep the interval under 300)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
GPUMAP=${GPUMAP:-$build/gpumap}
nodes_list=${FLEET_NODES:-10 100 1000}
procs=${FLEET_PROCESSES:-64}
repeat=${FLEET_REPEAT:-5}
cache=${FLEET_CACHE:-$build/fleet-scale-cache}
interval=${FLEET_INTERVAL:-60}
future=${FLEET_FUTURE:-2400}
for t in prometheus promtool curl python3 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "fleet_scale: $t is not installed (scripts/deps.sh installs it)" >&2; exit 2; }
done
[ -x "$GPUMAP" ] || { echo "fleet_scale: no gpumap binary at $GPUMAP: give the build folder or GPUMAP=" >&2; exit 2; }
GPUMAP=$(readlink -f "$GPUMAP")
mkdir -p "$cache"
fleet_work=$(mktemp -d "$cache/run-XXXXXX")  # on the cache's disk: the 1 000-node text is ~3.6 GB
pids=()
prom_pid=
. "$(dirname "$0")/fleet_prom.sh"
cleanup() {
  local p
  prom_stop
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$fleet_work" "$cache"/*.partial
}
trap cleanup EXIT
trap 'exit 130' INT TERM
res=$fleet_work/results.tsv  # N, measure, value
put() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$res"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

has_fleet=0 has_processes=0
if "$GPUMAP" fleet --help >/dev/null 2>&1; then has_fleet=1; fi
if "$GPUMAP" fleet --help 2>/dev/null | grep -q -- --processes; then has_processes=1; fi
echo "gpumap: $("$GPUMAP" --version) at $GPUMAP"
echo "$(prometheus --version 2>&1 | head -1); $(promtool --version 2>&1 | head -1)"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
[ $has_fleet = 1 ] || echo "gpumap fleet: absent from this binary (\`$GPUMAP fleet --help\` fails): part (b) skipped"

fleet_template "$GPUMAP" "$fleet_work/template.prom"
key=$(fleet_template_key "$fleet_work/template.prom")

# backfill N: the cached blocks for N nodes (made when missing or when their samples end within
# 15 minutes, replacing N's entries made from another exposition or generator); prints the entry's
# folder.
backfill() {
  local n=$1 entry=$cache/n$1-p$procs-i$interval-f$future-$key now
  now=$(date +%s)
  if [ -f "$entry/summary.json" ] &&
    python3 -c "import json,sys; sys.exit(json.load(open('$entry/summary.json'))['last_ts'] - $now < 900)"; then
    echo "$entry"; return
  fi
  rm -rf "$cache/n$n-p$procs-"*  # this entry, and those of another exposition, generator or span
  mkdir -p "$entry.partial"
  echo "  backfilling $n nodes..." >&2
  /usr/bin/time -f '%e %M' -o "$entry.partial/gen.time" python3 "$fleet_src/bench/fleet_backfill.py" \
    --template "$fleet_work/template.prom" --nodes "$n" --processes "$procs" --interval "$interval" --future "$future" \
    --summary "$entry.partial/summary.json" -o "$fleet_work/fleet.om" 2>"$entry.partial/gen.err" ||
    { cat "$entry.partial/gen.err" >&2; return 1; }
  stat -c %s "$fleet_work/fleet.om" >"$entry.partial/text.bytes"
  /usr/bin/time -f '%e %M' -o "$entry.partial/promtool.time" \
    promtool tsdb create-blocks-from openmetrics "$fleet_work/fleet.om" "$entry.partial/data" \
    >"$entry.partial/promtool.out" 2>&1 || { tail -5 "$entry.partial/promtool.out" >&2; return 1; }
  rm -f "$fleet_work/fleet.om"
  mv "$entry.partial" "$entry"
  echo "$entry"
}

# tq N NAME EXPR: time the instant query EXPR (median of $repeat, first call apart) and note its
# answer's series and bytes.
tq() {
  local n=$1 name=$2 expr=$3 i t first out=$fleet_work/q.json
  local -a times=()
  local cpu0
  cpu0=$(prom_cpu_ms)
  for ((i = 0; i < repeat; i++)); do
    t=$(curl -sS --compressed -o "$out" -w '%{time_total}' -G "$prom_url/api/v1/query" --data-urlencode "query=$expr")
    times+=("$t")
  done
  read -r series bytes < <(python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
if d.get("status") != "success":
    sys.exit("query failed: %s" % d)
print(len(d["data"]["result"]), os.path.getsize(sys.argv[1]))' "$out") ||
    { echo "fleet_scale: query $expr failed" >&2; return 1; }
  put "$n" "q $name ms" "$(printf '%s\n' "${times[@]}" | median | awk '{ printf "%.1f", $1 * 1000 }')"
  put "$n" "q $name CPU ms" "$(awk -v a="$cpu0" -v b="$(prom_cpu_ms)" -v r="$repeat" 'BEGIN { printf "%.0f", (b - a) / r }')"
  put "$n" "q $name first ms" "$(awk -v t="${times[0]}" 'BEGIN { printf "%.1f", t * 1000 }')"
  put "$n" "q $name series" "$series"
}

# tf N NAME ARGS...: time `gpumap fleet ARGS` (median wall of $repeat, the largest max RSS).
tf() {
  local n=$1 name=$2 i rc
  shift 2
  local -a times=() rss=() cpu=()
  for ((i = 0; i < repeat; i++)); do
    rc=0
    /usr/bin/time -v -o "$fleet_work/f.time" "$GPUMAP" fleet --prometheus "${tf_url:-$prom_url}" "$@" \
      >"$fleet_work/f.out" 2>"$fleet_work/f.err" || rc=$?
    times+=("$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (j = 1; j <= n; j++) s = s * 60 + p[j]; print s }' "$fleet_work/f.time")")
    rss+=("$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$fleet_work/f.time")")
    cpu+=("$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$fleet_work/f.time")")
  done
  put "$n" "fleet $name ms" "$(printf '%s\n' "${times[@]}" | median | awk '{ printf "%.0f", $1 * 1000 }')"
  put "$n" "fleet $name CPU ms" "$(printf '%s\n' "${cpu[@]}" | median | awk '{ printf "%.0f", $1 * 1000 }')"
  put "$n" "fleet $name MiB" "$(printf '%s\n' "${rss[@]}" | sort -n | tail -1 | awk '{ printf "%.1f", $1 / 1024 }')"
  put "$n" "fleet $name rc" "$rc"
  put "$n" "fleet $name lines" "$(wc -l <"$fleet_work/f.out")"
  # rc: 0, or 1 when --fail-on's findings are there; anything else is worth reading
  [ "$rc" -le 1 ] || { echo "  gpumap fleet $* exited $rc:" >&2; head -3 "$fleet_work/f.err" >&2; }
}

# tfe N NAME PID ARGS...: tf, and the engine's (PID's) CPU per run of it.
tfe() {
  local n=$1 name=$2 pid=$3 c0
  shift 3
  c0=$(proc_cpu_ms "$pid")
  tf "$n" "$name" "$@"
  put "$n" "fleet $name engine CPU ms" "$(awk -v a="$c0" -v b="$(proc_cpu_ms "$pid")" -v r="$repeat" 'BEGIN { printf "%.0f", (b - a) / r }')"
}

for n in $nodes_list; do
  echo "== $n nodes, $procs processes each" >&2
  entry=$(backfill "$n")
  s() { python3 -c 'import json,sys; print(eval(sys.argv[2], {}, json.load(open(sys.argv[1]))))' "$entry/summary.json" "$1"; }
  put "$n" "series" "$(s series)"
  put "$n" "gpumap series per node (median)" "$(s 'sorted(gpumap_series_by_node.values())[len(gpumap_series_by_node) // 2]')"
  put "$n" "samples" "$(s samples)"
  put "$n" "backfill text MB" "$(awk '{ printf "%.0f", $1 / 1e6 }' "$entry/text.bytes")"
  put "$n" "generate s" "$(cut -d' ' -f1 "$entry/gen.time")"
  put "$n" "promtool s" "$(cut -d' ' -f1 "$entry/promtool.time")"
  put "$n" "promtool MiB" "$(awk '{ printf "%.0f", $2 / 1024 }' "$entry/promtool.time")"
  put "$n" "blocks MiB" "$(du -sk "$entry/data" | awk '{ printf "%.1f", $1 / 1024 }')"
  rm -rf "$fleet_work/data"
  cp -al "$entry/data" "$fleet_work/data" 2>/dev/null || cp -a "$entry/data" "$fleet_work/data"
  prom_start "$fleet_work/data"
  put "$n" "prometheus ready s" "$prom_ready_s"
  put "$n" "prometheus RSS at start MiB" "$(prom_kib VmRSS | awk '{ printf "%.0f", $1 / 1024 }')"
  node=node0005
  [ "$n" -gt 5 ] || node=node0001
  # The seven queries of `gpumap fleet` (docs/fleet.md, "What it asks Prometheus"; src/prom's
  # fleet_queries), and its --node matcher on every selector.
  sel="instance=~\"(?:$node)(?::[0-9]+)?\""
  for scope in fleet node; do
    m=; [ $scope = fleet ] || m=$sel
    tq "$n" "$scope nodes (up)" "up{$m} and on(job) group by (job) (last_over_time(gpumap_build_info[1h]))"
    tq "$n" "$scope last reading" "max by (instance, job) (last_over_time(gpumap_exporter_last_success_timestamp_seconds{$m}[1h]))"
    tq "$n" "$scope exporter health" "{__name__=~\"gpumap_exporter_up|gpumap_exporter_stale|gpumap_build_info\"${m:+,$m}}"
    tq "$n" "$scope gpu_info" "gpumap_gpu_info{$m}"
    tq "$n" "$scope gpu gauges" "{__name__=~\"gpumap_gpu_memory_used_bytes|gpumap_gpu_memory_total_bytes|gpumap_gpu_utilization_ratio|gpumap_gpu_temperature_celsius\"${m:+,$m}}"
    tq "$n" "$scope process_info" "gpumap_process_info{$m}"
    tq "$n" "$scope finding" "gpumap_finding{$m}"
  done
  # what a whole-fleet view could ask instead of every process and finding: the findings that are not
  # info (two info findings a process are most of gpumap_finding's series), and per-node counts
  tq "$n" "alt findings not info" 'gpumap_finding{severity!="info"}'
  tq "$n" "alt findings per node" 'count by (instance, id, severity) (gpumap_finding)'
  tq "$n" "alt processes per node" 'count by (instance) (gpumap_process_info)'
  # what `fleet --processes auto` asks instead of every process past 2 000 (fleet_queries)
  tq "$n" "auto process counts" 'count by (instance, uuid, slurm_job_id) (count by (instance, uuid, pid, slurm_job_id) (gpumap_process_info))'
  tq "$n" "auto processes with findings" '(gpumap_process_info) and on(instance, pid) gpumap_finding{severity!="info",pid!=""}'
  # the per-job rules' expressions (contrib/prometheus: what Prometheus evaluates each interval;
  # the fleet view reads their recorded results, which are far smaller)
  tq "$n" "rule job_ranks" 'count by (slurm_job_id) (max by (instance, pid, slurm_job_id) (gpumap_process_info{slurm_job_id!=""}))'
  tq "$n" "rule job_nodes" 'count by (slurm_job_id) (count by (instance, slurm_job_id) (gpumap_process_info{slurm_job_id!=""}))'
  if [ $has_fleet = 1 ]; then
    tfe "$n" "text" "$prom_pid"; tfe "$n" "--json" "$prom_pid" --json; tfe "$n" "--node" "$prom_pid" --node "$node"
    tf "$n" "--node --json" --node "$node" --json
    if [ $has_processes = 1 ]; then tf "$n" "--processes all" --processes all; tf "$n" "--processes all --json" --processes all --json; fi
  fi
  put "$n" "prometheus peak RSS MiB" "$(prom_kib VmHWM | awk '{ printf "%.0f", $1 / 1024 }')"
  prom_stop
  # The same blocks in VictoriaMetrics (vmctl's Prometheus-snapshot import), and gpumap fleet against
  # it: its CPU per view from /proc/PID/stat (issue 54 item 6).
  if [ "$has_fleet" = 1 ] && [ "${FLEET_VM:-1}" = 1 ] && command -v victoria-metrics >/dev/null && command -v vmctl >/dev/null; then
    vm_start "$fleet_work/vmdata"
    t0=$SECONDS
    # (in a pseudo-terminal: vmctl 1.79 fails without one, its progress bar off or not)
    script -qec "vmctl prometheus --prom-snapshot '$fleet_work/data' --vm-addr '$vm_url' --vm-disable-progress-bar -s" /dev/null \
      >"$fleet_work/vmctl.log" 2>&1 </dev/null ||
      { echo "vmctl failed:" >&2; tail -5 "$fleet_work/vmctl.log" >&2; }
    curl -sf "$vm_url/internal/force_flush" >/dev/null || true
    put "$n" "vm series" "$(curl -sf "$vm_url/api/v1/query?query=count(%7B__name__%3D~%22.%2B%22%7D)&nocache=1" |
      python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')"
    put "$n" "vm import s" "$((SECONDS - t0))"
    tf_url=$vm_url
    tfe "$n" "vm text" "$vm_pid"; tfe "$n" "vm --json" "$vm_pid" --json; tfe "$n" "vm --node" "$vm_pid" --node "$node"
    tf_url=
    put "$n" "vm peak RSS MiB" "$(proc_kib "$vm_pid" VmHWM | awk '{ printf "%.0f", $1 / 1024 }')"
    vm_stop
    rm -rf "$fleet_work/vmdata"
  fi
  rm -rf "$fleet_work/data"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$res" "$has_fleet" <<'PY'
import collections, sys
rows, cols = collections.OrderedDict(), []
for line in open(sys.argv[1]):
    n, k, v = line.rstrip("\n").split("\t")
    if n not in cols:
        cols.append(n)
    rows.setdefault(k, {})[n] = v
def sums(scope, n, what=" ms"):
    return sum(float(rows[k][n]) for k in rows
               if k.startswith("q %s " % scope) and k.endswith(what) and "first" not in k
               and ("CPU" in k) == ("CPU" in what))
for scope in ("fleet", "node"):
    rows["q %s: all 7 queries, one after another, ms" % scope] = {n: "%.1f" % sums(scope, n) for n in cols}
    rows["q %s: all 7 queries, Prometheus CPU ms" % scope] = {n: "%.0f" % sums(scope, n, " CPU ms") for n in cols}
w = max(len(k) for k in rows) + 2
print("\n%-*s" % (w, "nodes (8 GPUs, %s processes each)" % "64") + "".join("%12s" % c for c in cols))
for k, vals in rows.items():
    if k.endswith(" series") and k.startswith("q ") or k.endswith(" first ms") or k.endswith(" lines"):
        continue
    print("%-*s" % (w, k) + "".join("%12s" % vals.get(c, "-") for c in cols))
print("\nanswer sizes (series): " + "; ".join(
    "%s: %s" % (k[2:-7], "/".join(rows[k].get(c, "-") for c in cols)) for k in rows if k.startswith("q ") and k.endswith(" series")))
print("\nissue 44's targets (ratio = measured / target; < 1 meets it):")
for c in cols:
    if sys.argv[2] == "1":
        f, nd = float(rows["fleet text ms"][c]), float(rows["fleet --node ms"][c])
        print("  %5s nodes: gpumap fleet %6.0f ms / 2000 ms = %.2f;  fleet --node %5.0f ms / 200 ms = %.2f" % (c, f, f / 2000, nd, nd / 200))
    else:
        f, nd = sums("fleet", c), sums("node", c)
        fc, ndc = sums("fleet", c, " CPU ms"), sums("node", c, " CPU ms")
        print("  %5s nodes: the fleet view's queries alone %6.0f ms / 2000 ms = %.2f (Prometheus CPU %.2f);  "
              "one node's %5.0f ms / 200 ms = %.2f (CPU %.2f)" % (c, f, f / 2000, fc / 2000, nd, nd / 200, ndc / 200))
if sys.argv[2] != "1":
    print("  (no `gpumap fleet` in this binary: its own parsing, joining and rendering are not counted)")
PY
