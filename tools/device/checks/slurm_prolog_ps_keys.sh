#!/usr/bin/env bash
# Issue 10 on the real GPU host: (1) can a real Slurm run here at all (what is missing, said
# precisely; nothing is installed or started when it cannot), (2) the TaskProlog and
# `gpumap map --line` against the real driver, (3) `gpumap ps --json`'s new keys (host, gpus with
# minor numbers) against the real driver.  Needs the carried build/gpumap; writes $OUT/issue10.log.
set -u
G=${GPUMAP:-build/gpumap}
OUT=${OUT:-/tmp/issue10-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/issue10.log") 2>&1
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
info() { echo "INFO $*"; }

echo "== host"; date -u; uname -r; nvidia-smi -L
[ -x "$G" ] || { echo "FAIL no $G (carry the build folder)"; exit 1; }

echo "== 1. can Slurm run here?"
missing=
for b in munged slurmctld slurmd srun scontrol; do
  if command -v "$b" >/dev/null; then info "$b: $(command -v "$b")"; else missing+=" $b"; fi
done
[ -z "$missing" ] || info "not installed:$missing (Debian 12's slurm 22.05 .debs are not carried: they need libmunge2, libslurm37's plugins at their compiled-in path and a munge user)"
command -v apt-get >/dev/null && info "apt-get present (no network on this host: it cannot download)" || info "no apt-get"
info "uid $(id -u)"
info "cgroup filesystem: $(stat -fc %T /sys/fs/cgroup) ($( [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && echo 'v2 only: the tests/slurm cgroup configuration (cgroup/v1) cannot run; Slurm 22.05 would need cgroup/v2 with systemd/dbus' || echo 'v1 controllers present'))"
for f in /proc/driver/nvidia/gpus/*/information; do
  [ -r "$f" ] && info "$(dirname "$f" | xargs basename): $(grep -E 'Device Minor' "$f" | tr -s ' ')"
done
ls -l /dev/nvidia[0-9]* 2>/dev/null | sed 's/^/INFO /'
if [ -z "$missing" ] && [ "$(id -u)" = 0 ]; then
  info "Slurm is installed: running tests/slurm/slurm_test.sh (simulated driver inside the jobs)"
  bash tests/slurm/slurm_test.sh "$G" plain || fail "tests/slurm/slurm_test.sh"
else
  info "RESULT: Slurm daemons cannot run on this host (missing:${missing:- none}; uid $(id -u)); the real-Slurm tests run in CI"
fi

echo "== 2. TaskProlog and map --line with the real driver"
uuid1=$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader | awk -F', ' '$1==1{print $2}')
out=$(env -u CUDA_DEVICE_ORDER PATH="$(dirname "$(readlink -f "$G")"):$PATH" SLURM_PROCID=3 SLURMD_NODENAME=devhost \
  CUDA_VISIBLE_DEVICES=1 sh contrib/slurm/gpumap-taskprolog; echo "exit $?")
echo "$out"
if grep -qx 'export CUDA_DEVICE_ORDER=PCI_BUS_ID' <<<"$out" &&
   grep -qx "print gpumap: rank 3 on devhost: cuda:0 = nvidia-smi 1 $uuid1; 0 finding(s)" <<<"$out" &&
   grep -qx 'exit 0' <<<"$out"; then
  pass "TaskProlog line: cuda:0 = nvidia-smi 1 $uuid1"
else fail "TaskProlog line (want cuda:0 = nvidia-smi 1 $uuid1)"; fi
out=$(env -u CUDA_DEVICE_ORDER PATH=/usr/bin:/bin SLURM_PROCID=0 sh contrib/slurm/gpumap-taskprolog; echo "exit $?")
if [ "$out" = "$(printf 'export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexit 0')" ]; then pass "TaskProlog without gpumap: only the export, exit 0"
else fail "TaskProlog without gpumap"; echo "$out"; fi

echo "== 3. ps --json keys with the real driver"
out=$("$G" ps --json)
echo "$out" | head -c 600; echo
if python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["host"]; assert all(g["minor_number"] is not None for g in d["gpus"]); print(len(d["gpus"]), "GPUs with minor numbers")' "$out"; then
  pass "ps --json has host and each GPU's minor number"
else fail "ps --json host/gpus"; fi

echo "== done: $fails failure(s)"
[ $fails = 0 ]
