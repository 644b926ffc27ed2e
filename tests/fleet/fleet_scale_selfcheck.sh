#!/usr/bin/env bash
# bench/fleet_scale.sh's machinery at N=3, checked: the generator (bench/fleet_backfill.py) fed a real
# `gpumap metrics` exposition, `promtool tsdb create-blocks-from openmetrics`, a real Prometheus
# (Debian's) on the blocks, and what its instant-query API answers: every series the generator says
# it wrote, the nodes up, down and stale, the processes, the job that spans two nodes, the findings,
# one node by label matcher, and gpumap_process_info's labels equal to the exposition's.  The answer
# at "now" is what `gpumap fleet` reads: it must show the live fleet, not a 5-minute-old one.
# usage: tests/fleet/fleet_scale_selfcheck.sh GPUMAP_BINARY
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../metrics/harness.sh" "${1:-}" prometheus promtool python3 curl
fleet_work=$dir
. "$here/../../bench/fleet_prom.sh"
gen=$here/../../bench/fleet_backfill.py
trap 'prom_stop; cleanup' EXIT

# The generator refuses what it cannot do, naming the input.
out=$(python3 "$gen" --template /dev/null --nodes 0 2>&1); rc=$?
[ $rc = 2 ] && grep -q -- "--nodes must be >= 1" <<<"$out" && pass "generator: --nodes 0 is exit 2 naming --nodes" ||
  fail "generator: --nodes 0 (rc $rc)" "$out"
printf '# TYPE gpumap_gpu_info gauge\n' >"$dir/empty.prom"
out=$(python3 "$gen" --template "$dir/empty.prom" --nodes 3 -o "$dir/x.om" 2>&1); rc=$?
[ $rc = 1 ] && grep -q "empty.prom has no gpumap_gpu_info sample" <<<"$out" && pass "generator: a template without GPUs is exit 1 naming it" ||
  fail "generator: a template without GPUs (rc $rc)" "$out"

fleet_template "$gpumap" "$dir/template.prom" || { fail "gpumap metrics on the template host"; exit 1; }
python3 "$gen" --template "$dir/template.prom" --nodes 3 --summary "$dir/summary.json" -o "$dir/fleet.om" 2>"$dir/gen.err" ||
  { fail "fleet_backfill.py --nodes 3" "$(cat "$dir/gen.err")"; exit 1; }
promtool tsdb create-blocks-from openmetrics "$dir/fleet.om" "$dir/data" >"$dir/promtool.out" 2>&1 ||
  { fail "promtool tsdb create-blocks-from openmetrics" "$(tail -5 "$dir/promtool.out")"; exit 1; }
pass "promtool backfilled the generator's 3 nodes"
prom_start "$dir/data" || { fail "prometheus on the backfilled blocks" "$(tail -5 "$dir/prometheus.log")"; exit 1; }

S() { python3 -c 'import json,sys; print(eval(sys.argv[2], {}, json.load(open(sys.argv[1]))))' "$dir/summary.json" "$1"; }
# expect WHAT WANT EXPR [TIME]
expect() {
  local got
  got=$(prom_scalar "$3" ${4:+"$4"} 2>&1)
  [ "$got" = "$2" ] && pass "$1: $2" || fail "$1: want $2, got $got" "query: $3"
}
before_down=$(( $(S down_since_ts) - 1 ))  # every series, a down node's too, is within the lookback here
expect "every series the generator wrote is in Prometheus" "$(S series)" 'count({__name__=~".+"})' "$before_down"
expect "gpumap series of node0000 (392 for 64 processes, docs/metrics.md, and its extra finding)" \
  "$(S "gpumap_series_by_node['node0000:9467']")" \
  'count({__name__=~"gpumap_.+", instance="node0000:9467"})' "$before_down"
expect "nodes with GPUs now (the down one gone)" "$(( 3 - $(S down) ))" 'count(count by (instance) (gpumap_gpu_info))'
expect "targets" 3 'count(up{job=~"gpumap.*"})'
# gpumap fleet's node list (docs/fleet.md): every target of a job whose targets exported
# gpumap_build_info within the hour lists the down node too, with up 0
expect "nodes gpumap fleet lists" 3 'count(up and on(job) group by (job) (last_over_time(gpumap_build_info[1h])))'
expect "of them down" "$(S down)" 'count((up and on(job) group by (job) (last_over_time(gpumap_build_info[1h]))) == 0)'
expect "targets down now" "$(S down)" 'count(up{job=~"gpumap.*"} == 0)'
expect "nodes serving a stale frame" "$(S stale)" 'count(gpumap_exporter_stale == 1)'
expect "processes now" "$(( (3 - $(S down)) * $(S processes_per_node) ))" 'count(gpumap_process_info)'
expect "jobs on two nodes (gpumap:job_nodes:count's expression)" "$(S jobs_spanning_up_nodes)" \
  'count(count by (slurm_job_id) (count by (instance, slurm_job_id) (gpumap_process_info{slurm_job_id!=""})) > 1)'
expect "ranks of the job on two nodes" 16 \
  'max(count by (slurm_job_id) (gpumap_process_info{slurm_job_id!=""}) and on(slurm_job_id) (count by (slurm_job_id) (count by (instance, slurm_job_id) (gpumap_process_info)) > 1))'
expect "rank-on-wrong-gpu findings" "$(S "findings_by_id_up_nodes.get('rank-on-wrong-gpu', 0)")" \
  'count(gpumap_finding{id="rank-on-wrong-gpu"})'
expect "one node by label matcher: its GPUs" 8 'count(gpumap_gpu_info{instance=~"node0001(:[0-9]+)?"})'
expect "the timestamp of a live node's last sample is within a scrape interval of now" 1 \
  'count(time() - timestamp(gpumap_exporter_up{instance="node0000:9467"}) <= 60)'
expect "processes in pods (the down node's, before it went down)" "$(S processes_per_node)" \
  'count(gpumap_process_info{pod!=""})' "$before_down"

# gpumap_process_info's labels in Prometheus: the exposition's (plus job and instance), and the pod
# labels docs/metrics.md gives a process in a pod.
want=$(python3 - "$dir/template.prom" <<'PY'
import re, sys
keys = set()
for line in open(sys.argv[1]):
    if line.startswith("gpumap_process_info{"):
        keys |= set(re.findall(r'([a-z_]+)="', line))
print(" ".join(sorted(keys | {"job", "instance", "__name__"})))
PY
)
got=$(prom_query 'gpumap_process_info{instance="node0000:9467"}' | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(" ".join(sorted(set().union(*(m["metric"] for m in r)))) if r else "none")')
[ "$got" = "$want" ] && pass "gpumap_process_info's labels are the exposition's: $got" ||
  fail "gpumap_process_info's labels" "want: $want"$'\n'"got:  $got"
exit $failed
