#!/usr/bin/env bash
# `gpumap serve` scraped by a real Prometheus (Debian's), and `gpumap metrics --textfile`, against a
# simulated host whose GPU processes are real `sleep` processes with chosen environments.
# Everything listens on loopback ports; gpumap, Prometheus and the sleeps are started and stopped by
# PID (also on failure), the temporary folder is removed by the trap, every wait is bounded.
#
# usage: tests/metrics/metrics_test.sh GPUMAP_BINARY
# Prints PASS/FAIL lines; exit 0 when all passed, 1 on a failure, 2 when a tool is missing
# (prometheus, promtool, curl: scripts/deps.sh installs them).
set -uo pipefail
. "$(dirname "$0")/harness.sh" "${1:-}" prometheus promtool curl python3

# The GPU processes: sleeps with the environments of three traps and one plain process.
U0=GPU-9f3ad0c1-7a52-4d6b-9e41-1b2c3d4e5f60
U1=GPU-9f3ad0c1-7a52-4d6b-9e41-1b2c3d4e5f61
start_sleep() {  # start_sleep VAR=VALUE...: prints its PID
  env -i "$@" sleep 300 &
  pids+=($!)
  echo $!
}
env -i CUDA_VISIBLE_DEVICES=1 sleep 300 & outside=$!; pids+=($outside)      # on GPU 0, sees only GPU 1
env -i CUDA_VISIBLE_DEVICES=1,0 sleep 300 & swapped=$!; pids+=($swapped)    # GPU 1 is its cuda:0
env -i CUDA_VISIBLE_DEVICES="$U1" SLURM_JOB_ID=4242 SLURM_PROCID=3 sleep 300 & job=$!; pids+=($job)
# two local ranks of one torchrun job on one GPU
env -i LOCAL_RANK=0 TORCHELASTIC_RUN_ID=r1 sleep 300 & rank0=$!; pids+=($rank0)
env -i LOCAL_RANK=1 TORCHELASTIC_RUN_ID=r1 sleep 300 & rank1=$!; pids+=($rank1)
for p in $outside $swapped $job $rank0 $rank1; do
  wait_for 5 grep -q sleep "/proc/$p/cmdline" || fail "sleep $p did not start"
done

host() {  # host FAULTS_JSON: the simulated host file
  cat <<JSON
{"driver_version": "580.159.04", "cuda_driver_version": 13000, "gpus": [
 {"name": "NVIDIA H200", "uuid": "$U0", "pci_bus_id": "00000000:18:00.0", "minor_number": 0,
  "memory_total_mib": 143771, "memory_used_mib": 2048, "utilization_gpu": 40, "multiprocessor_count": 132,
  "processes": [{"pid": $outside, "used_memory_mib": 512}, {"pid": $rank0, "used_memory_mib": 256},
                {"pid": $rank1, "used_memory_mib": 256}, {"pid": $swapped, "used_memory_mib": 128}]},
 {"name": "NVIDIA H200", "uuid": "$U1", "pci_bus_id": "00000000:2A:00.0", "minor_number": 1,
  "memory_total_mib": 143771, "memory_used_mib": 1024, "multiprocessor_count": 132,
  "errors": {"nvmlDeviceGetUtilizationRates": "NVML_ERROR_NOT_SUPPORTED"},
  "processes": [{"pid": $swapped, "used_memory_mib": 128}, {"pid": $job, "used_memory_mib": 1024}]}],
 "faults": $1}
JSON
}
host '[]' >"$dir/host.json"
export GPUMAP_CACHE_DIR=$dir/cache GPUMAP_LOCK_DIR=$dir/locks GPUMAP_IN_CONTAINER=0

# --- gpumap metrics: promtool accepts it; the textfile is replaced atomically ---
"$gpumap" metrics --simulate "$dir/host.json" >"$dir/once.prom" 2>"$dir/once.err" || fail "gpumap metrics" "$(cat "$dir/once.err")"
if out=$(promtool check metrics <"$dir/once.prom" 2>&1); then pass "promtool check metrics: gpumap metrics"
else fail "promtool check metrics: gpumap metrics" "$out"; fi

"$gpumap" metrics --simulate "$dir/host.json" --textfile "$dir/text/gpumap.prom" 2>/dev/null &&
  fail "--textfile into a missing folder succeeded" || true
mkdir "$dir/text"
# A reader that checks every version of the file it sees while a writer replaces it 30 times:
# each must be whole (ends with the last series, passes promtool).
( for i in $(seq 30); do "$gpumap" metrics --simulate "$dir/host.json" --textfile "$dir/text/gpumap.prom" || exit 1; done ) &
writer=$!; pids+=($writer)
seen=0 torn=0
while kill -0 $writer 2>/dev/null; do
  if [ -e "$dir/text/gpumap.prom" ]; then
    cp "$dir/text/gpumap.prom" "$dir/seen.prom"
    seen=$((seen + 1))
    tail -n1 "$dir/seen.prom" | grep -q '^gpumap_build_info' || torn=$((torn + 1))
    promtool check metrics <"$dir/seen.prom" >/dev/null 2>&1 || torn=$((torn + 1))
  fi
done
wait $writer; wrc=$?
ls "$dir/text" | grep -v '^gpumap.prom$' >"$dir/leftover" || true
if [ $wrc = 0 ] && [ $seen -gt 0 ] && [ $torn = 0 ] && [ ! -s "$dir/leftover" ]; then
  pass "textfile: $seen reads during 30 rewrites, none torn, no temporary file left"
else fail "textfile: writer rc $wrc, $seen reads, $torn torn" "$(cat "$dir/leftover")"; fi

# --- gpumap serve + Prometheus ---
"$gpumap" serve --simulate "$dir/host.json" --listen 127.0.0.1:0 >"$dir/serve.out" 2>"$dir/serve.err" &
serve=$!; pids+=($serve)
wait_for 10 grep -q 'listening on' "$dir/serve.out" || fail "serve did not start" "$(cat "$dir/serve.err")"
url=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$dir/serve.out")
base=${url%/metrics}
curl -sf "$url" >"$dir/scrape.prom" || fail "GET $url"
if out=$(promtool check metrics <"$dir/scrape.prom" 2>&1); then pass "promtool check metrics: serve /metrics"
else fail "promtool check metrics: serve /metrics" "$out"; fi
ct=$(curl -sf -o /dev/null -w '%{content_type}' "$url")
[[ $ct == "text/plain; version=0.0.4"* ]] && pass "content type $ct" || fail "content type '$ct'"
[ "$(curl -s "$base/healthz")" = ok ] && pass "/healthz ok" || fail "/healthz" "$(curl -s "$base/healthz")"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/etc/passwd")
[ "$code" = 404 ] && pass "no file access: /etc/passwd is 404" || fail "/etc/passwd answered $code"

pport=$(free_port)
mkdir "$dir/prom"
cat >"$dir/prom/prometheus.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpumap
    scrape_interval: 1s
    static_configs: [{targets: ["${base#http://}"]}]
YML
prometheus --config.file="$dir/prom/prometheus.yml" --storage.tsdb.path="$dir/prom/data" \
  --web.listen-address="127.0.0.1:$pport" >"$dir/prom/log" 2>&1 &
prom=$!; pids+=($prom)
# query PROMQL: the result vector as "labels value" lines (python3 parses the API's JSON).
query() {
  curl -sf --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in d["data"]["result"]:
    m = r["metric"]; m.pop("instance", None); m.pop("job", None)
    print(" ".join("%s=%s" % kv for kv in sorted(m.items())), r["value"][1])'
}
has_series() { [ -n "$(query "$1")" ]; }
if wait_for 60 has_series 'gpumap_process_info'; then pass "Prometheus scraped gpumap serve"
else fail "Prometheus never got gpumap_process_info" "$(tail -5 "$dir/prom/log")"; fi

# Each process's own cuda:N, as Prometheus stored it.
check_ordinal() {  # check_ordinal PID UUID EXPECTED ("" = no cuda_ordinal label)
  local got
  got=$(query "gpumap_process_info{pid=\"$1\",uuid=\"$2\"}")
  if [ -z "$got" ]; then fail "no gpumap_process_info for pid $1 on $2"; return; fi
  local ord
  ord=$(grep -o 'cuda_ordinal=[0-9]*' <<<"$got" | cut -d= -f2)
  [ "$ord" = "$3" ] && pass "pid $1 on GPU ${2: -1}: cuda_ordinal '${3}'" || fail "pid $1 on $2: cuda_ordinal '$ord', want '$3'" "$got"
}
check_ordinal $swapped $U0 1
check_ordinal $swapped $U1 0
check_ordinal $job $U1 0
check_ordinal $rank0 $U0 0
check_ordinal $outside $U0 ""
got=$(query "gpumap_process_info{pid=\"$job\"}")
[[ $got == *slurm_job_id=4242* && $got == *rank=3* && $got == *"command=sleep 300"* ]] &&
  pass "pid $job: slurm_job_id, rank and command labels" || fail "pid $job's labels" "$got"

check_finding() {  # check_finding ID SEVERITY PID
  local got
  got=$(query "gpumap_finding{id=\"$1\",pid=\"$3\"}")
  [[ $got == *"severity=$2"* ]] && pass "finding $1 ($2) on pid $3" || fail "finding $1 on pid $3" "$got"
}
check_finding outside-visible-set error $outside
# One cause, one finding (issue 52): rank 1 on rank 0's GPU is ranks-share-gpu (an error, its
# rank-on-wrong-gpu folded in as evidence), not a second series with the same cause.
check_finding ranks-share-gpu error $rank0
check_finding ranks-share-gpu error $rank1
got=$(query 'gpumap_finding{id="rank-on-wrong-gpu"}')
[ -z "$got" ] && pass "no rank-on-wrong-gpu beside its ranks-share-gpu" || fail "rank-on-wrong-gpu said twice" "$got"
check_finding cuda-number-differs info $swapped
got=$(query "gpumap_finding{pid=\"$job\",id=\"outside-visible-set\"}")
[ -z "$got" ] && pass "no outside-visible-set on pid $job" || fail "pid $job has outside-visible-set" "$got"
# The alert of docs/metrics.md fires on exactly that process.
got=$(query 'gpumap_finding{id="outside-visible-set"} * on(pid, uuid) group_left(cuda_ordinal, command) max by (pid, uuid, cuda_ordinal, command) (gpumap_process_info)')
[[ $got == *"pid=$outside"* ]] && [ "$(wc -l <<<"$got")" = 1 ] && pass "docs alert query joins the finding to its process" ||
  fail "alert join" "$got"
got=$(query 'gpumap_gpu_memory_used_bytes * on(uuid) group_left(nvml_index) gpumap_gpu_info')
[[ $got == *"nvml_index=0 uuid=$U0 2147483648"* ]] && pass "GPU memory joined to nvml_index" || fail "GPU memory join" "$got"
[ -z "$(query "gpumap_gpu_utilization_ratio{uuid=\"$U1\"}")" ] && pass "unknown utilisation: no series" ||
  fail "GPU 1 has a utilisation series though NVML does not support the query"
got=$(query "gpumap_gpu_utilization_ratio{uuid=\"$U0\"}")
[ "$got" = "__name__=gpumap_gpu_utilization_ratio uuid=$U0 0.4" ] && pass "GPU 0 utilisation 0.4" || fail "GPU 0 utilisation" "$got"
[ "$(query 'gpumap_exporter_up')" = "__name__=gpumap_exporter_up 1" ] && pass "gpumap_exporter_up 1" || fail "gpumap_exporter_up" "$(query gpumap_exporter_up)"

# --- a series budget: a second serve, added to the same Prometheus by a reload (SIGHUP) ---
# Five processes: $outside (512 MiB, an error finding), $rank0 and $rank1 (256 each, an error: one ranks-share-gpu),
# $swapped (128 + 128, info) and $job (1024, none): a cap of 2 keeps $outside and one rank.
"$gpumap" serve --simulate "$dir/host.json" --listen 127.0.0.1:0 --process-series info --drop-process-label command \
  --max-processes 2 --finding-severity warning >"$dir/budget.out" 2>"$dir/budget.err" &
pids+=($!)
wait_for 10 grep -q 'listening on' "$dir/budget.out" || fail "serve with a series budget did not start" "$(cat "$dir/budget.err")"
burl=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$dir/budget.out")
btarget=${burl%/metrics}
cat >>"$dir/prom/prometheus.yml" <<YML
  - job_name: gpumap-budget
    scrape_interval: 1s
    static_configs: [{targets: ["${btarget#http://}"]}]
YML
kill -HUP $prom
if wait_for 60 has_series 'gpumap_exporter_capped_processes{job="gpumap-budget"}'; then
  pass "Prometheus scraped serve with a series budget"
  got=$(query 'count by (pid) (gpumap_process_info{job="gpumap-budget"})' | sort)
  [[ $(wc -l <<<"$got") = 2 && $got == *"pid=$outside "* && $got != *"pid=$job "* ]] &&
    pass "--max-processes 2: the processes with an error or warning, most memory first" || fail "--max-processes 2" "$got"
  got=$(query 'gpumap_exporter_capped_processes{job="gpumap-budget"}')
  [ "$got" = "__name__=gpumap_exporter_capped_processes 3" ] && pass "3 processes capped, said" || fail "capped processes" "$got"
  [ -z "$(query 'gpumap_process_used_memory_bytes{job="gpumap-budget"}')" ] && pass "--process-series info: no value series" ||
    fail "--process-series info wrote value series"
  [ -z "$(query 'gpumap_process_info{job="gpumap-budget",command!=""}')" ] && pass "--drop-process-label command" ||
    fail "a command label under --drop-process-label command"
  [ -z "$(query 'gpumap_finding{job="gpumap-budget",severity="info"}')" ] && pass "--finding-severity warning: no info finding" ||
    fail "info findings under --finding-severity warning"
else fail "Prometheus never scraped the budget serve" "$(tail -5 "$dir/prom/log")"; fi

# --- serve survives bad requests ---
big=$(head -c 20000 /dev/zero | tr '\0' a)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$url")
[ "$code" = 431 ] && pass "oversized request: 431" || fail "oversized request answered $code"
got=$(printf 'BLAH\r\n\r\n' | timeout 5 python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(sys.stdin.buffer.read())
print(s.recv(100).decode().split("\r\n")[0])' "${base##*:}")
[[ $got == "HTTP/1.1 400"* ]] && pass "malformed request: $got" || fail "malformed request" "$got"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")
[ "$code" = 405 ] && pass "POST: 405" || fail "POST answered $code"
# A slow client (sends half a request line, then nothing) is cut off; others are served meanwhile.
python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(b"GET /met")
t = time.time(); s.settimeout(15)
data = s.recv(100)
print("%s %.0f" % (data.decode().split("\r\n")[0] if data else "closed", time.time() - t))' "${base##*:}" >"$dir/slow" &
slow=$!; pids+=($slow)
sleep 1
curl -sf -m 5 "$url" >/dev/null && pass "served while a slow client holds a connection" || fail "blocked by a slow client"
wait $slow
[[ $(cat "$dir/slow") == "HTTP/1.1 408"* ]] && pass "slow client cut off: $(cat "$dir/slow") s" || fail "slow client" "$(cat "$dir/slow")"
# 100 concurrent scrapes: every one answered, one driver read per cache period.
seq 100 | xargs -P 20 -I{} curl -sf -m 10 -o /dev/null -w '%{http_code}\n' "$url" >"$dir/many" 2>&1
[ "$(grep -c '^200$' "$dir/many")" = 100 ] && pass "100 concurrent scrapes answered" || fail "concurrent scrapes" "$(sort "$dir/many" | uniq -c)"
kill -0 $serve 2>/dev/null && pass "serve still runs" || fail "serve died" "$(cat "$dir/serve.err")"

# --- a driver that fails, then hangs: the last good frame, marked stale ---
host '[{"call": "nvmlDeviceGetCount", "after": 1, "times": 1, "error": "NVML_ERROR_UNKNOWN"},
       {"call": "nvmlDeviceGetCount", "after": 2, "hang": true}]' >"$dir/faulty.json"
GPUMAP_DRIVER_TIMEOUT=2 "$gpumap" serve --simulate "$dir/faulty.json" --listen 127.0.0.1:0 --cache 0 \
  >"$dir/faulty.out" 2>"$dir/faulty.err" &
faulty=$!; pids+=($faulty)
wait_for 10 grep -q 'listening on' "$dir/faulty.out" || fail "faulty serve did not start" "$(cat "$dir/faulty.err")"
furl=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$dir/faulty.out")
wait_for 10 curl -sf "${furl%/metrics}/healthz"   # the first read (good)
s2=$(curl -s -m 10 "$furl")   # the second read fails
s3_start=$SECONDS; s3=$(curl -s -m 10 "$furl"); s3_took=$((SECONDS - s3_start))   # the third hangs
s4_start=$SECONDS; s4=$(curl -s -m 10 "$furl"); s4_took=$((SECONDS - s4_start))
for n in 2 3 4; do
  v=s$n
  if grep -q '^gpumap_exporter_stale 1$' <<<"${!v}" && grep -q '^gpumap_exporter_up 0$' <<<"${!v}" &&
     grep -q "^gpumap_process_info{pid=\"$job\"" <<<"${!v}" && promtool check metrics <<<"${!v}" >/dev/null 2>&1; then
    pass "faulty driver, scrape $n: last good frame, stale, promtool ok"
  else fail "faulty driver, scrape $n" "$(grep gpumap_exporter <<<"${!v}")"; fi
done
[ $s3_took -le 5 ] && [ $s4_took -le 1 ] && pass "hung driver: scrape waited ${s3_took} s (GPUMAP_DRIVER_TIMEOUT=2), the next ${s4_took} s" ||
  fail "hung driver: scrapes took $s3_took s and $s4_took s"
grep -q '^gpumap_exporter_driver_errors_total 2$' <<<"$s4" && pass "driver errors counted: 2" ||
  fail "driver errors" "$(grep errors <<<"$s4")"
code=$(curl -s -o /dev/null -w '%{http_code}' "${furl%/metrics}/healthz")
[ "$code" = 503 ] && pass "/healthz 503 while the driver hangs" || fail "/healthz answered $code"

# Stopping: SIGTERM ends serve with 0, even with a read stuck in the driver.
kill -TERM $faulty; wait $faulty; rc=$?
[ $rc = 0 ] && pass "serve with a hung read stops on SIGTERM (exit 0)" || fail "serve exited $rc on SIGTERM"
kill -TERM $serve; wait $serve; rc=$?
[ $rc = 0 ] && pass "serve stops on SIGTERM (exit 0)" || fail "serve exited $rc"
exit $failed
