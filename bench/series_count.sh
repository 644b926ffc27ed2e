#!/usr/bin/env bash
# What `gpumap metrics` (the series `gpumap serve` answers) costs a Prometheus per node: series per
# family, the largest label count of a series, and what a restarted job adds (new PIDs are new
# series: the churn), on a simulated eight-GPU host (dgx8) with 0, 64 and 1000 real sleeping GPU
# processes (each with torchrun-like rank variables and a Slurm job id, spread over the GPUs).
# Extra arguments go to `gpumap metrics` (to see what a flag saves: bench/series_count.sh build --X).
# A benchmark program: it prints numbers and asserts nothing.
# usage: bench/series_count.sh [BUILD_DIR] [METRICS_FLAGS...]
set -euo pipefail
. "$(dirname "$0")/ps_host.sh"  # spread_host
build=$(cd "${1:-build}" && pwd)
shift || true
work=$(mktemp -d /tmp/gpumap-series-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export GPUMAP_CACHE_DIR=$work/cache GPUMAP_LOCK_DIR=$work/locks GPUMAP_IN_CONTAINER=0

# start N: N sleeping processes in jobs of eight torchrun ranks (job $job + i / 8, LOCAL_RANK
# i % 8 on GPU i % 8, all GPUs visible as torchrun leaves them)
start() {
  local n=$1 i
  for ((i = 0; i < n; i++)); do
    env -i PATH=/bin LOCAL_RANK=$((i % 8)) RANK=$((i % 8)) WORLD_SIZE=8 LOCAL_WORLD_SIZE=8 \
      SLURM_JOB_ID=$((job + i / 8)) TORCHELASTIC_RUN_ID="run$((job + i / 8))" /bin/sleep 600 &
    pids+=($!)
  done
}
# scrape: one exposition of the host with the processes now running, into $1
scrape() {
  local name=$1
  shift
  spread_host "$build/hosts/dgx8.json" "$work/host.json" "${pids[@]}"
  "$build/gpumap" metrics --simulate "$work/host.json" "$@" >"$work/$name.prom"
}
count() {  # count FILE: "families series max_labels" and per-family series on stderr
  python3 - "$1" <<'PY'
import collections, re, sys
fam, maxl = collections.Counter(), 0
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
    fam[name] += 1
    maxl = max(maxl, len(re.findall(r'[a-z_]+="', line)))
print(len(fam), sum(fam.values()), maxl)
for k, v in fam.most_common(8):
    print(f"      {k}: {v}", file=sys.stderr)
PY
}

flags=("$@")
printf '%-34s %9s %8s %11s\n' "dgx8 (8 GPUs), gpumap metrics ${flags[*]}" families series "max labels"
job=1000
for n in 0 64 1000; do
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  pids=()
  start "$n"
  sleep 0.5
  scrape "n$n" ${flags[@]+"${flags[@]}"}
  read -r f s l < <(count "$work/n$n.prom" 2>"$work/n$n.top")
  printf '%-34s %9s %8s %11s\n' "$n processes" "$f" "$s" "$l"
  [ "$n" = 64 ] && cat "$work/n64.top"
  if [ "$n" = 64 ]; then
    # The job restarted: the same ranks with new PIDs.  Series new to Prometheus = the churn.
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    pids=()
    job=5000
    start 64
    sleep 0.5
    scrape "n64b" ${flags[@]+"${flags[@]}"}
    new=$(comm -13 <(sed 's/ [^ ]*$//' "$work/n64.prom" | grep -v '^#' | sort) <(sed 's/ [^ ]*$//' "$work/n64b.prom" | grep -v '^#' | sort) | wc -l)
    printf '%-34s %9s %8s\n' "64, job restarted: new series" "" "$new"
  fi
done
