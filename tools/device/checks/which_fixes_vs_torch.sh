#!/usr/bin/env bash
# Issue 8 points 1 and 2 on the real GPU host (2 x H200, python3 with torch and nvidia-ml-py), from
# the repository root with the carried build:  bash tools/device/checks/which_fixes_vs_torch.sh
# (GPUMAP=path/to/gpumap to use another binary; OUT=folder for the log, default /tmp/issue8-out).
#
# Every check prints one PASS or FAIL line; the last line is "issue8: N passed, M failed".
#   which   : for GPU sets 0 / 1 / 1,0 / 0,1, each form `gpumap which` prints, pasted into a child:
#             torch sees exactly those GPUs in that order (UUIDs), `map` agrees, `doctor` has no
#             warning or error
#   cuda:N  : `gpumap which cuda:1` under CUDA_VISIBLE_DEVICES=1,0 names GPU 0, as torch does
#   pick    : `env $(gpumap pick --format index ...) python3` lands on the picked GPU
#   run     : the child gets integer CUDA_VISIBLE_DEVICES entries (int() accepts each) naming the GPUs
#             run announced; --cvd-form uuid gives UUIDs naming the same GPU
#   bind    : torchrun-style and srun-style rank 1: one GPU (GPU 1) as cuda:0, int() accepts the value,
#             `gpumap doctor` inside the rank has no error/warning and reports bound-rank
#   hidden  : CUDA_VISIBLE_DEVICES=-1: torch sees no GPU, doctor exits 0 with the gpus-hidden note
set -u
GPUMAP=$(readlink -f "${GPUMAP:-build/gpumap}")
OUT=${OUT:-/tmp/issue8-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/issue8.log") 2>&1
echo "== $(date -u +%FT%TZ) $(hostname) $GPUMAP"
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv
pass=0
fail=0
check() {  # $1 name, $2 0 for pass, $3 details
  if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "PASS $1"; else fail=$((fail + 1)); echo "FAIL $1: $3"; fi
}
uuid_of() { nvidia-smi --query-gpu=uuid --format=csv,noheader -i "$1" | tr -d ' '; }
U0=$(uuid_of 0)
U1=$(uuid_of 1)

# The UUIDs torch sees as cuda:0, cuda:1, ... in this environment, comma-separated ("GPU-" + hex).
TORCH_UUIDS='
import os, torch
for e in [x for x in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if x and not x.startswith(("GPU-", "MIG-"))]:
    int(e)  # what vLLM, Ray and dask-cuda do; raises on a UUID
print(",".join("GPU-" + str(torch.cuda.get_device_properties(i).uuid) for i in range(torch.cuda.device_count())))
'
torch_uuids() { env "$@" python3 -c "$TORCH_UUIDS" 2>&1 | tail -1; }

# Runs `gpumap doctor --json` with extra environment; prints "errors warnings ids".
doctor_counts() {
  env "$@" "$GPUMAP" doctor --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["counts"]["error"], j["counts"]["warning"], " ".join(f["id"] for f in j["findings"]))'
}
map_uuids() {
  env "$@" "$GPUMAP" map --json | python3 -c '
import json, sys
print(",".join(d["uuid"] for d in json.load(sys.stdin)["cuda"]["devices"]))'
}

echo; echo "== which: each printed form, pasted"
for set in "0" "1" "1 0" "0 1"; do
  want=$(for i in $set; do uuid_of "$i"; done | paste -sd,)
  json=$("$GPUMAP" which --json $set)
  for form in uuid_form index_form; do
    assign=$(echo "$json" | python3 -c "
import json, sys
f = json.load(sys.stdin)['$form']
print(' '.join(k + '=' + v for k, v in f.items()) if f else '')")
    name="which $set ($form: $assign)"
    if [ -z "$assign" ]; then check "$name" 1 "no such form"; continue; fi
    # Start from a clean slate: the form as printed, nothing inherited.
    base=(-u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER $assign)
    got=$(torch_uuids "${base[@]}")
    check "$name: torch sees $want" "$([ "$got" = "$want" ] && echo 0 || echo 1)" "torch saw $got"
    got=$(map_uuids "${base[@]}")
    check "$name: gpumap map agrees" "$([ "$got" = "$want" ] && echo 0 || echo 1)" "map says $got"
    read -r e w ids <<<"$(doctor_counts "${base[@]}")"
    check "$name: doctor clean" "$([ "$e$w" = "00" ] && echo 0 || echo 1)" "$e errors, $w warnings: $ids"
  done
done

echo; echo "== which cuda:N"
line=$(env CUDA_VISIBLE_DEVICES=1,0 "$GPUMAP" which cuda:1 | head -1)
echo "$line"
got=$(torch_uuids CUDA_VISIBLE_DEVICES=1,0 | cut -d, -f2)
check "which cuda:1 under 1,0 names GPU 0 ($U0), torch's cuda:1 is $got" \
  "$(case "$line" in *"nvidia-smi GPU 0, UUID $U0"*) [ "$got" = "$U0" ] && echo 0 || echo 1 ;; *) echo 1 ;; esac)" "$line"

echo; echo "== pick --format index"
assign=$("$GPUMAP" pick --format index --include 1 --allow-busy)
echo "$assign"
got=$(torch_uuids -u CUDA_VISIBLE_DEVICES -u CUDA_DEVICE_ORDER $assign)
check "env \$(gpumap pick --format index --include 1) lands on GPU 1" "$([ "$got" = "$U1" ] && echo 0 || echo 1)" "torch saw $got"

echo; echo "== run: the child's variables"
LOCKS=$(mktemp -d)
for n in 1 2; do
  err=$OUT/run$n.err
  got=$(env -u CUDA_VISIBLE_DEVICES GPUMAP_LOCK_DIR="$LOCKS" "$GPUMAP" run --gpus $n --allow-busy -- \
        sh -c 'echo "$CUDA_VISIBLE_DEVICES|$CUDA_DEVICE_ORDER"; python3 -c "$0"' "$TORCH_UUIDS" 2>"$err")
  cat "$err"
  announced=$(grep -o 'cuda:[0-9]* -> GPU [0-9]*  GPU-[0-9a-f-]*' "$err" | awk '{print $5}' | paste -sd,)
  vars=${got%%$'\n'*}
  seen=$(echo "$got" | tail -1)
  cvd=${vars%%|*}
  check "run --gpus $n: CUDA_VISIBLE_DEVICES=$cvd is integers" \
    "$(python3 -c "[int(x) for x in '$cvd'.split(',')]" 2>/dev/null && echo 0 || echo 1)" "$vars"
  check "run --gpus $n: CUDA_DEVICE_ORDER=PCI_BUS_ID" "$([ "${vars#*|}" = PCI_BUS_ID ] && echo 0 || echo 1)" "$vars"
  check "run --gpus $n: torch sees the announced GPUs ($announced)" \
    "$([ -n "$announced" ] && [ "$seen" = "$announced" ] && echo 0 || echo 1)" "torch saw $seen"
done
got=$(GPUMAP_LOCK_DIR="$LOCKS" "$GPUMAP" run --gpus 1 --allow-busy --include 1 --cvd-form uuid -- \
      sh -c 'echo "$CUDA_VISIBLE_DEVICES"' 2>/dev/null)
check "run --cvd-form uuid: $got is GPU 1's UUID" "$([ "$got" = "$U1" ] && echo 0 || echo 1)" "$got"
rm -rf "$LOCKS"

echo; echo "== bind: rank 1, torchrun-style and srun-style"
BIND_CHILD='
import json, os, subprocess, sys, torch
cvd = os.environ["CUDA_VISIBLE_DEVICES"]
ints = [int(x) for x in cvd.split(",")]
uuids = ["GPU-" + str(torch.cuda.get_device_properties(i).uuid) for i in range(torch.cuda.device_count())]
torch.cuda.set_device(int(os.environ[sys.argv[2]]) % torch.cuda.device_count())  # the advice: no crash
d = json.loads(subprocess.run([sys.argv[1], "doctor", "--json"], capture_output=True, text=True).stdout)
print(cvd, ",".join(uuids), d["counts"]["error"], d["counts"]["warning"], " ".join(f["id"] for f in d["findings"]))
'
for style in torchrun srun; do
  if [ $style = torchrun ]; then
    vars=(-u CUDA_VISIBLE_DEVICES LOCAL_RANK=1 RANK=1 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2)
    rv=LOCAL_RANK
  else
    vars=(SLURM_LOCALID=1 SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_STEP_GPUS=0,1 CUDA_VISIBLE_DEVICES=0,1)
    rv=SLURM_LOCALID
  fi
  out=$(env "${vars[@]}" "$GPUMAP" bind -- python3 -c "$BIND_CHILD" "$GPUMAP" $rv 2>"$OUT/bind-$style.err")
  cat "$OUT/bind-$style.err"
  echo "$out"
  read -r cvd seen e w ids <<<"$(echo "$out" | tail -1)"
  check "bind $style rank 1: CUDA_VISIBLE_DEVICES=$cvd, torch sees only GPU 1" \
    "$([ "$cvd" = 1 ] && [ "$seen" = "$U1" ] && echo 0 || echo 1)" "cvd=$cvd torch=$seen"
  check "bind $style rank 1: doctor in the rank clean, bound-rank" \
    "$([ "$e$w" = "00" ] && case " $ids " in *" bound-rank "*) true ;; *) false ;; esac && echo 0 || echo 1)" \
    "$e errors, $w warnings: $ids"
  check "bind $style: stderr says use cuda:0" "$(grep -q 'use cuda:0' "$OUT/bind-$style.err" && echo 0 || echo 1)" ""
done

echo; echo "== CUDA_VISIBLE_DEVICES=-1 (CPU-only on purpose)"
got=$(CUDA_VISIBLE_DEVICES=-1 python3 -c 'import torch; print(torch.cuda.device_count())' 2>&1 | tail -1)
read -r e w ids <<<"$(doctor_counts CUDA_VISIBLE_DEVICES=-1)"
check "-1: torch sees $got GPUs, doctor: $e errors $w warnings ($ids)" \
  "$([ "$got" = 0 ] && [ "$e$w" = "00" ] && [[ " $ids " == *" gpus-hidden "* ]] && echo 0 || echo 1)" "torch=$got ids=$ids"
# Other notes may stand beside it (this host is a container: container-renumbered is true here).

echo
echo "issue8: $pass passed, $fail failed"
[ "$fail" = 0 ]
