#!/usr/bin/env bash
# `gpumap serve` as operators run it: TLS and basic authentication from an exporter-toolkit
# web-config.yml (a CA and certificates made here with openssl, a bcrypt hash made with libcrypt),
# scraped by a real Prometheus with tls_config and basic_auth (and refused with the wrong password),
# curl for 401, gzip and 503; held connections from this script (64 and 200, reopened as the server
# closes them) while scrapes go on; `ulimit -n 16` with 20 idle clients (CPU time of the server over
# a few seconds); 64 slow readers of a 2.9 MB answer (serve's RSS and socket memory); systemd socket activation (systemd-socket-activate); a hung cuInit on a mixed host.
# Every process is started and stopped by PID (also on failure), the temporary folder removed by
# the trap, every wait bounded.
#
# usage: tests/metrics/web_test.sh GPUMAP_BINARY
# Prints PASS/FAIL lines; exit 0 when all passed, 1 on a failure, 2 when a tool is missing.
set -uo pipefail
. "$(dirname "$0")/harness.sh" "${1:-}" prometheus promtool curl python3 openssl systemd-socket-activate
export GPUMAP_CACHE_DIR=$dir/cache GPUMAP_LOCK_DIR=$dir/locks GPUMAP_IN_CONTAINER=0
# start_serve NAME ARGS...: gpumap serve in the background; sets $url to what it printed.
start_serve() {
  local name=$1; shift
  "$gpumap" serve "$@" >"$dir/$name.out" 2>"$dir/$name.err" &
  pids+=($!)
  last=$!
  if ! wait_for 15 grep -q 'listening on' "$dir/$name.out"; then
    fail "$name: serve did not start" "$(cat "$dir/$name.err")"
    url=
    return 1
  fi
  url=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$dir/$name.out")
}

# --- a CA, a server certificate for 127.0.0.1, a client certificate; a bcrypt hash ---
cd "$dir" || exit 2
{
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=gpumap-test-ca -keyout ca.key -out ca.crt &&
  openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr &&
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext &&
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt &&
  openssl req -newkey rsa:2048 -nodes -subj /CN=scraper -keyout client.key -out client.csr &&
  openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out client.crt
} >"$dir/openssl.log" 2>&1 || { fail "openssl could not make the certificates" "$(tail "$dir/openssl.log")"; exit 1; }
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
[[ $hash == '$2'?'$10$'* ]] || { fail "no bcrypt hash from libcrypt" "$hash"; exit 1; }
cat >web.yml <<YML
# exporter-toolkit's web-config.yml; paths relative to this file
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  min_version: TLS12
basic_auth_users:
  prometheus: '$hash'
YML
cp "$gpumap" /dev/null
hostjson=$(dirname "$gpumap")/hosts/h200x2.json
[ -f "$hostjson" ] || hostjson=h200x2

# --- TLS + basic auth: curl ---
start_serve tls --simulate "$hostjson" --listen 127.0.0.1:0 --web.config.file "$dir/web.yml" && tls_pid=$last
[[ $url == https://127.0.0.1:*/metrics ]] && pass "serve with TLS says $url" || fail "TLS url '$url'"
tls_url=$url
code=$(curl -s -o "$dir/t.prom" -w '%{http_code}' --cacert ca.crt -u 'prometheus:s3cret pw' "$tls_url")
[ "$code" = 200 ] && promtool check metrics <"$dir/t.prom" >/dev/null 2>&1 && pass "TLS + right password: 200, promtool ok" ||
  fail "TLS + right password answered $code" "$(head -3 "$dir/t.prom")"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert ca.crt -u 'prometheus:wrong' "$tls_url")
[ "$code" = 401 ] && pass "wrong password: 401" || fail "wrong password answered $code"
hdr=$(curl -s -D - -o /dev/null --cacert ca.crt "$tls_url")
[[ $hdr == *" 401 "* && $hdr == *"WWW-Authenticate: Basic"* ]] && pass "no credentials: 401 with WWW-Authenticate" ||
  fail "no credentials" "$hdr"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert ca.crt -u 'nobody:s3cret pw' "${tls_url%/metrics}/healthz")
[ "$code" = 401 ] && pass "unknown user on /healthz: 401" || fail "unknown user answered $code"
curl -s -m 5 -o /dev/null "http://${tls_url#https://}" && fail "plain HTTP on the TLS port answered" ||
  pass "plain HTTP on the TLS port gets no answer"
curl -s -m 5 -o /dev/null --tls-max 1.1 --tlsv1.1 --cacert ca.crt -u 'prometheus:s3cret pw' "$tls_url" &&
  fail "TLS 1.1 accepted though min_version is TLS12" || pass "TLS 1.1 refused (min_version TLS12)"
# gzip: as curl --compressed asks, and the raw answer.
curl -sf --compressed --cacert ca.crt -u 'prometheus:s3cret pw' "$tls_url" >"$dir/z.prom" &&
  promtool check metrics <"$dir/z.prom" >/dev/null 2>&1 && pass "curl --compressed: promtool ok" || fail "curl --compressed"
curl -s -D "$dir/z.hdr" -H 'Accept-Encoding: gzip' --cacert ca.crt -u 'prometheus:s3cret pw' "$tls_url" >"$dir/raw.gz"
if grep -qi '^Content-Encoding: gzip' "$dir/z.hdr" && gzip -dc <"$dir/raw.gz" | grep -q '^gpumap_gpu_info'; then
  pass "Accept-Encoding: gzip: Content-Encoding gzip, $(stat -c %s "$dir/raw.gz") bytes for $(stat -c %s "$dir/t.prom")"
else fail "gzip answer" "$(cat "$dir/z.hdr")"; fi
grep -qi '^Content-Encoding' <(curl -s -D - -o /dev/null --cacert ca.crt -u 'prometheus:s3cret pw' "$tls_url") &&
  fail "gzip without Accept-Encoding" || pass "no Accept-Encoding: not compressed"

# --- a real Prometheus with tls_config and basic_auth; one job with the wrong password ---
pport=$(free_port)
mkdir prom
cat >prom/prometheus.yml <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpumap
    scheme: https
    tls_config: {ca_file: $dir/ca.crt}
    basic_auth: {username: prometheus, password: "s3cret pw"}
    static_configs: [{targets: ["${tls_url#https://}"]}]
    metrics_path: /metrics
  - job_name: wrongpw
    scheme: https
    tls_config: {ca_file: $dir/ca.crt}
    basic_auth: {username: prometheus, password: "not it"}
    static_configs: [{targets: ["${tls_url#https://}"]}]
YML
sed -i 's#targets: \["\(.*\)/metrics"\]#targets: ["\1"]#' prom/prometheus.yml
prometheus --config.file=prom/prometheus.yml --storage.tsdb.path=prom/data --web.listen-address="127.0.0.1:$pport" \
  >prom/log 2>&1 &
pids+=($!)
targets() {
  curl -sf "http://127.0.0.1:$pport/api/v1/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin)["data"]["activeTargets"]:
    print(t["labels"]["job"], t["health"], t["lastError"])'
}
both_scraped() { targets >"$dir/targets" && grep -q '^gpumap up' "$dir/targets" && grep -q '^wrongpw down' "$dir/targets"; }
if wait_for 60 both_scraped; then
  pass "Prometheus scrapes over TLS with basic_auth: $(grep '^gpumap' "$dir/targets")"
  grep -q '^wrongpw down.*401' "$dir/targets" && pass "Prometheus with the wrong password: $(grep '^wrongpw' "$dir/targets")" ||
    fail "wrong password target" "$(cat "$dir/targets")"
else fail "Prometheus targets" "$(cat "$dir/targets"; tail -3 prom/log)"; fi
gpu_count() {
  curl -sf --get "http://127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=count(gpumap_gpu_info{job="gpumap"})' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])' 2>/dev/null
}
wait_for 15 test "$(gpu_count)" = 2   # the target is up once scraped; the sample is queryable a moment later
got=$(gpu_count)
[ "$got" = 2 ] && pass "Prometheus stored gpumap_gpu_info for 2 GPUs" || fail "count(gpumap_gpu_info) = '$got'"
kill "${pids[-1]}" 2>/dev/null

# --- client certificates: RequireAndVerifyClientCert ---
cat >mtls.yml <<YML
tls_server_config: {cert_file: server.crt, key_file: server.key, client_ca_file: ca.crt, client_auth_type: RequireAndVerifyClientCert}
YML
if start_serve mtls --simulate "$hostjson" --listen 127.0.0.1:0 --web.config.file "$dir/mtls.yml"; then
  curl -s -m 5 -o /dev/null --cacert ca.crt "$url" && fail "mTLS: served without a client certificate" ||
    pass "mTLS: no client certificate, no answer"
  code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' --cacert ca.crt --cert client.crt --key client.key "$url")
  [ "$code" = 200 ] && pass "mTLS: client certificate signed by client_ca_file: 200" || fail "mTLS with a client cert: $code"
  kill "$last"
fi

# --- bad web configs: exit 2, naming the key or file ---
printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suite: [x]\n' >typo.yml
out=$("$gpumap" serve --simulate "$hostjson" --listen 127.0.0.1:0 --web.config.file "$dir/typo.yml" 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"unknown key \`tls_server_config.cipher_suite\`"* ]] && pass "unknown key: exit 2 naming it" ||
  fail "unknown key: exit $rc" "$out"
printf 'tls_server_config: {cert_file: server.crt, key_file: ca.key}\n' >mismatch.yml
out=$("$gpumap" serve --simulate "$hostjson" --listen 127.0.0.1:0 --web.config.file "$dir/mismatch.yml" 2>&1); rc=$?
[ $rc = 2 ] && [[ $out == *"not the key of cert_file"* ]] && pass "key not matching the certificate: exit 2" || fail "mismatched key: exit $rc" "$out"

# --- 64 and 200 held connections (reopened when closed) do not keep scrapes out ---
# The holder speaks from 127.0.0.2, the scraper from 127.0.0.1: the guarantee is for a scraper on
# another address (docs/metrics.md).  From one shared address a scraper's new connection is one of
# the holder's to the server, and under load (curl slow to send its request past the 0.1 s grace)
# it was closed with them: 19 of 20 at load 9, a test that failed only under load (issue 45, item 7).
start_serve plain --simulate "$hostjson" --listen 127.0.0.1:0 --cache 0 && plain_pid=$last
plain_url=$url
port=${plain_url##*:}; port=${port%%/*}
# hold N PORT SECONDS: N connections that never send, each reopened when the server closes it;
# prints how many times the server closed one.
cat >hold.py <<'PY'
import selectors, socket, sys, time
n, port, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
sel = selectors.DefaultSelector()
def open_one():
    s = socket.socket(); s.setblocking(False)
    s.bind(("127.0.0.2", 0))
    try: s.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    sel.register(s, selectors.EVENT_READ)
for _ in range(n): open_one()
closed, end = 0, time.time() + secs
print("ready", flush=True)
while time.time() < end:
    for key, _ in sel.select(0.2):
        s = key.fileobj
        try: data = s.recv(4096)
        except OSError: data = b""
        if not data:
            sel.unregister(s); s.close(); closed += 1; open_one()
print("closed", closed, flush=True)
PY
for held in 64 200; do
  python3 hold.py $held "$port" 20 >"$dir/hold$held" 2>&1 &
  holder=$!; pids+=($holder)
  wait_for 10 grep -q ready "$dir/hold$held"
  sleep 1
  ok=0 codes=
  for i in $(seq 20); do
    code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$plain_url")
    [ "$code" = 200 ] && ok=$((ok + 1)) || codes+=" $code"
  done
  [ $ok = 20 ] && pass "$held held connections from another address: $ok of 20 scrapes answered" ||
    fail "$held held connections from another address: $ok of 20 scrapes answered (the others:$codes)"
  kill $holder 2>/dev/null; wait $holder 2>/dev/null
done
kill "$plain_pid"

# --- 503 past --web.max-requests: two scrapes wait for a hung driver, the third is refused ---
python3 - "$hostjson" >hung.json <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
h["faults"] = [{"call": "nvmlDeviceGetCount", "after": 1, "hang": True}]
print(json.dumps(h))
PY
GPUMAP_DRIVER_TIMEOUT=30 start_serve hung --simulate "$dir/hung.json" --listen 127.0.0.1:0 --cache 0 --web.max-requests 2 &&
  hung_pid=$last
wait_for 10 curl -sf "${url%/metrics}/healthz"   # the first read (good)
curl -s -m 20 -o /dev/null "$url" & w1=$!; pids+=($w1)
curl -s -m 20 -o /dev/null "$url" & w2=$!; pids+=($w2)
# Until serve has read both requests (two connections on its port, nothing left unread), not a
# fixed second: on a loaded machine the two curls may take longer to get there.
hport=${url##*:}; hport=${hport%%/*}
read_both() { [ "$(ss -Htn state established "( sport = :$hport )" | awk '$1 == 0' | wc -l)" -ge 2 ]; }
wait_for 20 read_both || fail "the two waiting scrapes never reached serve" "$(ss -tn)"
resp=$(curl -s -m 5 -w '\n%{http_code}' "$url")
[ "$(tail -1 <<<"$resp")" = 503 ] && pass "third request with 2 waiting and --web.max-requests 2: 503 ($(head -1 <<<"$resp"))" ||
  fail "third request answered $(tail -1 <<<"$resp")"
# The scraper's own deadline: answered (stale) within X-Prometheus-Scrape-Timeout-Seconds, long before
# the driver's 30 s timeout (the bound is that, not a time a loaded machine could miss).
kill $w1 $w2 2>/dev/null; wait $w1 $w2 2>/dev/null
start=$SECONDS
body=$(curl -s -m 20 -H 'X-Prometheus-Scrape-Timeout-Seconds: 2' "$url"); took=$((SECONDS - start))
[ $took -lt 20 ] && grep -q '^gpumap_exporter_stale 1$' <<<"$body" && grep -q '^gpumap_gpu_info' <<<"$body" &&
  pass "X-Prometheus-Scrape-Timeout-Seconds 2 with a hung driver: stale frame after ${took} s" ||
  fail "scrape timeout header: ${took} s" "$(grep gpumap_exporter <<<"$body")"
kill -TERM "$hung_pid"; wait "$hung_pid"; rc=$?
[ $rc = 0 ] && pass "serve with a hung read stops on SIGTERM" || fail "hung serve exit $rc"

# --- out of descriptors: ulimit -n 16 and 20 idle clients; serve backs off, does not spin ---
(ulimit -n 16; exec "$gpumap" serve --simulate "$hostjson" --listen 127.0.0.1:0) >"$dir/fd.out" 2>"$dir/fd.err" &
fd_pid=$!; pids+=($fd_pid)
if wait_for 15 grep -q 'listening on' "$dir/fd.out"; then
  furl=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$dir/fd.out"); fport=${furl##*:}; fport=${fport%%/*}
  python3 hold.py 20 "$fport" 12 >"$dir/holdfd" 2>&1 &
  holder=$!; pids+=($holder)
  wait_for 10 grep -q ready "$dir/holdfd"
  sleep 1
  ticks() { awk '{print $14 + $15}' "/proc/$fd_pid/stat"; }
  t0=$(ticks); w0=$(date +%s%N)
  sleep 4
  t1=$(ticks); w1=$(date +%s%N)
  hz=$(getconf CLK_TCK)
  pct=$(( (t1 - t0) * 100 * 1000000000 / hz / (w1 - w0) ))
  [ $pct -lt 30 ] && pass "ulimit -n 16, 20 idle clients: serve used ${pct}% of one CPU over 4 s" ||
    fail "ulimit -n 16, 20 idle clients: serve used ${pct}% CPU (spinning)"
  ok=0
  for i in 1 2 3 4 5; do [ "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$furl")" = 200 ] && ok=$((ok + 1)); done
  [ $ok -ge 4 ] && pass "ulimit -n 16, 20 idle clients: $ok of 5 scrapes answered" || fail "out of descriptors: $ok of 5 scrapes"
  kill $holder 2>/dev/null
else fail "serve under ulimit -n 16 did not start" "$(cat "$dir/fd.err")"; fi
kill $fd_pid 2>/dev/null

# --- slow readers (issue 56 item 11): 64 connections that ask for a 2.9 MB answer (plain) and
# read a byte a second hold one frame between them, not a copy each, and at most 64+16 KiB of
# socket buffers each (a copy each and autotuned 4 MiB send buffers were 175 MiB of the kernel's) ---
python3 - "$hostjson" >big.json <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
for g, gpu in enumerate(h["gpus"]):
    gpu["processes"] = [{"pid": 4_000_000 - g * 4000 - i, "used_memory_mib": 256} for i in range(4000)]
print(json.dumps(h))
PY
if start_serve slow --simulate "$dir/big.json" --listen 127.0.0.1:0 --cache 60; then
  slow_pid=$last; sport_=${url##*:}; sport_=${sport_%%/*}
  size=$(curl -s -m 60 "$url" | wc -c)
  rss0=$(awk '/^VmRSS/ {print $2}' "/proc/$slow_pid/status")
  python3 - "$sport_" 64 >"$dir/slow.log" 2>&1 <<'PY' &
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.socket()
    s.bind(("127.0.2.%d" % (2 + i // 16), 0))  # 16 an address: the per-address limit
    s.connect(("127.0.0.1", port)); s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); s.setblocking(False)
    socks.append(s)
print("ready", flush=True)
for _ in range(30):
    for s in socks:
        try: s.recv(1)
        except OSError: pass
    time.sleep(1)
PY
  readers=$!; pids+=($readers)
  wait_for 20 grep -q ready "$dir/slow.log"
  sleep 4
  rss1=$(awk '/^VmRSS/ {print $2}' "/proc/$slow_pid/status")
  open=$(ss -tnH state established "( sport = :$sport_ )" | wc -l)
  kib=$(ss -tmnH "( sport = :$sport_ )" | grep -o 'skmem:([^)]*)' |
    awk -F'[(),]' '{for (i = 2; i <= NF; i++) if ($i ~ /^[wr][0-9]/) t += substr($i, 2)} END {printf "%d", t / 1024}')
  grown=$(( (rss1 - rss0) / 1024 ))
  if [ "$size" -gt 2000000 ] && [ "$open" -ge 60 ] && [ "$kib" -lt 16384 ] && [ $grown -lt 40 ]; then
    pass "64 slow readers of a $size-byte answer: $open held, serve's RSS +$grown MiB, sockets $kib KiB"
  else fail "64 slow readers of a $size-byte answer: $open held, RSS +$grown MiB, sockets $kib KiB" "$(cat "$dir/slow.log")"; fi
  kill $readers 2>/dev/null; wait $readers 2>/dev/null
  kill "$slow_pid"
fi

# --- systemd socket activation ---
sport=$(free_port)
systemd-socket-activate -l "127.0.0.1:$sport" "$gpumap" serve --simulate "$hostjson" >"$dir/sa.out" 2>"$dir/sa.err" &
sa=$!; pids+=($sa)
if wait_for 15 curl -sf -o "$dir/sa.prom" "http://127.0.0.1:$sport/metrics" && grep -q '^gpumap_gpu_info' "$dir/sa.prom"; then
  pass "socket activation: served on the socket systemd-socket-activate passed ($(head -1 "$dir/sa.out"))"
else fail "socket activation" "$(cat "$dir/sa.out" "$dir/sa.err")"; fi
kill $sa 2>/dev/null; wait $sa 2>/dev/null
sport=$(free_port)
systemd-socket-activate -l "127.0.0.1:$sport" "$gpumap" serve --simulate "$hostjson" --listen 127.0.0.1:0 >"$dir/sa2.out" 2>"$dir/sa2.err" &
sa=$!; pids+=($sa)
wait_for 10 grep -q 'Listening on' "$dir/sa2.out" "$dir/sa2.err"   # the socket first, then the connection
curl -s -m 5 -o /dev/null "http://127.0.0.1:$sport/metrics"   # the first connection starts it
wait_for 10 grep -q 'LISTEN_FDS' "$dir/sa2.err" && pass "socket activation with --listen: refused ($(grep -o 'error:.*' "$dir/sa2.err" | head -1))" ||
  fail "socket activation with --listen" "$(cat "$dir/sa2.out" "$dir/sa2.err")"
kill $sa 2>/dev/null; wait $sa 2>/dev/null

# --- a hung cuInit on a mixed host (defect 7): NVML's data is served, CUDA's marked unknown ---
mixed=$(dirname "$gpumap")/hosts/seed-mixed.json
python3 - "$mixed" >cuhang.json <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
h["faults"] = [{"call": "cuInit", "hang": True}]
print(json.dumps(h))
PY
export GPUMAP_CACHE_DIR=$dir/cache-cuhang
start=$SECONDS
GPUMAP_DRIVER_TIMEOUT=2 "$gpumap" metrics --simulate "$dir/cuhang.json" >"$dir/cu.prom" 2>"$dir/cu.err"; rc=$?
took=$((SECONDS - start))
if [ $rc = 0 ] && grep -q '^gpumap_gpu_info' "$dir/cu.prom" && grep -q '^gpumap_exporter_cuda_up 0$' "$dir/cu.prom" &&
   grep -q '^gpumap_exporter_up 1$' "$dir/cu.prom" && promtool check metrics <"$dir/cu.prom" >/dev/null 2>&1; then
  pass "metrics with a hung cuInit: GPUs served, gpumap_exporter_cuda_up 0, exit 0 in ${took} s"
else fail "metrics with a hung cuInit: exit $rc" "$(grep -v '^#' "$dir/cu.prom" | head -5; cat "$dir/cu.err")"; fi
GPUMAP_DRIVER_TIMEOUT=4 start_serve cuhang --simulate "$dir/cuhang.json" --listen 127.0.0.1:0 && cu_pid=$last
start=$SECONDS
body=$(curl -s -m 15 "$url"); took=$((SECONDS - start))
grep -q '^gpumap_gpu_info' <<<"$body" && grep -q '^gpumap_exporter_cuda_up 0$' <<<"$body" &&
  grep -q '^gpumap_exporter_stale 0$' <<<"$body" &&
  pass "serve with a hung cuInit: first scrape has the GPUs after ${took} s, gpumap_exporter_cuda_up 0" ||
  fail "serve with a hung cuInit (${took} s)" "$(grep -v '^#' <<<"$body" | head -8)"
[ "$(curl -s -o /dev/null -w '%{http_code}' "${url%/metrics}/healthz")" = 200 ] && pass "/healthz 200 (NVML answers)" ||
  fail "/healthz with a hung cuInit"
kill -TERM "$cu_pid"; wait "$cu_pid"; rc=$?
[ $rc = 0 ] && pass "serve stops on SIGTERM" || fail "serve exit $rc"
exit $failed
