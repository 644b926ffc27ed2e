#!/usr/bin/env bash
# contrib/systemd/gpumap-serve.service on the real driver: `gpumap serve` started with the unit's
# user (a free uid of systemd's dynamic range), capabilities, bounding set, no_new_privs and
# read-only /proc (as tests/metrics/serve_unit_test.sh does on a simulated host) reads NVML and the
# CUDA probe as that user and reports a real torch process of another user (root) with its own
# cuda_ordinal; without the capabilities the same process has none.  Where systemd is PID 1, the
# unit itself (ExecStart pointed at this build, --listen a free port) is started once too, so its
# seccomp filter and mount options meet the real driver.  Root needed; no GPU setting is changed;
# the only CUDA context is torch's.
# usage: checks/serve_unit_real.sh BUILD_DIR   (as root)
source "$(dirname "$0")/common.sh" serve_unit_real "${1:-${BUILD:-build}}"
root=$(cd "$(dirname "$0")/../../.." && pwd)
unit=$root/contrib/systemd/gpumap-serve.service
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 0; }
T=$(mktemp -d /tmp/gpumap-unit.XXXXXX); chmod 755 "$T"
cleanup() {
  kill ${tp:-} ${sp:-} 2>/dev/null; wait ${tp:-} ${sp:-} 2>/dev/null
  if [ -n "${transient:-}" ]; then systemctl stop gpumap-serve-check.service 2>/dev/null
    rm -f /run/systemd/system/gpumap-serve-check.service; systemctl daemon-reload; fi
  rm -rf "$T"
}
trap cleanup EXIT
# The binary where the unit's user can read it (a build folder under /root may not be).
cp "$G" "$T/gpumap"; [ -e "$(dirname "$G")/gpumap-probe" ] && cp "$(dirname "$G")/gpumap-probe" "$T/"
chmod 755 "$T"/gpumap*
key() { sed -n "s/^$1=//p" "$unit" | tail -n1; }
ambient=$(key AmbientCapabilities) bounding=$(key CapabilityBoundingSet) ro=$(sed -n 's/^ReadOnlyPaths=//p' "$unit")
caps() { local c out=; for c in $1; do c=${c,,}; out+=",+${c#cap_}"; done; echo "${out#,}"; }
for uid in $(seq 61184 65519); do
  getent passwd "$uid" >/dev/null || [ -n "$(ps -o pid= -u "$uid")" ] || break
done
echo "unit: AmbientCapabilities=$ambient CapabilityBoundingSet=$bounding ReadOnlyPaths=$ro; uid $uid"

CUDA_VISIBLE_DEVICES=0 LOCAL_RANK=0 python3 -c '
import torch, time
x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda:0"); x.fill_(1); torch.cuda.synchronize()
print("torch ready", flush=True); time.sleep(180)' >"$T/torch.out" 2>&1 & tp=$!
for _ in $(seq 300); do grep -q "torch ready" "$T/torch.out" && break; sleep 0.1; done
check "a torch process (root's) holds GPU 0 (pid $tp)" "grep -q 'torch ready' '$T/torch.out'"

scrape_as() {  # scrape_as NAME AMBIENT: serve as the unit's uid; scrapes until torch's pid is listed
  local name=$1 a=$2 capargs=(--inh-caps=-all --ambient-caps=-all --bounding-set=-all) mounts=: p url
  [ -n "$a" ] && capargs=(--inh-caps="-all,$(caps "$a")" --ambient-caps="-all,$(caps "$a")" --bounding-set="-all,$(caps "$bounding")")
  for p in $ro; do mounts+="; mount --bind $p $p && mount -o remount,bind,ro $p"; done
  mkdir -p "$T/$name" && chown "$uid:$uid" "$T/$name"
  unshare -m sh -c "$mounts && exec \"\$@\"" sh setpriv --reuid="$uid" --regid="$uid" --clear-groups \
    "${capargs[@]}" --no-new-privs env -i PATH=/usr/bin:/bin GPUMAP_CACHE_DIR="$T/$name" GPUMAP_DRIVER_TIMEOUT=8 \
    "$T/gpumap" serve --listen 127.0.0.1:0 >"$T/$name.out" 2>"$T/$name.err" & sp=$!
  for _ in $(seq 100); do grep -q 'listening on' "$T/$name.out" && break; sleep 0.1; done
  url=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$T/$name.out")
  for _ in $(seq 20); do
    curl -s -m 10 -o "$T/$name.prom" "$url"; grep -q "pid=\"$tp\"" "$T/$name.prom" && break; sleep 0.5
  done
  grep Cap "/proc/$sp/status" | sed 's/^/  /'
  kill -TERM $sp; wait $sp; sp=
  echo "serve's stderr ($name):"; sed 's/^/  /' "$T/$name.err"
}
scrape_as unit "$ambient"
check "as the unit: NVML read (gpumap_exporter_up 1)" "grep -q '^gpumap_exporter_up 1' '$T/unit.prom'"
check "as the unit: CUDA's view (gpumap_exporter_cuda_up 1)" "grep -q '^gpumap_exporter_cuda_up 1' '$T/unit.prom'"
grep "^gpumap_process_info{pid=\"$tp\"" "$T/unit.prom"
check "as the unit: root's torch process has cuda_ordinal 0" "grep '^gpumap_process_info{pid=\"$tp\"' '$T/unit.prom' | grep -q 'cuda_ordinal=\"0\"'"
check "as the unit: no environ-unreadable finding" "! grep -q 'id=\"environ-unreadable\"' '$T/unit.prom'"
scrape_as nocaps ""
grep "^gpumap_process_info{pid=\"$tp\"" "$T/nocaps.prom"
check "without capabilities: listed, no cuda_ordinal" "grep '^gpumap_process_info{pid=\"$tp\"' '$T/nocaps.prom' | grep -vq cuda_ordinal"

if [ -d /run/systemd/system ]; then   # systemd is PID 1: the unit itself
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  sed "s#^ExecStart=.*#ExecStart=$T/gpumap serve --listen 127.0.0.1:$port#" "$unit" >/run/systemd/system/gpumap-serve-check.service
  transient=1; systemctl daemon-reload; systemctl start gpumap-serve-check.service
  for _ in $(seq 40); do curl -s -m 10 -o "$T/systemd.prom" "http://127.0.0.1:$port/metrics" &&
    grep -q "pid=\"$tp\"" "$T/systemd.prom" && break; sleep 0.5; done
  systemctl status --no-pager gpumap-serve-check.service | head -5
  grep "^gpumap_process_info{pid=\"$tp\"" "$T/systemd.prom"
  check "systemd's unit: CUDA's view and the torch process's cuda_ordinal 0" \
    "grep -q '^gpumap_exporter_cuda_up 1' '$T/systemd.prom' && grep '^gpumap_process_info{pid=\"$tp\"' '$T/systemd.prom' | grep -q 'cuda_ordinal=\"0\"'"
  journalctl -u gpumap-serve-check.service --no-pager | tail -5
else echo "SKIP: systemd is not PID 1 here: the unit's seccomp filter and mount options not met with the real driver"; fi
echo "failures: $fails"
exit $((fails > 0))
