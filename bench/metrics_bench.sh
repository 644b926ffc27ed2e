#!/usr/bin/env bash
# Times one scrape of `gpumap serve` (and one `gpumap metrics`) on a simulated 8-GPU host with
# TOTAL processes (REAL live sleeps, bench/ps_host.sh), then the RSS of serve after 100 and after
# SCRAPES scrapes that each read the driver (--cache 0) on a host of RSS_TOTAL processes.
# Prints figures; asserts nothing (docs/metrics.md records them).  Targets (issue 24): one scrape
# <= 100 ms; RSS after 10 000 scrapes within 10 % of after 100.
#   usage: bench/metrics_bench.sh [BUILD_DIR] [TOTAL] [REAL] [RUNS] [SCRAPES] [RSS_TOTAL]   (RSS_ONLY=1: the RSS part only)
set -euo pipefail
BUILD=${1:-build}; TOTAL=${2:-10000}; REAL=${3:-400}; RUNS=${4:-10}; SCRAPES=${5:-10000}; RSS_TOTAL=${6:-400}
GPUMAP=$BUILD/gpumap
[ -x "$GPUMAP" ] || { echo "no $GPUMAP: build it first" >&2; exit 2; }
tmp=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
source "$(dirname "$0")/ps_host.sh"
export GPUMAP_CACHE_DIR=$tmp/cache GPUMAP_LOCK_DIR=$tmp/locks

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
serve() {  # serve HOST_FILE: starts gpumap serve --cache 0, sets $url
  "$GPUMAP" serve --simulate "$1" --listen 127.0.0.1:0 --cache 0 >"$tmp/serve.out" 2>&1 &
  spid=$!; pids+=($spid)
  for _ in $(seq 100); do grep -q 'listening on' "$tmp/serve.out" && break; sleep 0.1; done
  url=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$tmp/serve.out")
}
# scrape N: N scrapes in one client, prints each one's milliseconds.
scrape() {
  python3 - "$url" "$1" <<'PY'
import sys, time, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
for _ in range(n):
    t = time.perf_counter(); urllib.request.urlopen(url).read(); print("%.1f" % ((time.perf_counter() - t) * 1000))
PY
}
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

if [ -z "${RSS_ONLY:-}" ]; then  # RSS_ONLY=1: only the RSS part
bench_host "$tmp" "$TOTAL" "$REAL"
mv "$tmp/host.json" "$tmp/big.json"
series=$("$GPUMAP" metrics --simulate "$tmp/big.json" | grep -vc '^#')
times=()
for ((r = 0; r < RUNS; r++)); do
  t0=$(date +%s%N); "$GPUMAP" metrics --simulate "$tmp/big.json" >/dev/null; t1=$(date +%s%N)
  times+=($(( (t1 - t0) / 1000000 )))
done
echo "gpumap metrics (a process: start, read, render), 8 GPUs, $TOTAL processes ($REAL live), $series samples: median $(median "${times[@]}") ms of $RUNS"
serve "$tmp/big.json"
scrape 2 >/dev/null  # warm: the order cache, the fake's host file
ms=($(scrape "$RUNS"))
echo "one scrape of gpumap serve --cache 0 (a driver read each), same host: median $(median "${ms[@]}") ms of $RUNS (target <= 100 ms)"
kill "$spid"; wait "$spid" 2>/dev/null || true
fi

for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; pids=()
bench_host "$tmp" "$RSS_TOTAL" "$((RSS_TOTAL < 100 ? RSS_TOTAL : 100))"
serve "$tmp/host.json"
scrape 100 >/dev/null
r100=$(rss_kib "$spid")
scrape $((SCRAPES - 100)) >/dev/null
rN=$(rss_kib "$spid")
echo "RSS of gpumap serve --cache 0, 8 GPUs, $RSS_TOTAL processes: $r100 KiB after 100 scrapes, $rN KiB after $SCRAPES ($(awk -v a="$r100" -v b="$rN" 'BEGIN {printf "%+.1f", (b - a) * 100 / a}') %; target within 10 %)"
