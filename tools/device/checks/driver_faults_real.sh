#!/usr/bin/env bash
# Issue 12 on the real GPU host: what the simulated driver cannot show.  Run from the repo root
# with the carried build/ (GPUMAP=... to use another binary).  Prints one PASS/FAIL line per
# check and exits 1 if any failed.  Needs no GPU memory: gpumap never creates a CUDA context.
#
#   1. the NVML reader survives the real driver: list / map / ps --json are valid JSON, exit 0
#   2. the hung-driver bound does not fire on a healthy driver (GPUMAP_DRIVER_TIMEOUT=5 and the
#      default), and list takes well under it
#   3. the CUDA probe answers on its own channel: map --probe sees exactly nvidia-smi's GPU count
#   4. a lease outlives `kill -9` of gpumap while the job runs (`sh -c 'sleep & wait'`), and is
#      free once the job's last process exits; signals reach the whole job
set -u
G=${GPUMAP:-build/gpumap}
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
valid_json() { python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null; }
alive() { s=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ]; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export GPUMAP_LOCK_DIR=$T/locks GPUMAP_CACHE_DIR=$T/cache

echo "== $(date -u +%FT%TZ) $(hostname) $("$G" --version)"
n_smi=$(nvidia-smi -L | grep -c '^GPU ')

for cmd in "list --json" "map --json" "ps --json"; do
  out=$($G $cmd 2>"$T/err"); rc=$?
  if [ $rc = 0 ] && printf '%s' "$out" | valid_json; then pass "1 $cmd: exit 0, valid JSON"
  else fail "1 $cmd: exit $rc, $(head -c 300 "$T/err")"; fi
done
n_list=$($G list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"]))')
[ "$n_list" = "$n_smi" ] && pass "1 list shows $n_list GPUs like nvidia-smi" || fail "1 list shows $n_list GPUs, nvidia-smi $n_smi"
notes=$($G list --json | python3 -c 'import json,sys; print(sum(len(g["notes"]) for g in json.load(sys.stdin)["gpus"]))')
[ "$notes" = 0 ] && pass "1 no driver notes on a healthy host" || fail "1 $notes driver notes: $($G list | grep '^note')"

start=$(date +%s%N)
GPUMAP_DRIVER_TIMEOUT=5 $G list >/dev/null 2>"$T/err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 0 ] && pass "2 GPUMAP_DRIVER_TIMEOUT=5: list exit 0 in $ms ms" || fail "2 GPUMAP_DRIVER_TIMEOUT=5: exit $rc $(cat "$T/err")"
$G list >/dev/null 2>"$T/err" && pass "2 default bound: list exit 0" || fail "2 default bound: $(cat "$T/err")"

out=$($G map --probe --json 2>"$T/err"); rc=$?
n_cuda=$(printf '%s' "$out" | python3 -c 'import json,sys; c=json.load(sys.stdin)["cuda"]; print(c["source"], len(c["devices"]))' 2>/dev/null)
[ $rc = 0 ] && [ "$n_cuda" = "driver $n_smi" ] && pass "3 map --probe: the driver answered, $n_smi devices" \
  || fail "3 map --probe: exit $rc, got '$n_cuda', want 'driver $n_smi': $(head -c 300 "$T/err")"

$G run --gpus 1 --cvd-form uuid -- sh -c "sleep 60 & echo \$! > $T/worker; echo \$\$ > $T/job; wait" 2>"$T/run.err" &
g=$!
for i in $(seq 200); do [ -s "$T/worker" ] && [ -s "$T/job" ] && break; sleep 0.05; done
uuid=$(grep -o 'CUDA_VISIBLE_DEVICES=GPU-[0-9a-f-]*' "$T/run.err" | head -1 | cut -d= -f2)
[ -n "$uuid" ] || fail "4 run did not say which GPU it leased: $(cat "$T/run.err")"
kill -KILL $g; wait $g 2>/dev/null
sleep 0.5
alive "$(cat "$T/worker")" && pass "4 after kill -9 of gpumap the job's worker still runs" || fail "4 the worker died with gpumap"
$G run --include "$uuid" -- true 2>"$T/err"; rc=$?
[ $rc = 6 ] && pass "4 $uuid stays leased while the job runs (exit 6)" || fail "4 $uuid was leased again (exit $rc)"
$G list | grep -q "job $(cat "$T/job") (" && pass "4 list names the job" || fail "4 list: $($G list | tail -n +2)"
kill -KILL "$(cat "$T/worker")"
$G run --include "$uuid" --wait 5 -- true 2>"$T/err"; rc=$?
[ $rc = 0 ] && pass "4 free again once the job's last process exited" || fail "4 still leased: exit $rc $(cat "$T/err")"

rm -f "$T/worker"
$G run --gpus 1 --cvd-form uuid -- sh -c "sleep 60 & echo \$! > $T/worker; wait" 2>/dev/null &
g=$!
for i in $(seq 200); do [ -s "$T/worker" ] && break; sleep 0.05; done
kill -TERM $g; wait $g; rc=$?
sleep 0.3
! alive "$(cat "$T/worker")" && [ $rc = 143 ] && pass "4 SIGTERM to gpumap ended the whole job (exit 143)" \
  || { fail "4 SIGTERM: exit $rc, worker alive=$(alive "$(cat "$T/worker")" && echo yes || echo no)"; kill -KILL "$(cat "$T/worker")" 2>/dev/null; }

echo "== $fails failed"
[ $fails = 0 ]
