#!/usr/bin/env bash
# What `gpumap metrics` (the series `gpumap serve` answers) costs a Prometheus per node, and what
# each series-budget flag saves: series, the exposition's size and the most labels on one series,
# on a simulated eight-GPU host (dgx8) with 0, 64 and 1000 real sleeping GPU processes (each with
# torchrun-like rank variables and a Slurm job id, spread over the GPUs), and what a restarted job
# adds (its 64 ranks with new PIDs are new series: the churn).  Each setting reads the same
# processes.  With METRICS_FLAGS, only the default and that one setting; with --top, the eight
# largest families of the default at 64 processes too.
# A benchmark program: it prints numbers and asserts nothing.
# usage: bench/series_count.sh [BUILD_DIR] [--top] [METRICS_FLAGS...]
set -euo pipefail
. "$(dirname "$0")/ps_host.sh"  # spread_host
build=$(cd "${1:-build}" && pwd)
shift || true
top=0
if [ "${1:-}" = --top ]; then top=1; shift; fi
work=$(mktemp -d /tmp/gpumap-series-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export GPUMAP_CACHE_DIR=$work/cache GPUMAP_LOCK_DIR=$work/locks GPUMAP_IN_CONTAINER=0

settings=("")
if [ $# -gt 0 ]; then
  settings+=("$*")
else
  settings+=("--process-series info" "--process-series none" "--finding-severity warning"
             "--drop-process-label command,user" "--max-processes 64"
             "--process-series info --finding-severity warning")
fi

# start N: N sleeping processes in jobs of eight torchrun ranks (job $job + i / 8, LOCAL_RANK
# i % 8 on GPU i % 8, all GPUs visible as torchrun leaves them)
start() {
  local n=$1 i
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  pids=()
  for ((i = 0; i < n; i++)); do
    env -i PATH=/bin LOCAL_RANK=$((i % 8)) RANK=$((i % 8)) WORLD_SIZE=8 LOCAL_WORLD_SIZE=8 \
      SLURM_JOB_ID=$((job + i / 8)) TORCHELASTIC_RUN_ID="run$((job + i / 8))" /bin/sleep 600 &
    pids+=($!)
  done
  sleep 0.5
  spread_host "$build/hosts/dgx8.json" "$work/host.json" "${pids[@]}"
}
# scrape NAME SETTING: one exposition of the host with the processes now running, into $work/NAME.prom
scrape() {
  # shellcheck disable=SC2086  # a setting is words
  "$build/gpumap" metrics --simulate "$work/host.json" $2 >"$work/$1.prom"
}
count() {  # count FILE: "series bytes max_labels"; with TOP=1 the largest families on stderr
  python3 - "$1" <<'PY'
import collections, os, re, sys
fam, maxl = collections.Counter(), 0
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
    fam[name] += 1
    maxl = max(maxl, len(re.findall(r'[a-z_]+="', line)))
print(sum(fam.values()), os.path.getsize(sys.argv[1]), maxl)
for k, v in fam.most_common(8):
    print(f"      {k}: {v}", file=sys.stderr)
PY
}
new_series() {  # new_series BEFORE AFTER: series in AFTER that BEFORE did not have
  comm -13 <(sed 's/ [^ ]*$//' "$1" | grep -v '^#' | sort) <(sed 's/ [^ ]*$//' "$2" | grep -v '^#' | sort) | wc -l
}

job=1000
for n in 0 64 1000; do
  start "$n"
  for i in "${!settings[@]}"; do scrape "s$i-n$n" "${settings[i]}"; done
  if [ "$n" = 64 ]; then
    # The jobs restarted: the same ranks with new PIDs.  Series new to Prometheus = the churn.
    job=5000
    start 64
    for i in "${!settings[@]}"; do scrape "s$i-n64b" "${settings[i]}"; done
    job=1000
  fi
done

printf '%-50s %8s %8s %8s %9s %11s %10s\n' "dgx8 (8 GPUs), gpumap metrics ..." "0 proc" "64 proc" "1000" "64 churn" "1000: bytes" "max labels"
for i in "${!settings[@]}"; do
  read -r s0 _ _ < <(count "$work/s$i-n0.prom" 2>/dev/null)
  read -r s64 _ l64 < <(count "$work/s$i-n64.prom" 2>/dev/null)
  read -r s1000 b1000 l1000 < <(count "$work/s$i-n1000.prom" 2>/dev/null)
  churn=$(new_series "$work/s$i-n64.prom" "$work/s$i-n64b.prom")
  printf '%-50s %8s %8s %8s %9s %11s %10s\n' "${settings[i]:-(default)}" "$s0" "$s64" "$s1000" "$churn" "$b1000" \
    "$((l64 > l1000 ? l64 : l1000))"
done
if [ $top = 1 ]; then
  echo "the default's largest families, 64 processes:"
  count "$work/s0-n64.prom" 2>&1 >/dev/null
fi
