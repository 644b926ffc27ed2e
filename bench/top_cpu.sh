#!/usr/bin/env bash
# CPU use of `gpumap top` left open: a simulated 8-GPU host (dgx8) with 200 real GPU processes
# (sleeping, each with its own environment), `top` in a tmux terminal at 132x40 reading every
# SECONDS (default 1) for DURATION seconds (default 20).  Prints top's CPU time as a share of one
# core, beside `gpumap ps --watch` over the same time (the same reads, printed as text frames).
# top's frame includes each process's CPU %, RSS and run time (its /proc/PID/stat, already read
# for the process cache, and /proc/uptime once a frame); `--sort cpu` adds sorting by one of them.
# usage: bench/top_cpu.sh [BUILD_DIR] [DURATION] [SECONDS]
set -euo pipefail
. "$(dirname "$0")/ps_host.sh"  # spread_host
build=$(cd "${1:-build}" && pwd)
duration=${2:-20}
interval=${3:-1}
work=$(mktemp -d /tmp/gpumap-topbench-XXXXXX)
pids=()
cleanup() {
  tmux -S "$work/s" kill-server 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for i in $(seq 0 199); do
  env -i PATH=/bin CUDA_VISIBLE_DEVICES=$((i % 8)) LOCAL_RANK=$((i % 8)) SLURM_JOB_ID=$((1000 + i / 8)) /bin/sleep 600 &
  pids+=($!)
done
sleep 0.5
spread_host "$(dirname "$0")/../hosts/dgx8.json" "$work/host.json" "${pids[@]}"
ticks=$(getconf CLK_TCK)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() {  # $1: name; the rest: the command, run in a tmux terminal
  local name=$1
  shift
  tmux -S "$work/s" -f /dev/null new-session -d -x 132 -y 40 -- env -i PATH=/usr/bin:/bin TERM=xterm-256color LANG=C.UTF-8 "$@"
  sleep 2  # start-up and the first reads are not what "left open" costs
  local sh pid before after
  pid=$(tmux -S "$work/s" display-message -p '#{pane_pid}')
  before=$(cpu_of "$pid")
  sleep "$duration"
  after=$(cpu_of "$pid")
  tmux -S "$work/s" kill-server
  python3 -c "print('%-28s %6.2f%% of one core' % ('$name', 100.0 * ($after - $before) / $ticks / $duration))"
}
echo "dgx8, 200 GPU processes, every ${interval}s, over ${duration}s:"
measure "gpumap top" "$build/gpumap" top --simulate "$work/host.json" --interval "$interval"
measure "gpumap top --sort cpu" "$build/gpumap" top --simulate "$work/host.json" --interval "$interval" --sort cpu
measure "gpumap ps --watch" "$build/gpumap" ps --simulate "$work/host.json" --watch "$interval"
