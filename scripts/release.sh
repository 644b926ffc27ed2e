#!/usr/bin/env bash
# The release artifacts from one command, built inside a Debian 11 (bullseye) root so that nothing
# needs a glibc newer than 2.31 (docs/install.md):
#   gpumap-VERSION-linux-x86_64.tar.gz   relocatable: bin/ lib/ include/ share/, runs where unpacked
#   gpumap_VERSION_amd64.deb             Debian 11-13, Ubuntu 20.04-24.04
#   gpumap-VERSION-1.x86_64.rpm          RHEL/Rocky/Alma 9
#   pygpumap-VERSION-py3-none-manylinux_2_31_x86_64.whl   the Python package with libgpumap.so.1
#   SHA256SUMS                           of the four (sha256sum -c SHA256SUMS)
# With --arch aarch64 (or all: both) the same four for aarch64 (Grace nodes: GH200, GB200), cross-built
# in the same root with Debian 11's aarch64 cross toolchain (GCC 10) and the arm64 -dev packages
# (dpkg --add-architecture arm64; cmake/aarch64-linux-gnu.toolchain.cmake):
#   gpumap-VERSION-linux-aarch64.tar.gz, gpumap_VERSION_arm64.deb, gpumap-VERSION-1.aarch64.rpm,
#   pygpumap-VERSION-py3-none-manylinux_2_31_aarch64.whl
# SHA256SUMS then lists every artifact in OUTDIR (an earlier run's other architecture stays).
# Every ELF file in them is then checked against the floor (tests/release/check-artifacts.sh): a
# GLIBC_ symbol version above it, or a NEEDED library outside glibc, fails the release.
#
# usage: scripts/release.sh OUTDIR [--arch x86_64|aarch64|all]   (default x86_64)
# As root (debootstrap and chroot).  The root is made once from Debian's archive and kept in
# $GPUMAP_RELEASE_ROOT (default /var/cache/gpumap/bullseye-root), made anew when the package list
# below changes; its build folder is kept there too, so a second release rebuilds only what changed.
# GPUMAP_RELEASE_MIRROR: the Debian archive to make it from (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
die() { echo "release.sh: $*" >&2; exit 1; }
usage() { echo "usage: scripts/release.sh OUTDIR [--arch x86_64|aarch64|all]" >&2; exit 2; }
out='' arches=(x86_64)
while [ $# -gt 0 ]; do
  case $1 in
    --arch) [ $# -ge 2 ] || usage
      case $2 in
        x86_64 | amd64) arches=(x86_64) ;;
        aarch64 | arm64) arches=(aarch64) ;;
        all) arches=(x86_64 aarch64) ;;
        *) echo "release.sh: --arch $2: not an architecture this release builds (x86_64, aarch64 or all)" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --arch=*) set -- --arch "${1#--arch=}" "${@:2}" ;;
    -*) usage ;;
    *) [ -z "$out" ] || usage; out=$1; shift ;;
  esac
done
[ -n "$out" ] || usage
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
# For --arch aarch64, added to the same root (its own stamp, made again with the root): Debian 11's
# aarch64 cross toolchain, the arm64 builds of the archives above (multiarch, beside the amd64 ones;
# apt-get --no-remove: an arm64 package that would replace an amd64 one fails instead), and
# qemu-user-static, which runs the cross-built gpumap once during the build (its man page).
# (libyaml-cpp-dev is not Multi-Arch: same in Debian 11: its arm64 .deb is unpacked (beside its
# library, libyaml-cpp0.6:arm64, which is), and only its
# /usr/lib/aarch64-linux-gnu part copied; the headers are the amd64 package's, the same files.)
cross_packages="crossbuild-essential-arm64 qemu-user-static libssl-dev:arm64 zlib1g-dev:arm64 libcrypt-dev:arm64 \
libncurses-dev:arm64 libgrpc++-dev:arm64 libprotobuf-dev:arm64 libc-ares-dev:arm64 libre2-dev:arm64 libabsl-dev:arm64 \
libyaml-cpp0.6:arm64"
cross_unpacked="libyaml-cpp-dev:arm64"

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

if [[ " ${arches[*]} " == *" aarch64 "* ]] && [ "$(cat "$root/.gpumap-arm64" 2>/dev/null)" != "$cross_packages $cross_unpacked" ]; then
  echo "== adding the aarch64 cross toolchain and the arm64 libraries to the root"
  t1=$SECONDS
  # shellcheck disable=SC2086  # (the package list's words)
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    bash -euo pipefail -c "dpkg --add-architecture arm64 && apt-get update -q && \
      apt-get install -y -q --no-install-recommends --no-remove $cross_packages && apt-get clean &&
      rm -rf /tmp/unpacked && mkdir -p /tmp/unpacked && cd /tmp/unpacked && apt-get download -q $cross_unpacked &&
      for d in ./*.deb; do dpkg-deb -x \$d .; done && cp -a usr/lib/aarch64-linux-gnu/. /usr/lib/aarch64-linux-gnu/ &&
      cd / && rm -rf /tmp/unpacked" >"$root/work-arm64.log" 2>&1 ||
    { tail -20 "$root/work-arm64.log" >&2; die "could not add the arm64 packages to $root (log: $root/work-arm64.log)"; }
  echo "$cross_packages $cross_unpacked" >"$root/.gpumap-arm64"
  echo "   added in $((SECONDS - t1)) s"
fi

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
# One build folder and package folder per architecture in the root: /work/build and /work/package
# (x86_64), /work/build-aarch64 and /work/package-aarch64 (cross-built).
build_dir() { if [ "$1" = x86_64 ]; then echo /work/build; else echo "/work/build-$1"; fi; }
package_dir() { if [ "$1" = x86_64 ]; then echo /work/package; else echo "/work/package-$1"; fi; }
for arch in "${arches[@]}"; do
  b=$(build_dir "$arch") p=$(package_dir "$arch") cross=''
  [ "$arch" = x86_64 ] || cross="-DCMAKE_TOOLCHAIN_FILE=/work/src/cmake/$arch-linux-gnu.toolchain.cmake"
  echo "== $arch: $([ -n "$cross" ] && echo "cross-built, $(chroot "$root" "$arch-linux-gnu-g++" -dumpfullversion)" || echo native)"
  # ccache (in the root, its cache kept there): the copied sources are all new to make, not to ccache.
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 CCACHE_DIR=/work/ccache \
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime bash -euo pipefail -c "
    cmake -S /work/src -B $b -DCMAKE_BUILD_TYPE=Release -DGPUMAP_PORTABLE=ON -DGPUMAP_WERROR=ON $cross \
      -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
      -DGPUMAP_TESTS=OFF -DGPUMAP_BENCH=OFF -DGPUMAP_KUBERNETES=ON -DGPUMAP_GIT_COMMIT=$commit -DGPUMAP_GIT_COMMIT_DATE=$commit_date >$b.configure.log 2>&1 ||
      { tail -30 $b.configure.log; exit 1; }
    cmake --build $b -j$jobs >$b.build.log 2>&1 || { grep -E 'error|Error' $b.build.log | head -40; exit 1; }
    rm -rf $p && cd $b && cpack -B $p >$b.cpack.log 2>&1 || { tail -30 $b.cpack.log; exit 1; }
  " || die "the portable $arch build failed in $root (logs: $root$b.{configure,build,cpack}.log)"
  echo "   built in $((SECONDS - t0)) s"
done

version=$(sed -n 's/^project(gpumap VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
mkdir -p "$out"
out=$(cd "$out" && pwd)
deb_arch() { if [ "$1" = x86_64 ]; then echo amd64; else echo arm64; fi; }
for arch in "${arches[@]}"; do
  rm -f "$out/gpumap-$version-linux-$arch.tar.gz" "$out"/gpumap_*_"$(deb_arch "$arch")".deb "$out"/gpumap-*."$arch".rpm \
    "$out"/pygpumap-*_"$arch".whl
  p=$root$(package_dir "$arch")
  cp "$p/gpumap-$version-linux-$arch.tar.gz" "$p"/gpumap_*_"$(deb_arch "$arch")".deb "$p"/gpumap-*."$arch".rpm "$out/"
  # The wheel: the Python package with the portable library, tagged for the floor it was checked at.
  GPUMAP_BUILD_DIR="$root$(build_dir "$arch")" GPUMAP_WHEEL_PLATFORM="manylinux_${floor/./_}_$arch" \
    python3 -c 'import sys; sys.path.insert(0, "python/_build"); import gpumap_build; print(gpumap_build.build_wheel(sys.argv[1]))' \
    "$out" >/dev/null
done
rm -f "$out/SHA256SUMS"
(cd "$out" && sha256sum gpumap-*.tar.gz gpumap_*.deb gpumap-*.rpm pygpumap-*.whl >SHA256SUMS)
for arch in "${arches[@]}"; do tests/release/check-artifacts.sh "$out" "$floor" "$arch"; done
echo "== release artifacts in $out ($((SECONDS - t0)) s):"
(cd "$out" && ls -l --time-style=+ gpumap-*.tar.gz gpumap_*.deb gpumap-*.rpm pygpumap-*.whl SHA256SUMS | awk '{print "   " $5 "\t" $NF}')
