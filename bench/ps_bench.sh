#!/usr/bin/env bash
# Times `gpumap ps --json` on a simulated 8-GPU host whose process lists hold 10 000 entries:
# REAL live `sleep` processes (default 400, with 4 different CUDA_VISIBLE_DEVICES/CUDA_DEVICE_ORDER
# settings, so /proc/PID/environ is really read and resolved) and the rest made-up pids that show
# as exited.  Prints the median and best of RUNS runs.  Target: <= 200 ms on 2 cores.
#   usage: bench/ps_bench.sh [BUILD_DIR] [TOTAL] [REAL] [RUNS]   (KEEP=1: leave the host file and sleepers)
set -euo pipefail
BUILD=${1:-build-h5}; TOTAL=${2:-10000}; REAL=${3:-400}; RUNS=${4:-10}
GPUMAP=$BUILD/gpumap
[ -x "$GPUMAP" ] || { echo "no $GPUMAP: build it first" >&2; exit 2; }
tmp=$(mktemp -d); pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
source "$(dirname "$0")/ps_host.sh"
bench_host "$tmp" "$TOTAL" "$REAL"
export GPUMAP_CACHE_DIR=$tmp/cache
n=$("$GPUMAP" ps --json --simulate "$tmp/host.json" | python3 -c 'import json,sys; j=json.load(sys.stdin); p=j["processes"]; print(len(p), sum(r["state"]=="running" for r in p))')
echo "rows, running: $n"
times=()
for ((r = 0; r < RUNS; r++)); do
  t0=$(date +%s%N); "$GPUMAP" ps --json --simulate "$tmp/host.json" > /dev/null; t1=$(date +%s%N)
  times+=($(( (t1 - t0) / 1000000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "gpumap ps --json, $TOTAL processes ($REAL live), $RUNS runs: median ${sorted[$((RUNS / 2))]} ms, best ${sorted[0]} ms (target <= 200 ms)"
