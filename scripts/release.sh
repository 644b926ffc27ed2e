#!/usr/bin/env bash
# The release artifacts from one command, built inside a Debian 11 (bullseye) root so that nothing
# needs a glibc newer than 2.31 (docs/install.md):
#   gpumap-VERSION-linux-x86_64.tar.gz   relocatable: bin/ lib/ include/ share/, runs where unpacked
#   gpumap_VERSION_amd64.deb             Debian 11-13, Ubuntu 20.04-24.04
#   gpumap-VERSION-1.x86_64.rpm          RHEL/Rocky/Alma 9
#   pygpumap-VERSION-py3-none-manylinux_2_31_x86_64.whl   the Python package with libgpumap.so.1
#   SHA256SUMS                           of the four (sha256sum -c SHA256SUMS)
# Every ELF file in them is then checked against the floor (tests/release/check-artifacts.sh): a
# GLIBC_ symbol version above it, or a NEEDED library outside glibc, fails the release.
#
# usage: scripts/release.sh OUTDIR
# As root (debootstrap and chroot).  The root is made once from Debian's archive and kept in
# $GPUMAP_RELEASE_ROOT (default /var/cache/gpumap/bullseye-root), made anew when the package list
# below changes; its build folder is kept there too, so a second release rebuilds only what changed.
# GPUMAP_RELEASE_MIRROR: the Debian archive to make it from (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
die() { echo "release.sh: $*" >&2; exit 1; }
[ $# = 1 ] && [ -n "$1" ] || { echo "usage: scripts/release.sh OUTDIR" >&2; exit 2; }
out=$1
[ "$(id -u)" = 0 ] || die "needs root (debootstrap and chroot make the Debian 11 build root); run: sudo scripts/release.sh $out"
[ "$(uname -m)" = x86_64 ] || die "builds x86_64 artifacts on an x86_64 machine only (this is $(uname -m))"

root=${GPUMAP_RELEASE_ROOT:-/var/cache/gpumap/bullseye-root}
mirror=${GPUMAP_RELEASE_MIRROR:-http://deb.debian.org/debian}
floor=2.31
# What the portable build needs inside the root: the toolchain, the static archives it links in
# (Debian's -dev packages carry them), gRPC for gpumap-kubelet, and what CPack's DEB and RPM
# generators call.
packages=g++,make,cmake,pkg-config,git,file,dpkg-dev,rpm,nlohmann-json3-dev,libssl-dev,zlib1g-dev,libcrypt-dev,libncurses-dev,libyaml-cpp-dev,libgrpc++-dev,libprotobuf-dev,protobuf-compiler,protobuf-compiler-grpc,libc-ares-dev,libre2-dev,libabsl-dev,ccache
stamp="bullseye $packages"

scripts/deps.sh --release || die "could not install what the release needs on this machine"

mounted=
cleanup() {
  if [ -n "$mounted" ]; then umount "$root/proc" 2>/dev/null || umount -l "$root/proc" 2>/dev/null || true; fi
}
trap cleanup EXIT

t0=$SECONDS
if [ ! -f "$root/.gpumap-root" ] || [ "$(cat "$root/.gpumap-root")" != "$stamp" ]; then
  echo "== making the Debian 11 build root in $root (debootstrap from $mirror)"
  rm -rf "$root.new"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase --include="$packages" bullseye "$root.new" "$mirror" >"$root.new.log" 2>&1 ||
    { tail -20 "$root.new.log" >&2; die "debootstrap failed (log: $root.new.log)"; }
  rm -f "$root.new.log"
  echo "$stamp" >"$root.new/.gpumap-root"
  if [ -d "$root/work/ccache" ]; then mkdir -p "$root.new/work" && mv "$root/work/ccache" "$root.new/work/"; fi
  rm -rf "$root"
  mv "$root.new" "$root"
  echo "   made in $((SECONDS - t0)) s"
fi
mount -t proc proc "$root/proc" && mounted=1

# The checkout's files as they are here (committed or not, ignored ones left out).
echo "== building in the root (g++ $(chroot "$root" g++ -dumpfullversion), glibc $(chroot "$root" ldd --version | head -1 | awk '{print $NF}'))"
rm -rf "$root/work/src"
mkdir -p "$root/work/src"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar -c --null -T - | tar -x -C "$root/work/src"
# The whole hash and its date, as --version prints them from a git checkout (docs/install.md, "Version").
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
commit_date=$(git log -1 --format=%cs 2>/dev/null || true)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit-dirty"
jobs=$(nproc)
# ccache (in the root, its cache kept there): the copied sources are all new to make, not to ccache.
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 CCACHE_DIR=/work/ccache \
  CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime bash -euo pipefail -c "
  cmake -S /work/src -B /work/build -DCMAKE_BUILD_TYPE=Release -DGPUMAP_PORTABLE=ON -DGPUMAP_WERROR=ON \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
    -DGPUMAP_TESTS=OFF -DGPUMAP_BENCH=OFF -DGPUMAP_KUBERNETES=ON -DGPUMAP_GIT_COMMIT=$commit -DGPUMAP_GIT_COMMIT_DATE=$commit_date >/work/configure.log 2>&1 ||
    { tail -30 /work/configure.log; exit 1; }
  cmake --build /work/build -j$jobs >/work/build.log 2>&1 || { grep -E 'error|Error' /work/build.log | head -40; exit 1; }
  rm -rf /work/package && cd /work/build && cpack -B /work/package >/work/cpack.log 2>&1 || { tail -30 /work/cpack.log; exit 1; }
" || die "the portable build failed in $root (logs: $root/work/{configure,build,cpack}.log)"
echo "   built in $((SECONDS - t0)) s"

version=$(sed -n 's/^project(gpumap VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/gpumap-*.tar.gz "$out"/gpumap_*.deb "$out"/gpumap-*.rpm "$out"/pygpumap-*.whl "$out"/SHA256SUMS
cp "$root/work/package/gpumap-$version-linux-x86_64.tar.gz" "$root"/work/package/gpumap_*_amd64.deb \
  "$root"/work/package/gpumap-*.x86_64.rpm "$out/"
# The wheel: the Python package with the portable library, tagged for the floor it was checked at.
GPUMAP_BUILD_DIR="$root/work/build" GPUMAP_WHEEL_PLATFORM="manylinux_${floor/./_}_x86_64" \
  python3 -c 'import sys; sys.path.insert(0, "python/_build"); import gpumap_build; print(gpumap_build.build_wheel(sys.argv[1]))' \
  "$out" >/dev/null
(cd "$out" && sha256sum gpumap-*.tar.gz gpumap_*.deb gpumap-*.rpm pygpumap-*.whl >SHA256SUMS)
tests/release/check-artifacts.sh "$out" "$floor"
echo "== release artifacts in $out ($((SECONDS - t0)) s):"
(cd "$out" && ls -l --time-style=+ gpumap-*.tar.gz gpumap_*.deb gpumap-*.rpm pygpumap-*.whl SHA256SUMS | awk '{print "   " $5 "\t" $NF}')
