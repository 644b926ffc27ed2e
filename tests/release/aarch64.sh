#!/usr/bin/env bash
# The aarch64 release artifacts (Grace nodes: GH200, GB200), made and run where they must run, under
# qemu-user (CI's "aarch64 release" stage):
#   1. scripts/release.sh OUTDIR --arch aarch64: cross-built in the Debian 11 root, checked against the
#      glibc floor and the NEEDED rule (tests/release/check-artifacts.sh OUTDIR 2.31 aarch64).
#   2. In a clean Debian 11 arm64 root (debootstrap --foreign --arch arm64, minbase + python3-pip,
#      glibc 2.31, finished under qemu-user; kept in /var/cache/gpumap/bullseye-arm64-run and copied
#      for each run), every aarch64 program run by the kernel's binfmt_misc through Debian 12's
#      qemu-aarch64-static: the tarball's gpumap --simulate dgx8, list --json, doctor, top --once,
#      serve scraped by curl from outside the root (its series and labels); the wheel installed with
#      that root's pip (devices(), python -m gpumap); the .deb with dpkg -i, run, purged.
# Not run here: the unit tests (gpumap_tests) built for aarch64; see docs/install.md ("aarch64").
# binfmt_misc (tests/release/binfmt.sh): a missing qemu-aarch64 registration is made by this script
# (with the F flag: the interpreter is opened once, so it works inside the root) and removed again
# at the end, also on failure, and a binfmt_misc it had to mount is unmounted; a registration that
# was there is left as it was.
# usage: tests/release/aarch64.sh [OUTDIR]   (default build-release/artifacts); as root.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
out=${1:-build-release/artifacts}
. tests/release/lib.sh tests/release/aarch64.sh "debootstrap, chroot, binfmt_misc"
t0=$SECONDS

scripts/release.sh "$out" --arch aarch64 || { echo "FAIL scripts/release.sh --arch aarch64"; exit 1; }
out=$(cd "$out" && pwd)
version=$(sed -n 's/^project(gpumap VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
echo "== built and checked in $((SECONDS - t0)) s"

# --- qemu-user through binfmt_misc (tests/release/binfmt.sh) ---
. tests/release/binfmt.sh
armroot=${GPUMAP_RELEASE_ARM64_ROOT:-/var/cache/gpumap/bullseye-arm64-run}
scratch='' mounted=() pids=()
# What debootstrap's second stage mounts inside a root it did not finish (proc, sys): unmounted
# before the folder is removed or left.
umount_under() { findmnt -rn -o TARGET | grep -F "$1/" | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done; }
cleanup() {
  local p m
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  umount_under "$armroot.new"
  [ -z "$scratch" ] || rm -rf "$scratch"
  binfmt_restore
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
binfmt_aarch64_on || { echo "FAIL qemu-user for aarch64 programs"; exit 1; }

# --- the Debian 11 arm64 root (kept in /var/cache, made again when missing) ---
mirror=${GPUMAP_RELEASE_MIRROR:-http://deb.debian.org/debian}
stamp="bullseye arm64 minbase python3-pip"
if [ ! -f "$armroot/.gpumap-root" ] || [ "$(cat "$armroot/.gpumap-root")" != "$stamp" ]; then
  t1=$SECONDS
  echo "== making the Debian 11 arm64 root in $armroot (debootstrap --foreign, second stage under qemu-user)"
  umount_under "$armroot.new"
  rm -rf "$armroot" "$armroot.new"
  mkdir -p "$(dirname "$armroot")"
  debootstrap --foreign --arch=arm64 --variant=minbase --include=python3-pip bullseye "$armroot.new" "$mirror" \
    >"$armroot.log" 2>&1 || { tail -20 "$armroot.log"; echo "FAIL debootstrap --foreign of the arm64 root"; exit 1; }
  # (Without the F flag the kernel opens the interpreter inside the root: it is copied there.)
  binfmt_into_root "$armroot.new"
  chroot "$armroot.new" /debootstrap/debootstrap --second-stage >>"$armroot.log" 2>&1 ||
    { tail -20 "$armroot.log"; echo "FAIL debootstrap --second-stage under qemu-user"; exit 1; }
  [[ $binfmt_flags == *F* ]] || rm -f "$armroot.new$binfmt_interp"
  echo "$stamp" >"$armroot.new/.gpumap-root"
  mv "$armroot.new" "$armroot"
  echo "   made in $((SECONDS - t1)) s"
fi
scratch=$(mktemp -d)
r=$scratch/root
cp -a "$armroot" "$r"
binfmt_into_root "$r"
mount -t proc proc "$r/proc" && mounted+=("$r/proc")
o="$(in_root uname -m) $(in_root ldd --version | head -1 | awk '{print $NF}') $(readelf -h "$r/usr/bin/dpkg" | sed -n 's/^ *Machine: *//p')"
[ "$o" = "aarch64 2.31 AArch64" ] && pass "the run root is Debian 11 arm64 (glibc 2.31), its programs run under qemu-user" ||
  fail "the arm64 run root" "$o"

# --- the tarball ---
mkdir -p "$r/opt/unpacked here"
tar -xzf "$out/gpumap-$version-linux-aarch64.tar.gz" -C "$r/opt/unpacked here"
G="/opt/unpacked here/gpumap-$version-linux-aarch64/bin/gpumap"
[ "$(readelf -h "$r$G" | sed -n 's/^ *Machine: *//p')" = AArch64 ] && pass "tarball: bin/gpumap is an AArch64 program" ||
  fail "tarball: bin/gpumap is not AArch64"
tarball_checks "$G" "$version"

# serve inside the root, scraped from outside it; the series carry the simulated host's GPUs.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# (chroot and env exec gpumap in place: the PID kept is serve's own.)
chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  "$G" serve --simulate dgx8 --listen "127.0.0.1:$port" >"$scratch/serve.log" 2>&1 &
pids+=($!)
code=000
for _ in $(seq 300); do
  code=$(curl -s -m 10 -o "$scratch/m.prom" -w '%{http_code}' "http://127.0.0.1:$port/metrics")
  [ "$code" = 000 ] || break
  sleep 0.1
done
uuids=$(in_root "$G" list --json --simulate dgx8 | python3 -c 'import json,sys; print(" ".join(g["uuid"] for g in json.load(sys.stdin)["gpus"]))')
n=0
for u in $uuids; do grep -q "uuid=\"$u\"" "$scratch/m.prom" && n=$((n + 1)); done
[ "$code" = 200 ] && grep -q '^gpumap_' "$scratch/m.prom" && [ "$n" = 8 ] &&
  pass "tarball: serve answered the scrape: $(grep -c '^gpumap_' "$scratch/m.prom") gpumap_ samples, the eight GPUs' UUIDs in their labels" ||
  fail "tarball: serve scrape answered $code, $n of 8 GPU UUIDs in the labels" "$(cat "$scratch/serve.log"; head -20 "$scratch/m.prom" 2>/dev/null)"
kill "${pids[-1]}" 2>/dev/null && wait "${pids[-1]}" 2>/dev/null
! pgrep -f "$G serve" >/dev/null && pass "tarball: serve stopped by its PID" || fail "tarball: serve still runs after kill"

# --- the wheel, with the root's own pip ---
whl=$(basename "$(ls "$out"/pygpumap-*_aarch64.whl)")
cp "$out/$whl" "$r/tmp/"
o=$(in_root python3 -m pip install --no-index --no-cache-dir "/tmp/$whl" 2>&1) &&
  pass "wheel: pip install $whl in Debian 11 arm64" || fail "wheel: pip install" "$o"
o=$(in_root env GPUMAP_SIMULATE=dgx8 python3 -c 'import gpumap, platform; d = gpumap.devices(); print(platform.machine(), len(d), d[0]["uuid"])' 2>&1) &&
  [[ $o == aarch64\ 8\ GPU-* ]] && pass "wheel: gpumap.devices() on the simulated dgx8: $o" || fail "wheel: devices()" "$o"
o=$(in_root env GPUMAP_SIMULATE=dgx8 CUDA_VISIBLE_DEVICES=0,0 python3 -m gpumap 2>&1); rc=$?
[ "$rc" = 7 ] && [[ $o == *duplicate* ]] && pass "wheel: python -m gpumap is doctor for this environment (exit 7)" ||
  fail "wheel: python -m gpumap (exit $rc)" "$o"
o=$(in_root python3 -m pip uninstall -y pygpumap 2>&1) && ! in_root python3 -c 'import gpumap' 2>/dev/null &&
  pass "wheel: pip uninstall pygpumap" || fail "wheel: uninstall" "$o"

# --- the .deb, with dpkg -i in the same root ---
cp "$out/gpumap_${version}_arm64.deb" "$r/tmp/"
o=$(in_root dpkg -i "/tmp/gpumap_${version}_arm64.deb" 2>&1) && pass "deb: dpkg -i in Debian 11 arm64" || fail "deb: dpkg -i" "$o"
o=$(in_root gpumap list --simulate h200x2 2>&1) && [[ $o == *H200* ]] && pass "deb: /usr/bin/gpumap runs" || fail "deb: gpumap" "$o"
o=$(in_root dpkg --purge gpumap 2>&1) && [ -z "$(find "$r/usr" -path '*gpumap*' 2>/dev/null)" ] &&
  pass "deb: purged, nothing left under /usr" || fail "deb: purge" "$o $(find "$r/usr" -path '*gpumap*' | head)"

echo "== aarch64 stage: $((SECONDS - t0)) s"
[ "$failed" = 0 ] && echo "release aarch64: all passed" || echo "release aarch64: FAILED"
exit "$failed"
