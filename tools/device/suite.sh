#!/usr/bin/env bash
# gpumap's checks against a real GPU host, as one suite with named checks (what each validates is in
# the table below and in `suite.sh --list`).  Run from anywhere on any GPU host, whole or by name:
#
#   tools/device/suite.sh [--build DIR | --release DIR] [--logs DIR] [all | measure | NAME...]
#
#   --build DIR    a CMake build folder of this checkout (gpumap, libgpumap.so.1, gpumap-probe,
#                  gpumap-kubelet, sim/, hosts/); default: build/
#   --release DIR  scripts/release.sh's artifacts instead: the tarball is unpacked into a temporary
#                  folder and used as the build (the way to run on a host without this machine's
#                  libraries: the portable build needs only glibc 2.31)
#   --logs DIR     where each check's log goes; default $OUT when set (the device tool brings $OUT
#                  back), else docs/validation/ of this checkout
#   all            every check (the default); `measure` the measurements (numbers, no verdict)
#
# Each check runs in its own folder and writes DATE-NAME-MODEL-Ngpu.log, headed by the host, every
# GPU's name and UUID, the driver, CUDA and gpumap versions and the commit.  A check fails when its
# scripts exit non-zero or print a line starting with FAIL; a check whose needs this host lacks
# (two GPUs, torch, root, the artifacts) is SKIP with the reason, never a pass.  The summary goes to
# DATE-suite-MODEL-Ngpu.log; exit 0 when nothing failed, 1 when a check failed, 2 on a usage error.
# Needs no GPU memory of its own: gpumap never creates a CUDA context; the checks that need one
# (torch on the GPU) say so in their table row.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
C=$here/checks

# name | kind (check/measure) | needs | scripts (space-separated; ARG = how each is called) | what it validates
# needs: torch, gpus2, root, release (--release), build (--build), smi
read -r -d '' TABLE <<'EOF'
truth|check|smi|difftest.sh check_matrix.py|gpumap's prediction of CUDA's numbering against the real cuInit: generated CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER values (tools/difftest) and `map --check` under many environments
faults|check|smi|driver_faults_real.sh|the NVML reader survives the real driver: list/map/ps --json valid, exit codes, no process left, no GPU memory used
cli|check|smi|cli_real.sh|the commands on real NVML: ps --pid on a real process, completion words, 80-column output, no kubelet asked without pods, --help widths, a full stdout
contracts|check|smi|json_terminal_container.sh|every command's --json against docs/cli.md's contract on real NVML; terminal vs pipe; inside a container's variables
monitor|check|torch|csv_vs_nvidia_smi.sh monitor_fields_real.sh utilization_real.sh|list --query-gpu and ps --query against nvidia-smi's CSV field by field; the per-process utilisation call's cost; a busy process's SM % the same in ps --query, ps --json, metrics and top
live|check|torch|operations_layer_real.sh live_truth.py|the library's live path: devices() is map --json's cuda.devices, pin() round-trips through torch, answers once CUDA runs in the process
top|check|torch|top_real.sh|top --once with a real torch process (its own cuda:N), first frame time beside nvidia-smi and nvitop, CPU use while open
exporter|check|torch|exporter_real.sh|serve on the real driver: a scrape parsed by prometheus_client, one gpu_info per nvidia-smi GPU, a torch process's series with its cuda index, /healthz
kubelet|check|torch root build|kubelet_real.sh|pod attribution: a real torch process in a kubelet-named cgroup, served by a real gRPC pod-resources server, named in ps/pods/metrics
framework|check|torch|framework_view.py framework_repro.py which_fixes_vs_torch.sh ps_vs_torch.sh|what torch/transformers make of the variables, each framework finding reproduced, which's fixes and ps against torch's own view
layers|check|torch|layers_real.sh|the allowed set with Slurm's variables, bind's warning about a GPU in use, list/map/doctor/ps/which beside nvidia-smi
snapshot|check|smi|snapshots_real.sh|mapping snapshots save/diff against the real driver
python|check|torch|python_package.sh|the Python package over libgpumap: pin() before torch, leases, devices() timings beside nvitop's select_devices
launch|check|torch|run_two_jobs.sh cuda_ipc.sh|gpumap run places two jobs on different GPUs (needs two), CUDA IPC between ranks as bind sets them up
prolog|check|smi|slurm_prolog_ps_keys.sh|Slurm's TaskProlog and map --line against the real driver, ps --json's host and minor-number keys
release|check|release torch|release_real.sh|the portable artifacts: tarball under a path with a space, list vs nvidia-smi, map --check, top, the wheel inside torch
cudastart|check|torch|cuda_start_failed.py|a torch process whose CUDA start failed (CUDA_VISIBLE_DEVICES='' then '0'): torch stays at 0 GPUs, gpumap's Python check says cuda-start-failed (issue 52 item 5)
serveunit|check|torch root|serve_unit_real.sh|serve with gpumap-serve.service's user and capabilities reads another user's torch process's cuda:N; none without them (issue 53 item 2)
xid|check|torch root|xid_fault.sh|issue 58: a kernel that stores to address 0 (ctypes + PTX, CUDA_ERROR_ILLEGAL_ADDRESS) beside a bystander torch process: `health --json` ties the driver's Xid to the faulting pid with its Slurm job 77, rank 1 and cuda:0, not to the bystander; CPU of `health --watch 1` and idle `serve`
commands|measure|smi|commands.sh|explain/which/verify/doctor/bind/pick on the real host with exit codes, and their times beside nvidia-smi
viewers|measure|torch|top_vs_nvitop.py|gpumap top beside nvitop with a busy torch process (first frame, CPU at 1 s, RSS, SM % shown), list beside nvidia-smi --query-gpu for nine fields, import gpumap + devices() over a bare python (bench/top_vs_nvitop.py; nvitop's source in .dev/nvitop)
trace|measure|smi|trace.sh|where `gpumap list`'s time goes: per-NVML-call trace and whole-process times beside nvidia-smi --query-gpu
EOF

usage() { sed -n 4,12p "$0" | sed 's/^# \{0,1\}//'; exit 2; }
build= release= logs=${OUT:-} names=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?--build needs a folder}; shift 2 ;;
    --release) release=${2:?--release needs a folder}; shift 2 ;;
    --logs) logs=${2:?--logs needs a folder}; shift 2 ;;
    --list)
      printf '%-10s %-8s %-12s %s\n' CHECK KIND NEEDS VALIDATES
      while IFS='|' read -r n k need _ what; do printf '%-10s %-8s %-12s %s\n' "$n" "$k" "$need" "$what"; done <<<"$TABLE"
      exit 0 ;;
    -h|--help) usage ;;
    -*) echo "suite.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[ ${#names[@]} -eq 0 ] && names=(all)
known=$(cut -d'|' -f1 <<<"$TABLE")
selected=()
for n in "${names[@]}"; do
  case $n in
    all) while IFS='|' read -r c k _; do [ "$k" = check ] && selected+=("$c"); done <<<"$TABLE" ;;
    measure) while IFS='|' read -r c k _; do [ "$k" = measure ] && selected+=("$c"); done <<<"$TABLE" ;;
    *) grep -qx -- "$n" <<<"$known" || { echo "suite.sh: no check '$n'; the checks: $(tr '\n' ' ' <<<"$known")" >&2; exit 2; }
       selected+=("$n") ;;
  esac
done

command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 ||
  { echo "suite.sh: no working nvidia-smi here: this suite runs on a GPU host (the CI suite runs the simulated driver)" >&2; exit 2; }

scratch=$(mktemp -d /tmp/gpumap-suite.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
if [ -n "$release" ]; then
  tarball=$(ls "$release"/gpumap-*-linux-x86_64.tar.gz 2>/dev/null | head -1)
  [ -n "$tarball" ] || { echo "suite.sh: no gpumap-*-linux-x86_64.tar.gz in $release (make it with scripts/release.sh)" >&2; exit 2; }
  tar -xzf "$tarball" -C "$scratch" || exit 2
  u=$(echo "$scratch"/gpumap-*/)
  build=$scratch/build && mkdir -p "$build"
  ln -s "$u/bin/gpumap" "$u/lib/libgpumap.so.1" "$u/lib/libgpumap.so" "$u/lib/gpumap/gpumap-probe" \
    "$u/lib/gpumap/gpumap-kubelet" "$u/lib/gpumap/sim" "$u/share/gpumap/hosts" "$build/"
  mkdir -p "$build/completion/bash" && ln -s "$u/share/bash-completion/completions/gpumap" "$build/completion/bash/"
  release=$(cd "$release" && pwd)
fi
build=$(cd "${build:-$root/build}" 2>/dev/null && pwd) ||
  { echo "suite.sh: no build folder (build/ here, or --build DIR / --release DIR)" >&2; exit 2; }
[ -x "$build/gpumap" ] || { echo "suite.sh: no gpumap in $build" >&2; exit 2; }
if ldd "$build/gpumap" | grep -q 'not found'; then
  echo "suite.sh: $build/gpumap cannot start here ($(ldd "$build/gpumap" | grep 'not found' | tr -s ' \t' ' ' | head -3));" \
    "use --release with scripts/release.sh's artifacts" >&2
  exit 2
fi
logs=${logs:-$root/docs/validation}
mkdir -p "$logs" && logs=$(cd "$logs" && pwd)

ngpu=$(nvidia-smi -L | grep -c '^GPU')
model=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | sed 's/^NVIDIA //; s/[^A-Za-z0-9]\+/-/g; s/-$//' | tr 'A-Z' 'a-z')
stamp=$(date -u +%F)
has() {  # has NEED: empty when this host has it, else the reason
  case $1 in
    smi) ;;
    torch) python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1 ||
             echo "python3 has no torch with CUDA" ;;
    gpus2) [ "$ngpu" -ge 2 ] || echo "one GPU here (it needs two)" ;;
    root) [ "$(id -u)" = 0 ] || echo "not root" ;;
    release) [ -n "$release" ] || echo "needs --release DIR (scripts/release.sh's artifacts)" ;;
    build) [ -z "$release" ] || echo "needs --build DIR (a build folder: the test pod-resources server and the shared ncurses are not in the artifacts)" ;;
  esac
}
header() {
  echo "== gpumap GPU-host suite: check $1 ($2)"
  echo "date:    $(date -u +%FT%TZ)"
  echo "host:    $(hostname) ($(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -r), $(nproc) CPUs)"
  echo "driver:  $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); $(nvidia-smi | grep -o 'CUDA Version: [0-9.]*' | head -1)"
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id --format=csv,noheader | sed 's/^/gpu:     /'
  echo "gpumap:  $("$build/gpumap" --version 2>&1 | head -1) from $build"
  echo "commit:  $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo ' (with local changes)')"
  echo
}

export BUILD=$build GPUMAP=$build/gpumap GPUMAP_BUILD_DIR=$build PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
summary=() failed=0
cd "$root" || exit 2
for name in "${selected[@]}"; do
  IFS='|' read -r _ kind needs scripts what < <(grep "^$name|" <<<"$TABLE")
  log="$logs/$stamp-$name-$model-${ngpu}gpu.log"
  why=
  for need in $needs; do why=$(has "$need"); [ -n "$why" ] && break; done
  if [ -n "$why" ]; then summary+=("SKIP  $name: $why"); echo "SKIP  $name: $why"; continue; fi
  work=$scratch/$name && mkdir -p "$work"
  start=$SECONDS rc=0
  {
    header "$name" "$what"
    for s in $scripts; do
      echo "== $s"
      case $s in
        csv_vs_nvidia_smi.sh|cuda_ipc.sh) OUT=$work bash "$C/$s" "$GPUMAP" ;;
        release_real.sh) OUT=$work bash "$C/$s" "$release" ;;
        difftest.sh) OUT=$work/difftest DEADLINE=${DEADLINE:-240} bash "$C/$s" "${COUNT:-1000}" "$(date +%j)" ;;
        check_matrix.py) cc -O2 -o "$work/cuda_probe" bench/cuda_probe.c -ldl &&
                           OUT=$work python3 "$C/$s" "$GPUMAP" "$work/cuda_probe" ;;
        top_vs_nvitop.py) python3 bench/top_vs_nvitop.py --gpumap "$GPUMAP" --nvitop "${NVITOP:-.dev/nvitop}" ;;
        framework_view.py) OUT=$work/framework_view DEADLINE=${DEADLINE:-180} python3 "$C/$s" ;;
        cuda_start_failed.py) OUT=$work GPUMAP_BUILD_DIR=$build PYTHONPATH=$root/python python3 "$C/$s" "$GPUMAP" ;;
        *.py) OUT=$work python3 "$C/$s" ;;
        *) OUT=$work bash "$C/$s" "$build" ;;
      esac
      r=$?
      echo "== $s: exit $r"
      [ $r = 0 ] || echo "== FAIL: $s exited $r"
    done
  } >"$log" 2>&1 </dev/null
  # Whatever a check wrote beside its log (JSON, frames) stays next to it.
  if [ -n "$(ls -A "$work" 2>/dev/null)" ]; then
    tar -czf "${log%.log}-files.tgz" -C "$work" . 2>/dev/null
  fi
  fails=$(grep -c '^\(== \)\{0,1\}FAIL' "$log")
  passes=$(grep -c '^PASS' "$log")
  t=$((SECONDS - start))
  if [ "$kind" = measure ]; then
    if [ "$fails" = 0 ]; then line="RAN   $name (${t} s): $(basename "$log")"; else line="FAIL  $name: did not run through (${t} s): $(basename "$log")"; failed=1; fi
  elif [ "$fails" = 0 ]; then line="PASS  $name: $passes passed (${t} s): $(basename "$log")"
  else line="FAIL  $name: $fails failed, $passes passed (${t} s): $(basename "$log")"; failed=1; fi
  summary+=("$line"); echo "$line"
done
{ header suite "${selected[*]}"; printf '%s\n' "${summary[@]}"; } >"$logs/$stamp-suite-$model-${ngpu}gpu.log"
exit $failed
