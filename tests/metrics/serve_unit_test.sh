#!/usr/bin/env bash
# contrib/systemd/gpumap-serve.service reads other users' process environments: `gpumap serve`
# started with exactly the unit's user and capabilities finds another user's GPU process's cuda:N,
# Slurm job, rank and its rank-on-wrong-gpu finding; without the capabilities, or with only one of
# them, it finds none of these (the controls that let the test fail).
#
# What is taken from the unit file itself (so the test follows the unit): User= (with DynamicUser=yes
# and no such user here, a free uid of systemd's dynamic range 61184-65519, no supplementary group,
# as systemd allocates it), AmbientCapabilities= (inheritable and ambient), CapabilityBoundingSet=,
# NoNewPrivileges=, ReadOnlyPaths= (bind-mounted read-only in a private mount namespace).  Applied
# with unshare(1) and setpriv(1) as root; systemd itself cannot start it here (PID 1 is not systemd).
# Not applied: the seccomp filter (SystemCallFilter=), ProtectSystem=, ProtectHome=,
# InaccessiblePaths=, DeviceAllow=; `systemd-analyze verify` checks that every directive parses.
# The other user's process is a real `sleep` run as nobody (65534), listed as a GPU process of a
# simulated host (its CUDA_VISIBLE_DEVICES=1,0 makes GPU 1 its cuda:0; LOCAL_RANK=1 names cuda:1).
#
# usage: tests/metrics/serve_unit_test.sh GPUMAP_BINARY
# Prints PASS/FAIL lines; exit 0 when all passed, 1 on a failure, 2 when a tool is missing, 77 when
# not run as root (skipped: it must change users).
set -uo pipefail
. "$(dirname "$0")/harness.sh" "${1:-}" setpriv unshare capsh curl python3
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (setpriv --reuid, mount namespace)"; exit 77; }
unit=$(cd "$(dirname "$0")/../.." && pwd)/contrib/systemd/gpumap-serve.service

# --- the unit's lines ---
key() { sed -n "s/^$1=//p" "$unit" | tail -n1; }   # the last assignment wins, as in systemd
user=$(key User) dynamic=$(key DynamicUser) ambient=$(key AmbientCapabilities)
bounding=$(key CapabilityBoundingSet) nnp=$(key NoNewPrivileges) ro=$(sed -n 's/^ReadOnlyPaths=//p' "$unit")
[ -n "$user" ] && [ -n "$ambient" ] && pass "unit: User=$user DynamicUser=$dynamic AmbientCapabilities=$ambient CapabilityBoundingSet=$bounding NoNewPrivileges=$nnp ReadOnlyPaths=$ro" ||
  fail "the unit has no User= or no AmbientCapabilities=" "$(grep -E '^(User|AmbientCapabilities)=' "$unit")"
if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify --man=no "$unit" 2>&1 | grep -v 'Command /usr/bin/gpumap is not executable')
  [ -z "$out" ] && pass "systemd-analyze verify: every directive parses" || fail "systemd-analyze verify" "$out"
fi
if uid=$(id -u "$user" 2>/dev/null); then gid=$(id -g "$user")
elif [ "$dynamic" = yes ]; then   # a dynamic user: a uid no account and no process has
  for uid in $(seq 61184 65519); do
    getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null || [ -n "$(ps -o pid= -u "$uid")" ] || break
  done
  gid=$uid
else fail "User=$user does not exist and DynamicUser is not yes"; exit 1; fi
caps() { local c out=; for c in $1; do c=${c,,}; out+=",+${c#cap_}"; done; echo "${out#,}"; }   # CAP_X Y -> +x,+y

# --- another user's GPU process: job 31, rank 1, local rank 1, on GPU 1, which it calls cuda:0 ---
setpriv --reuid=65534 --regid=65534 --clear-groups \
  env -i CUDA_VISIBLE_DEVICES=1,0 SLURM_JOB_ID=31 SLURM_PROCID=1 LOCAL_RANK=1 sleep 300 & other=$!; pids+=($other)
wait_for 5 grep -q 'Uid:.*65534' "/proc/$other/status" && wait_for 5 grep -q sleep "/proc/$other/cmdline" ||
  fail "the other user's sleep did not start"
[ "$uid" != 65534 ] || { fail "the unit's uid is nobody's"; exit 1; }
hosts=$(dirname "$gpumap")/hosts
# The unit's user must reach the binary: a checkout in a 0700 folder (CI's mktemp -d, /root) is
# closed to it, so serve runs from a copy beside its simulated libraries in the test's own folder.
mkdir -p "$dir/bin" && cp "$gpumap" "$dir/bin/" && cp -r "$(dirname "$gpumap")/sim" "$dir/bin/" &&
  chmod -R a+rX "$dir/bin" && gpumap=$dir/bin/$(basename "$gpumap") || { fail "copying gpumap into $dir/bin"; exit 1; }
python3 - "$hosts/h200x2.json" "$other" >"$dir/host.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
for g in h["gpus"]: g["processes"] = []
h["gpus"][1]["processes"] = [{"pid": int(sys.argv[2]), "used_memory_mib": 1000}]
print(json.dumps(h))
PY
chmod 755 "$dir"; chmod 644 "$dir/host.json"   # readable without CAP_DAC_READ_SEARCH (the controls)

# serve_as NAME AMBIENT BOUNDING: serve started as the unit's user with those capabilities; one
# scrape into $dir/NAME.prom, its /proc/PID/status into $dir/NAME.status.
serve_as() {
  local name=$1 a=$2 b=$3 capargs=()
  mkdir -p "$dir/$name/cache" "$dir/$name/locks" && chown -R "$uid:$gid" "$dir/$name"
  if [ -n "$a" ]; then capargs=(--inh-caps="-all,$(caps "$a")" --ambient-caps="-all,$(caps "$a")")
  else capargs=(--inh-caps=-all --ambient-caps=-all); fi
  if [ -n "$b" ]; then capargs+=(--bounding-set="-all,$(caps "$b")"); else capargs+=(--bounding-set=-all); fi
  [ "$nnp" = yes ] && capargs+=(--no-new-privs)
  local mounts=: p
  for p in $ro; do mounts+="; mount --bind $p $p && mount -o remount,bind,ro $p"; done
  unshare -m sh -c "$mounts && exec \"\$@\"" sh \
    setpriv --reuid="$uid" --regid="$gid" --clear-groups "${capargs[@]}" \
    env -i PATH=/usr/bin:/bin GPUMAP_CACHE_DIR="$dir/$name/cache" GPUMAP_LOCK_DIR="$dir/$name/locks" GPUMAP_IN_CONTAINER=0 \
    "$gpumap" serve --simulate "$dir/host.json" --listen 127.0.0.1:0 >"$dir/$name.out" 2>"$dir/$name.err" &
  local pid=$!; pids+=($pid)
  if ! wait_for 20 grep -q 'listening on' "$dir/$name.out"; then
    fail "$name: serve did not start" "$(cat "$dir/$name.err")"; : >"$dir/$name.prom"; : >"$dir/$name.status"; return
  fi
  cp "/proc/$pid/status" "$dir/$name.status"; cp "/proc/$pid/mountinfo" "$dir/$name.mountinfo"
  curl -sf "$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$dir/$name.out")" >"$dir/$name.prom" || fail "$name: scrape"
  kill -TERM $pid; wait $pid
}
capnames() { capsh --decode="$(sed -n "s/^$1:\s*//p" "$2")" | sed 's/^0x[0-9a-f]*=//'; }
want=$(for c in $ambient; do echo "${c,,}"; done | sort | paste -sd,)
info() { grep "^gpumap_process_info{pid=\"$other\"" "$dir/$1.prom"; }

# --- as the unit starts it ---
serve_as unit "$ambient" "$bounding"
got_uid=$(awk '/^Uid:/ {print $2 "/" $3 "/" $4 "/" $5}' "$dir/unit.status")
groups=$(awk '/^Groups:/ {print $2}' "$dir/unit.status")
[ "$got_uid" = "$uid/$uid/$uid/$uid" ] && [ -z "$groups" ] && pass "serve ran as uid $uid (the unit's $user), no supplementary group" ||
  fail "serve's uids $got_uid, groups '$groups'"
eff=$(capnames CapEff "$dir/unit.status" | tr , '\n' | sort | paste -sd,)
amb=$(capnames CapAmb "$dir/unit.status" | tr , '\n' | sort | paste -sd,)
bnd=$(capnames CapBnd "$dir/unit.status" | tr , '\n' | sort | paste -sd,)
[ "$eff" = "$want" ] && [ "$amb" = "$want" ] && pass "serve's effective and ambient capabilities: $eff" ||
  fail "serve's capabilities: effective $eff, ambient $amb, want $want"
[ -z "$bounding" ] || { [ "$bnd" = "$(for c in $bounding; do echo "${c,,}"; done | sort | paste -sd,)" ] &&
  pass "serve's bounding set: $bnd" || fail "serve's bounding set $bnd"; }
for p in $ro; do   # mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...
  awk -v p="$p" '$5 == p {o = $6} END {exit !(o ~ /(^|,)ro(,|$)/)}' "$dir/unit.mountinfo" &&
    pass "serve sees $p read-only (ReadOnlyPaths=)" || fail "$p is not read-only for serve"
done
[ "$nnp" != yes ] || { grep -q '^NoNewPrivs:\s*1' "$dir/unit.status" && pass "serve runs with no_new_privs" || fail "no_new_privs not set"; }
got=$(info unit)
[[ $got == *'cuda_ordinal="0"'* && $got == *'nvml_index="1"'* ]] &&
  pass "the other user's pid $other: cuda_ordinal 0 on nvidia-smi GPU 1" || fail "the other user's process: no cuda_ordinal 0" "$got"
[[ $got == *'slurm_job_id="31"'* && $got == *'rank="1"'* && $got == *'local_rank="1"'* && $got == *'user="nobody"'* ]] &&
  pass "its Slurm job, rank, local rank and user" || fail "its job and rank labels" "$got"
grep -q "^gpumap_finding{id=\"rank-on-wrong-gpu\",severity=\"error\",pid=\"$other\"" "$dir/unit.prom" &&
  pass "its rank-on-wrong-gpu finding" || fail "no rank-on-wrong-gpu finding for pid $other" "$(grep '^gpumap_finding' "$dir/unit.prom")"
grep -q "^gpumap_finding{id=\"environ-unreadable\"" "$dir/unit.prom" && fail "environ-unreadable as the unit runs it" ||
  pass "no environ-unreadable finding"

# --- the controls: no capability, then each capability alone ---
control() {  # control NAME CAPS: serve with only CAPS (the unit's user, bounding set, no_new_privs)
  serve_as "$1" "$2" "$2"
  local got; got=$(info "$1")
  if [ -n "$got" ] && [[ $got != *cuda_ordinal=* && $got != *slurm_job_id=* ]] &&
     grep -q "^gpumap_finding{id=\"environ-unreadable\",severity=\"info\",pid=\"$other\"" "$dir/$1.prom" &&
     ! grep -q '^gpumap_finding{id="rank-on-wrong-gpu"' "$dir/$1.prom"; then
    pass "${2:-no capability}: pid $other listed without cuda_ordinal, job or rank, environ-unreadable, no rank finding"
  else fail "${2:-no capability}: the environment was read (or the process is missing)" "$got"; fi
}
control nocaps ""
for c in $ambient; do control "only-${c,,}" "$c"; done
exit $failed
