#!/usr/bin/env bash
# This session's driver-facing changes against the real driver (one H200): ncurses now a shared
# library (top --once); gpumap-kubelet beside gpumap, and the GPU host's own CDI spec files if it has
# any; then a real torch process in a cgroup named as the kubelet names a pod (when this machine
# lets root write its cgroup tree), with NVIDIA_VISIBLE_DEVICES=void and a DRA claim whose CDI device
# is the H200's /dev/nvidiaN (served by the test's real gRPC pod-resources server): ps names the pod,
# counts its cuda:N inside its container and finds nothing; a second one with
# NVIDIA_VISIBLE_DEVICES=all in a pod given no GPU: pod-gpu-outside-allocation and
# pod-sees-unallocated-gpu.  Everything it makes is removed at the end, also on failure.
# usage: tools/device/suite.sh kubelet
source "$(dirname "$0")/common.sh" kubelet_real "${1:-${BUILD:-build}}"
L=$(cd "$B/lib" && pwd)
gm() { LD_LIBRARY_PATH=$L "$G" "$@"; }
# gpumap runs gpumap-kubelet beside it with a clean environment (PATH only): on this host, whose
# gRPC libraries are carried in $L, the one beside it is a wrapper that points the loader there.
if [ -x "$B/gpumap-kubelet.bin" ]; then
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$L" "$(cd "$B" && pwd)/gpumap-kubelet.bin" >"$B/gpumap-kubelet"
  chmod +x "$B/gpumap-kubelet"
fi
date -u; nvidia-smi -L; head -1 /proc/driver/nvidia/version; gm --version
U0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
MINOR=$(nvidia-smi -q -i 0 | awk -F: '/Minor Number/ {gsub(/ /, "", $2); print $2; exit}')
echo "GPU 0: $U0, minor $MINOR"
export GPUMAP_LOCK_DIR=$OUT/locks

# ncurses as a shared library: what the host has, and top --once through it.
ldconfig -p | grep -E 'libncursesw.so.6|libtinfo.so.6' || echo "the host has no libncursesw6/libtinfo6 (carried in $L)"
LD_LIBRARY_PATH=$L ldd "$G" | grep -E 'curses|tinfo|not found'
check "gpumap resolves every library (ncursesw from the host or the carried folder)" "! LD_LIBRARY_PATH=$L ldd '$G' | grep -q 'not found'"
TERM=xterm-256color gm top --once >"$OUT/top.txt" 2>&1; rc=$?; head -12 "$OUT/top.txt"
check "top --once runs with ncurses linked as a shared library (exit $rc)" "[ $rc = 0 ] && grep -q H200 '$OUT/top.txt'"

# gpumap-kubelet: no kubelet on this host.
"$B/gpumap-kubelet" --socket /nonexistent/kubelet.sock >"$OUT/kubelet_absent.json"; rc=$?
cat "$OUT/kubelet_absent.json"
check "gpumap-kubelet without a kubelet: exit 1, code absent" "[ $rc = 1 ] && grep -q '\"absent\"' '$OUT/kubelet_absent.json'"
echo "CDI spec folders on this host:"; ls -la /etc/cdi /var/run/cdi 2>&1
gm pods --json >"$OUT/pods_none.json"; rc=$?
check "pods on a host without a kubelet: exit 1, said once" "[ $rc = 1 ] && grep -q '\"code\": \"absent\"' '$OUT/pods_none.json'"

# A real pod-resources server (the tests' fake_kubelet, real gRPC) and CDI specs in a folder.
work=$(mktemp -d /tmp/gpumap-s17-XXXXXX)
cg=/sys/fs/cgroup
made=()
pids=()
cleanup() {
  for p in "${pids[@]}"; do echo "$p" >"$cg/cgroup.procs" 2>/dev/null; kill "$p" 2>/dev/null; done
  for ((i = ${#made[@]} - 1; i >= 0; i--)); do rmdir "${made[i]}" 2>/dev/null; done
  if [ -n "${kube:-}" ]; then kill "$kube" 2>/dev/null; wait "$kube" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/cdi"
cat >"$work/cdi/k8s.gpu.nvidia.com-claim.yaml" <<SPEC
cdiVersion: 0.6.0
kind: k8s.gpu.nvidia.com/device
devices:
- name: gpu-0
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia$MINOR
containerEdits:
  env: [NVIDIA_VISIBLE_DEVICES=void]
SPEC
cat >"$work/answers.json" <<JSON
{"socket": "$work/kubelet.sock", "allocatable": null, "pods": [
 {"name": "dra-train", "namespace": "ml", "containers": [{"name": "main", "devices": [], "cdi_devices": ["k8s.gpu.nvidia.com/device=gpu-0"]}]},
 {"name": "leaky", "namespace": "ml", "containers": [{"name": "main", "devices": [], "cdi_devices": []}]}]}
JSON
LD_LIBRARY_PATH=$L "$B/fake_kubelet" "$work/kubelet.sock" "$work/answers.json" >"$work/kube.out" 2>&1 &
kube=$!
for i in $(seq 1 50); do grep -q ready "$work/kube.out" && break; sleep 0.1; done
export GPUMAP_KUBELET_SOCKET=$work/kubelet.sock GPUMAP_CDI_DIRS=$work/cdi
pod_cgroup() {  # UID, container id char: the kubelet's systemd layout, containerd
  local uid=${1//-/_} path=$cg/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${1//-/_}.slice
  for d in $cg/kubepods.slice $cg/kubepods.slice/kubepods-burstable.slice "$path" "$path/cri-containerd-$(printf "$2%.0s" $(seq 64)).scope"; do
    if [ ! -d "$d" ]; then mkdir "$d" || return 1; made+=("$d"); fi
  done
  echo "$path/cri-containerd-$(printf "$2%.0s" $(seq 64)).scope"
}
if ! leaf_d=$(pod_cgroup d0000000-0000-4000-8000-00000000000d d) || ! leaf_e=$(pod_cgroup e0000000-0000-4000-8000-00000000000e e); then
  echo "SKIP: this machine does not let root make cgroups ($cg): the pod checks need them (they run in CI with real cgroups)"
else
  start_torch() {  # NVIDIA_VISIBLE_DEVICES value, HOSTNAME, log
    env -u LD_LIBRARY_PATH -u GPUMAP_KUBELET_SOCKET -u GPUMAP_CDI_DIRS NVIDIA_VISIBLE_DEVICES=$1 HOSTNAME=$2 \
      python3 -c "import torch,time; x=torch.ones(1<<24,device='cuda'); print('ready',flush=True); time.sleep(90)" >"$3" 2>&1 &
    echo $!
  }
  d=$(start_torch void dra-train "$work/d.out"); pids+=("$d")
  e=$(start_torch all leaky "$work/e.out"); pids+=("$e")
  for i in $(seq 1 90); do grep -q ready "$work/d.out" && grep -q ready "$work/e.out" && break; sleep 1; done
  echo "$d" >"$leaf_d/cgroup.procs"; echo "$e" >"$leaf_e/cgroup.procs"
  cat "/proc/$d/cgroup"
  sleep 1
  gm ps --json >"$OUT/ps_pods.json"; gm ps >"$OUT/ps_pods.txt"; cat "$OUT/ps_pods.txt"
  # The two rows' facts, one per line (NAME=VALUE), for the checks.
  python3 - "$OUT/ps_pods.json" "$d" "$e" >"$OUT/facts.txt" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {p["pid"]: p for p in doc["processes"]}
d, e = rows[int(sys.argv[2])], rows[int(sys.argv[3])]
print("d_pod=%s/%s" % (d["namespace"], d["pod"]))
print("d_allocated=%s" % ",".join(d["pod_allocated"] or []))
print("d_cuda=%s" % d["cuda_ordinal"])
print("d_container_gpus=%s" % ",".join(d["container_gpus"] or []))
print("d_pod_findings=%s" % ",".join(f["id"] for f in d["findings"] if f["id"].startswith("pod-")))
print("e_findings=%s" % ",".join(sorted(f["id"] for f in e["findings"])))
print("shared=%d" % sum(1 for f in doc["findings"] if f["id"] == "pod-gpu-shared"))
PY
  cat "$OUT/facts.txt"
  fact() { grep -qx "$1" "$OUT/facts.txt"; }
  check "the void pod is named by the kubelet (ml/dra-train)" "fact d_pod=ml/dra-train"
  check "its claim's CDI device (/dev/nvidia$MINOR) is its allocation: the H200" "fact d_allocated=$U0"
  check "its cuda:N counted inside its container: cuda:0 of the H200 alone" "fact d_cuda=0 && fact d_container_gpus=$U0"
  check "no pod finding on the void pod" "fact d_pod_findings="
  check "the leaky pod (NVIDIA_VISIBLE_DEVICES=all, given nothing): pod-gpu-outside-allocation and pod-sees-unallocated-gpu" \
    "grep -q '^e_findings=.*pod-gpu-outside-allocation' '$OUT/facts.txt' && grep -q '^e_findings=.*pod-sees-unallocated-gpu' '$OUT/facts.txt'"
  check "two pods on the H200, one allocated it: pod-gpu-shared once" "fact shared=1"
  gm pods >"$OUT/pods.txt"; rc=$?; cat "$OUT/pods.txt"
  check "pods: exit 0, the claim shown (claimed)" "[ $rc = 0 ] && grep -q '(claimed)' '$OUT/pods.txt'"
  gm metrics >"$OUT/metrics.txt"
  check "metrics: the process's pod labels" "grep -q 'pod=\"dra-train\"' '$OUT/metrics.txt' && grep -q 'id=\"pod-gpu-shared\"' '$OUT/metrics.txt'"
fi
echo "fails: $fails"
exit $((fails > 0))
