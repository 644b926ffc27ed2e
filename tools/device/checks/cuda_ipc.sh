#!/usr/bin/env bash
# Issue 23: does CUDA IPC work between two ranks as `gpumap bind` sets them up?  Builds
# tools/device/checks/cuda_ipc_probe.c (gcc, no CUDA toolkit) and runs it for the CUDA_VISIBLE_DEVICES
# pairs that matter, each taken from gpumap itself (`LOCAL_RANK=r gpumap bind ... -- printenv`):
#   same GPU, two processes (works on any host, also with 1 GPU);
#   plain bind, rank 0 exports and rank 1 imports (each sees only its own GPU: expected to fail);
#   bind --keep-visible, the same ranks (each sees both, rotated: expected to work);
#   bind --keep-visible --cvd-form uuid.
# usage: tools/device/checks/cuda_ipc.sh [GPUMAP]   (default build/gpumap; writes $OUT/cuda_ipc.log)
set -u
G=${1:-${GPUMAP:-build/gpumap}}
OUT=${OUT:-/tmp/cuda-ipc-out}
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
exec > >(tee "$OUT/cuda_ipc.log") 2>&1
cc -O2 -Wall -o "$WORK/cuda_ipc_probe" "$(dirname "$0")/cuda_ipc_probe.c" -ldl || exit 1
echo "== host"; date -u; nvidia-smi -L; "$G" --version
n=$(nvidia-smi -L | grep -c '^GPU ')
cvd() {  # cvd RANK BIND-OPTIONS...: the CUDA_VISIBLE_DEVICES gpumap bind gives that local rank
  local r=$1; shift
  env -u CUDA_VISIBLE_DEVICES LOCAL_RANK="$r" "$G" bind "$@" -- printenv CUDA_VISIBLE_DEVICES 2>/dev/null
}
probe() {  # probe WHAT EXPORT_CVD IMPORT_CVD
  echo "== $1: export CUDA_VISIBLE_DEVICES=$2, import CUDA_VISIBLE_DEVICES=$3"
  CUDA_DEVICE_ORDER=PCI_BUS_ID "$WORK/cuda_ipc_probe" "$2" "$3"
  echo "exit $?"
}
probe "same GPU, two processes" "$(cvd 0)" "$(cvd 0)"
if [ "$n" -ge 2 ]; then
  probe "gpumap bind (each rank its own GPU only)" "$(cvd 0)" "$(cvd 1)"
  probe "gpumap bind --keep-visible" "$(cvd 0 --keep-visible)" "$(cvd 1 --keep-visible)"
  probe "gpumap bind --keep-visible --cvd-form uuid" "$(cvd 0 --keep-visible --cvd-form uuid)" \
    "$(cvd 1 --keep-visible --cvd-form uuid)"
else
  echo "== one GPU: the cross-GPU cases need two (the issue \"multi-GPU validation\")"
fi
