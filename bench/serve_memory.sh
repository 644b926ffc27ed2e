#!/usr/bin/env bash
# serve's memory under slow readers (issue 56 item 11; docs/metrics.md, "Memory under slow
# readers"): a simulated 8-GPU host of TOTAL processes (bench/ps_host.sh; its /metrics answer is A
# bytes), then for each N in READERS: N connections from 127.0.0.2.. (their own addresses, 16 per
# address) that ask for /metrics (gzip or plain, as GZIP says) and read 1 byte a second, while a
# scraper on 127.0.0.1 scrapes every second; after HOLD seconds, serve's VmRSS and VmHWM, and the
# kernel's socket memory for its connections (ss: the bytes queued to send and received).  Prints
# figures; asserts nothing.  --web.max-connections and --web.max-requests are raised to READERS'
# largest + 8, so every reader is held (the defaults, 64 and 40, close or refuse the rest: the
# model's N is the connections held).
#   usage: bench/serve_memory.sh [BUILD_DIR] [TOTAL] [READERS...]   (env: GZIP=1|0, HOLD=s, CACHE=s)
set -euo pipefail
BUILD=${1:-build}; TOTAL=${2:-5000}; shift 2 || true
READERS=("${@:-0 50 200}"); read -r -a READERS <<<"${READERS[*]}"
GPUMAP=$BUILD/gpumap; GZIP=${GZIP:-1}; HOLD=${HOLD:-6}; CACHE=${CACHE:-1}
[ -x "$GPUMAP" ] || { echo "no $GPUMAP: build it first" >&2; exit 2; }
tmp=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
source "$(dirname "$0")/ps_host.sh"
export GPUMAP_CACHE_DIR=$tmp/cache GPUMAP_LOCK_DIR=$tmp/locks
bench_host "$tmp" "$TOTAL" 0
max=0; for n in "${READERS[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
"$GPUMAP" serve --simulate "$tmp/host.json" --listen 127.0.0.1:0 --cache "$CACHE" \
  --web.max-connections $((max + 8)) --web.max-requests $((max + 8)) >"$tmp/serve.out" 2>&1 &
spid=$!; pids+=($spid)
for _ in $(seq 100); do grep -q 'listening on' "$tmp/serve.out" && break; sleep 0.1; done
url=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$tmp/serve.out"); port=${url##*:}; port=${port%%/*}
plain=$(curl -s "$url" | wc -c); zipped=$(curl -s -H 'Accept-Encoding: gzip' "$url" | wc -c)
status() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
# The kernel's memory for serve's sockets, open or closed with bytes still to send (orphans,
# which the memory cgroup still counts): send queues (w) and receive queues (r), KiB.
sockets_kib() {
  ss -tmnH "( sport = :$port )" | grep -o 'skmem:([^)]*)' |
    awk -F'[(),]' '{for (i = 2; i <= NF; i++) {if ($i ~ /^w[0-9]/) w += substr($i, 2); if ($i ~ /^r[0-9]/) r += substr($i, 2)}}
                   END {printf "%d", (w + r) / 1024}'
}
echo "8 GPUs, $TOTAL processes: /metrics is $plain bytes plain, $zipped gzip; readers ask $([ "$GZIP" = 1 ] && echo gzip || echo plain); --cache $CACHE"
for _ in 1 2 3; do curl -s -o /dev/null -H 'Accept-Encoding: gzip' "$url"; done
echo "idle after 3 scrapes: VmRSS $(status $spid VmRSS) KiB"
printf '%8s %12s %12s %14s\n' readers "VmRSS KiB" "VmHWM KiB" "sockets KiB"
for n in "${READERS[@]}"; do
  python3 - "$port" "$n" 600 "$GZIP" >"$tmp/readers.log" 2>&1 <<'PY' &
import socket, sys, time
port, n, hold, gz = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + (b"Accept-Encoding: gzip\r\n" if gz else b"") + b"\r\n"
socks = []
for i in range(n):
    s = socket.socket()
    s.bind(("127.0.%d.%d" % (2 + i // 16 // 250, 2 + (i // 16) % 250), 0))  # 16 a address: the per-address limit
    s.connect(("127.0.0.1", port)); s.sendall(req); s.setblocking(False); socks.append(s)
print("ready", flush=True)
end = time.time() + hold
while time.time() < end:
    for s in socks:
        try: s.recv(1)
        except OSError: pass
    time.sleep(1)
PY
  rp=$!; pids+=($rp)
  for _ in $(seq 50); do grep -q ready "$tmp/readers.log" && break; sleep 0.2; done
  end=$((SECONDS + HOLD))  # a scrape a second meanwhile: new frames (--cache 1) while the readers hold older ones
  while [ $SECONDS -lt $end ]; do curl -s -o /dev/null -H 'Accept-Encoding: gzip' "$url"; sleep 1; done
  held=$(ss -tnH state established "( sport = :$port )" | wc -l); all=$(ss -tnH "( sport = :$port )" | wc -l)
  printf '%8s %12s %12s %14s %s\n' "$n" "$(status $spid VmRSS)" "$(status $spid VmHWM)" "$(sockets_kib)" "($held connections open, $all sockets)"
  kill "$rp" 2>/dev/null; wait "$rp" 2>/dev/null || true
  sleep 11  # the write timeout (10 s) closes what they left
done
