#!/usr/bin/env bash
# Makes sure the Debian packages the build needs are installed.  As root it installs
# what is missing (apt-get); otherwise it prints the one line to run and fails.
# usage: scripts/deps.sh [--build | --test | --fuzz | --release]
#   --build  what building the gpumap binary needs (scripts/run.sh, the quick start's first command)
#   --test   that and what the tests need (scripts/test.sh); the default
#   --fuzz   that and clang with libFuzzer (.ci/run's fuzzers)
#   --release  what scripts/release.sh and tests/release/run.sh need on this machine (the build itself
#            happens in a Debian 11 root they make): debootstrap; rpm (rpm2cpio, rpm --root) and cpio;
#            binutils (objdump: the glibc floor check); lintian, man-db, gcc, pkg-config, curl, openssl
#            (the packages used as a person would)
set -euo pipefail
# The build: compiler, CMake, nlohmann-json; pkg-config; git (--version's commit); libssl-dev,
# libcrypt-dev, zlib1g-dev, libyaml-cpp-dev: `gpumap serve`'s TLS, bcrypt basic auth, gzip and
# web-config.yml (only the gpumap binary links them, not libgpumap.so); libncurses-dev: `gpumap top`
# (a shared library; -DGPUMAP_STATIC_NCURSES=ON links it in).  CMake requires each of
# them at configure time; nothing else when configured with -DGPUMAP_TESTS=OFF.
build=(cmake g++ make nlohmann-json3-dev libssl-dev libcrypt-dev zlib1g-dev libyaml-cpp-dev libncurses-dev pkg-config git)
# The tests: libgtest-dev and python3 (configure requires them with GPUMAP_TESTS=ON); python3-venv:
# the pip install test; groff-base, man-db, zsh, fish: the man page and completion tests.
# prometheus (promtool too), curl: tests/metrics/metrics_test.sh scrapes `gpumap serve` with a real Prometheus.
# openssl, systemd (systemd-socket-activate): tests/metrics/web_test.sh makes certificates and
# starts `gpumap serve` socket-activated.
# python3-torch (CPU; torchrun), openmpi-bin (mpirun): tests/launchers/ start ranks through gpumap
# bind with them.  iproute2 (ip netns, veth, bridge): tests/slurm/multinode.sh puts each slurmd in a
# network namespace.
# victoria-metrics (single node, scraping), nginx (a reverse proxy with its default buffers and a
# tenant-header check): tests/fleet/fleet_test.sh reads the same fleet through them; the test starts
# each on its own ports and folder, never as the system's service.
tests=(libgtest-dev python3 python3-venv groff-base man-db zsh fish prometheus curl openssl systemd python3-torch
  openmpi-bin iproute2 tmux libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  victoria-metrics nginx)
# libclang-rt-14-dev holds -fsanitize=fuzzer's runtime; clang only recommends it, and recommends are off.
fuzz=(clang libfuzzer-14-dev libclang-rt-14-dev)
release=(debootstrap rpm cpio binutils lintian man-db gcc libc6-dev pkg-config curl openssl python3 git)
# clang-format (git clang-format): scripts/format_check.sh, CI's check of the changed lines.
tests+=(clang-format)
case "${1:---test}" in
  --build) pkgs=("${build[@]}") ;;
  --test) pkgs=("${build[@]}" "${tests[@]}") ;;
  --fuzz) pkgs=("${build[@]}" "${tests[@]}" "${fuzz[@]}") ;;
  --release) pkgs=("${release[@]}") ;;
  *) echo "usage: $0 [--build | --test | --fuzz | --release]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  # No daemon may start from an install (prometheus ships a service): the tests start their own, by
  # PID.  policy-rc.d answering 101 is Debian's switch for that; ours is removed afterwards.
  policy=/usr/sbin/policy-rc.d
  own_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=1
  fi
  status=0
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null || status=$?
  # (an `if`, not `[ ] &&`: with a policy that was there before, `&&` would end the script with 1)
  if [ -n "$own_policy" ]; then rm -f "$policy"; fi
  exit "$status"
else
  echo "gpumap needs these Debian packages: ${missing[*]}" >&2
  echo "run:  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
