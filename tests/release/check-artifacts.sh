#!/usr/bin/env bash
# Checks release artifacts (scripts/release.sh OUTDIR) against the glibc floor: every ELF file in
# the tarball, the .deb, the .rpm and the wheel may need no GLIBC_ symbol version above FLOOR and no
# library outside glibc and the loader (libc, libm, libdl, libpthread, librt, ld-linux).  The C++
# runtime, OpenSSL, yaml-cpp, zlib, libcrypt, ncurses and gRPC are linked in: a GLIBCXX_/CXXABI_
# version or a NEEDED libstdc++.so.6 fails too.  Also: the packages declare that floor and nothing
# else, and SHA256SUMS matches.  ARCH: x86_64 (default) or aarch64 (scripts/release.sh --arch): the
# ELF files are read with readelf, which reads either machine's, and must all be of that machine
# (aarch64: with every LOAD segment aligned to 64 KiB, for 64 KiB-page kernels).
# usage: tests/release/check-artifacts.sh OUTDIR [FLOOR [ARCH]]   (FLOOR default 2.31)
set -euo pipefail
out=$(cd "$1" && pwd)
floor=${2:-2.31}
arch=${3:-x86_64}
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
case $arch in
  x86_64) deb_arch=amd64 machine='Advanced Micro Devices X86-64' loader=ld-linux-x86-64.so.2 ;;
  aarch64) deb_arch=arm64 machine=AArch64 loader=ld-linux-aarch64.so.1 ;;
  *) echo "check-artifacts.sh: ARCH $arch: x86_64 or aarch64" >&2; exit 2 ;;
esac
allowed=" libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 $loader "
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

one() { local g=("$out"/$1); [ ${#g[@]} = 1 ] && [ -f "${g[0]}" ] || fail "not exactly one $1 in $out"; echo "${g[0]}"; }
tgz=$(one "gpumap-*-linux-$arch.tar.gz")
deb=$(one "gpumap_*_$deb_arch.deb")
rpm=$(one "gpumap-*.$arch.rpm")
whl=$(one "pygpumap-*-py3-none-manylinux_${floor/./_}_$arch.whl")
(cd "$out" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match the files in $out"
pass "SHA256SUMS matches"

mkdir -p "$scratch"/{tgz,deb,rpm,whl}
tar -xzf "$tgz" -C "$scratch/tgz"
dpkg-deb -x "$deb" "$scratch/deb"
(cd "$scratch/rpm" && rpm2cpio "$rpm" | cpio -idm --quiet)
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$scratch/whl"

# Version strings compare as versions (2.9 < 2.17 < 2.31).
above() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" != "$2" ]; }
checked=0 worst=0
for kind in tgz deb rpm whl; do
  n=0
  while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    n=$((n + 1))
    rel=${f#"$scratch/"}
    m=$(readelf -h "$f" | sed -n 's/^ *Machine: *//p')
    [ "$m" = "$machine" ] || fail "$rel is built for '$m', not $arch"
    # aarch64 kernels run with 4 KiB or 64 KiB pages (some Grace systems' kernels use 64 KiB): every
    # loadable segment aligned to 64 KiB loads on both.
    if [ "$arch" = aarch64 ]; then
      while read -r align; do
        [ $((align)) -ge 65536 ] || fail "$rel has a LOAD segment aligned to $align, which a 64 KiB-page kernel cannot map"
      done < <(readelf -lW "$f" | awk '$1 == "LOAD" {print $NF}')
    fi
    # (readelf -W --dyn-syms: 'name@GLIBC_2.17 (3)'; -V also lists the versions needed.)
    syms=$(readelf -W --dyn-syms -V "$f")
    max=$(grep -o 'GLIBC_[0-9][0-9.]*' <<<"$syms" | sed 's/GLIBC_//' | sort -Vu | tail -1)
    [ -n "$max" ] || fail "$rel: no GLIBC_ version at all (not dynamically linked against glibc?)"
    if above "$max" "$floor"; then
      fail "$rel needs GLIBC_$max, above the floor $floor: $(readelf -W --dyn-syms "$f" | grep -E "GLIBC_$max\b" | awk '{print $8}' | tr '\n' ' ')"
    fi
    [ "$(printf '%s\n%s\n' "$max" "$worst" | sort -V | tail -1)" = "$max" ] && worst=$max
    ! grep -qE 'GLIBCXX_|CXXABI_' <<<"$syms" || fail "$rel takes symbols from a shared libstdc++"
    while read -r lib; do
      [[ $allowed == *" $lib "* ]] || fail "$rel needs $lib (only glibc and the loader may be NEEDED)"
    done < <(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
  done < <(find "$scratch/$kind" -type f -print0)
  [ "$n" -ge 4 ] || fail "$kind: only $n ELF files (gpumap, gpumap-probe, libgpumap.so.1 and the simulated driver expected)"
  checked=$((checked + n))
done
pass "$checked $arch ELF files: newest glibc symbol GLIBC_$worst (floor $floor), NEEDED only glibc and the loader"

# What each artifact must hold, where.
top=$(ls "$scratch/tgz")
[ "$(echo "$top" | wc -l)" = 1 ] && [[ $top == gpumap-*-linux-$arch ]] || fail "the tarball has no single top folder: $top"
for f in bin/gpumap lib/libgpumap.so.1 lib/gpumap/gpumap-probe lib/gpumap/sim/libcuda.so.1 lib/gpumap/sim/libnvidia-ml.so.1 \
  include/gpumap/gpumap.h share/gpumap/hosts/dgx8.json share/gpumap/prometheus/gpumap-alerts.yml share/doc/gpumap/LICENSE \
  lib/pkgconfig/gpumap.pc; do
  [ -e "$scratch/tgz/$top/$f" ] || fail "the tarball lacks $f"
  [ -e "$scratch/deb/usr/$f" ] || fail "the .deb lacks /usr/$f"
  [ -e "$scratch/rpm/usr/$f" ] || fail "the .rpm lacks /usr/$f"
done
for f in gpumap/__init__.py gpumap/__main__.py gpumap/py.typed gpumap/_lib/libgpumap.so.1 gpumap/_lib/gpumap-probe gpumap/_lib/gpumap \
  gpumap/_lib/sim/libcuda.so.1 gpumap/_lib/hosts/dgx8.json; do
  [ -e "$scratch/whl/$f" ] || fail "the wheel lacks $f"
done
for d in "$scratch/tgz/$top" "$scratch/deb/usr" "$scratch/rpm/usr"; do
  compgen -G "$d/share/man/man1/gpumap.1*" >/dev/null || fail "${d#"$scratch/"} lacks the man page"
done
pass "the tarball, .deb, .rpm and wheel hold the command, the library, its helper, the simulated driver and the docs"

depends=$(dpkg-deb -f "$deb" Depends)
[ "$depends" = "libc6 (>= $floor)" ] || fail ".deb Depends is '$depends', not 'libc6 (>= $floor)'"
requires=$(rpm -qp --requires "$rpm" 2>/dev/null | grep -v '^rpmlib(' | sort -u | tr '\n' ';')
# (/bin/sh: rpmbuild's own, for the scriptlets CPack writes; every RHEL has it.)
[ "$requires" = "/bin/sh;glibc >= $floor;" ] || fail ".rpm Requires is '$requires', not 'glibc >= $floor' (and /bin/sh)"
provides=$(rpm -qp --provides "$rpm" 2>/dev/null | tr '\n' ';')
[[ $provides != *libcuda* && $provides != *libnvidia-ml* ]] || fail ".rpm provides the simulated driver: $provides"
wheel_tag=$(python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); print([l for l in z.read([n for n in z.namelist() if n.endswith(".dist-info/WHEEL")][0]).decode().splitlines() if l.startswith("Tag:")][0])' "$whl")
[ "$wheel_tag" = "Tag: py3-none-manylinux_${floor/./_}_$arch" ] || fail "the wheel's $wheel_tag"
[ "$(dpkg-deb -f "$deb" Architecture)" = "$deb_arch" ] || fail ".deb Architecture is $(dpkg-deb -f "$deb" Architecture), not $deb_arch"
[ "$(rpm -qp --qf '%{ARCH}' "$rpm" 2>/dev/null)" = "$arch" ] || fail ".rpm arch is $(rpm -qp --qf '%{ARCH}' "$rpm" 2>/dev/null), not $arch"
pass "$arch: the .deb depends on libc6 (>= $floor) alone, the .rpm requires glibc >= $floor (and /bin/sh), the wheel is manylinux_${floor/./_}"
