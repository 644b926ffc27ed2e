#!/usr/bin/env bash
# The release artifacts, made and used where they must run (CI's "portable release" stage):
#   1. scripts/release.sh OUTDIR: the tarball, .deb, .rpm and wheel, built in a Debian 11 root and
#      checked against the glibc floor (tests/release/check-artifacts.sh).
#   2. In a clean Debian 11 root (minbase + python3-pip, glibc 2.31; no compiler, no OpenSSL, no
#      yaml-cpp, no ncurses library): the tarball unpacked and run: map, list --json, doctor,
#      top --once, pods without a kubelet, serve with TLS and basic auth scraped by curl from outside
#      the root; the wheel installed with that root's pip (devices(), python -m gpumap); the .deb
#      installed with dpkg -i (the library found by the loader), then purged; the .rpm's payload
#      installed with rpm --root --nodeps and run there.
#   3. The .rpm into an empty root with rpm --root: its file list and requirements.
#   4. On this machine (Debian 12), as root: the .deb through apt-get, used as a person would (man
#      page, completion, a C program built with pkg-config), purged, nothing left; lintian.
# usage: tests/release/run.sh [OUTDIR]   (default build-release/artifacts); as root.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build-release/artifacts}
. tests/release/lib.sh tests/release/run.sh "debootstrap, chroot, dpkg"

scripts/release.sh "$out" || { echo "FAIL scripts/release.sh"; exit 1; }
out=$(cd "$out" && pwd)
floor=2.31
version=$(sed -n 's/^project(gpumap VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

# --- a clean Debian 11 root to run them in (kept in /var/cache, made again when missing) ---
runroot=${GPUMAP_RELEASE_RUN_ROOT:-/var/cache/gpumap/bullseye-run}
mirror=${GPUMAP_RELEASE_MIRROR:-http://deb.debian.org/debian}
stamp="bullseye minbase python3-pip"
if [ ! -f "$runroot/.gpumap-root" ] || [ "$(cat "$runroot/.gpumap-root")" != "$stamp" ]; then
  rm -rf "$runroot" "$runroot.new"
  mkdir -p "$(dirname "$runroot")"
  debootstrap --variant=minbase --include=python3-pip bullseye "$runroot.new" "$mirror" >"$runroot.log" 2>&1 ||
    { tail -20 "$runroot.log"; echo "FAIL debootstrap of the run root"; exit 1; }
  echo "$stamp" >"$runroot.new/.gpumap-root"
  mv "$runroot.new" "$runroot"
fi
# Each run starts from the root as debootstrap left it: a copy, removed on exit with its mounts.
scratch=$(mktemp -d)
r=$scratch/root
mounted=() pids=()
cleanup() {
  local p m
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  rm -rf "$scratch"
  if dpkg-query -W -f='${Status}' gpumap 2>/dev/null | grep -q "ok installed" && [ -n "${host_installed:-}" ]; then
    apt-get purge -y -q gpumap >/dev/null 2>&1
  fi
}
trap cleanup EXIT
cp -a "$runroot" "$r"
mount -t proc proc "$r/proc" && mounted+=("$r/proc")
[ "$(in_root ldd --version | head -1 | awk '{print $NF}')" = 2.31 ] && pass "the run root is Debian 11, glibc 2.31" ||
  fail "the run root's glibc" "$(in_root ldd --version | head -1)"
# (python3 and apt bring libssl, libncursesw and libstdc++ into any Debian 11; that gpumap uses none
# of them is what check-artifacts.sh's NEEDED check proves.  yaml-cpp and gRPC must not be there.)
for lib in libyaml-cpp.so.0.6 libgrpc++.so.1; do
  [ -z "$(find "$r/usr/lib" "$r/lib" -name "$lib" 2>/dev/null | head -1)" ] || fail "the run root has $lib: not a clean root"
done

# --- the tarball ---
mkdir -p "$r/opt/unpacked here"
tar -xzf "$out/gpumap-$version-linux-x86_64.tar.gz" -C "$r/opt/unpacked here"
G="/opt/unpacked here/gpumap-$version-linux-x86_64/bin/gpumap"
tarball_checks "$G" "$version"
o=$(in_root env GPUMAP_KUBELET_SOCKET=/nonexistent.sock "$G" pods --simulate dgx8 2>&1); rc=$?
[[ $rc != 139 && $rc != 134 && -n $o ]] && pass "tarball: pods without a kubelet answers (exit $rc): ${o%%$'\n'*}" ||
  fail "tarball: pods without a kubelet (exit $rc)" "$o"

# serve with TLS and basic auth, inside the root, scraped from outside it.
if command -v openssl >/dev/null && command -v curl >/dev/null; then
  w=$r/opt/web
  mkdir -p "$w"
  (
    cd "$w" &&
      openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=gpumap-test-ca -keyout ca.key -out ca.crt &&
      openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr &&
      printf 'subjectAltName=IP:127.0.0.1\n' >san.ext &&
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt
  ) >"$scratch/openssl.log" 2>&1 || fail "openssl" "$(tail -5 "$scratch/openssl.log")"
  hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
  printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prom: %s\n' "'$hash'" >"$w/web.yml"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # chroot and env exec gpumap in place: the PID kept is serve's own (a shell function run in the
  # background would be a subshell, and killing it would leave serve running).
  chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    "$G" serve --simulate dgx8 --listen "127.0.0.1:$port" --web.config.file /opt/web/web.yml >"$scratch/serve.log" 2>&1 &
  pids+=($!)
  code=000
  for _ in $(seq 100); do
    code=$(curl -s -m 5 -o "$scratch/m.prom" -w '%{http_code}' --cacert "$w/ca.crt" -u prom:pw "https://127.0.0.1:$port/metrics")
    [ "$code" = 000 ] || break
    sleep 0.1
  done
  [ "$code" = 200 ] && grep -q '^gpumap_' "$scratch/m.prom" && pass "tarball: serve with TLS + basic auth: 200 and gpumap_ series" ||
    fail "tarball: serve TLS scrape answered $code" "$(cat "$scratch/serve.log")"
  code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' --cacert "$w/ca.crt" -u prom:wrong "https://127.0.0.1:$port/metrics")
  [ "$code" = 401 ] && pass "tarball: serve, wrong password: 401" || fail "tarball: serve, wrong password answered $code"
  kill "${pids[-1]}" 2>/dev/null && wait "${pids[-1]}" 2>/dev/null
  ! pgrep -f "$G serve" >/dev/null && pass "tarball: serve stopped by its PID" || fail "tarball: serve still runs after kill"
else
  fail "openssl and curl are needed on this machine for the serve check (scripts/deps.sh --test)"
fi

# --- the wheel, with the root's own pip ---
cp "$out"/pygpumap-*.whl "$r/tmp/"
o=$(in_root python3 -m pip install --no-index --no-cache-dir /tmp/"$(basename "$out"/pygpumap-*.whl)" 2>&1) &&
  pass "wheel: pip install in Debian 11 (pip $(in_root python3 -m pip --version | awk '{print $2}'))" || fail "wheel: pip install" "$o"
o=$(cd /tmp && in_root env GPUMAP_SIMULATE=dgx8 python3 -c 'import gpumap; d = gpumap.devices(); print(len(d), d[0]["uuid"])' 2>&1) &&
  [[ $o == 8\ GPU-* ]] && pass "wheel: gpumap.devices() on the simulated dgx8: $o" || fail "wheel: devices()" "$o"
o=$(in_root env GPUMAP_SIMULATE=dgx8 CUDA_VISIBLE_DEVICES=0,0 python3 -m gpumap 2>&1); rc=$?
[ "$rc" = 7 ] && [[ $o == *duplicate* ]] && pass "wheel: python -m gpumap is doctor for this environment (exit 7)" ||
  fail "wheel: python -m gpumap (exit $rc)" "$o"
o=$(in_root python3 -m pip uninstall -y pygpumap 2>&1) && ! in_root python3 -c 'import gpumap' 2>/dev/null &&
  pass "wheel: pip uninstall pygpumap" || fail "wheel: uninstall" "$o"

# --- the .deb, with dpkg -i in the same root ---
cp "$out/gpumap_${version}_amd64.deb" "$r/tmp/"
o=$(in_root dpkg -i "/tmp/gpumap_${version}_amd64.deb" 2>&1) && pass "deb: dpkg -i in Debian 11" || fail "deb: dpkg -i" "$o"
o=$(in_root gpumap list --simulate h200x2 2>&1) && [[ $o == *H200* ]] && pass "deb: /usr/bin/gpumap runs" || fail "deb: gpumap" "$o"
o=$(in_root python3 -c 'import ctypes; l = ctypes.CDLL("libgpumap.so.1"); l.gpumap_version.restype = ctypes.c_char_p; print(l.gpumap_version().decode())' 2>&1) &&
  pass "deb: the loader finds libgpumap.so.1 ($o)" || fail "deb: libgpumap.so.1 by name" "$o"
o=$(in_root dpkg --purge gpumap 2>&1) && [ -z "$(find "$r/usr" -path '*gpumap*' 2>/dev/null)" ] &&
  pass "deb: purged, nothing left under /usr" || fail "deb: purge" "$o $(find "$r/usr" -path '*gpumap*' | head)"

# --- the .rpm: into the Debian 11 root (its payload runs on glibc 2.31), and into an empty root ---
rpmfile=$(ls "$out"/gpumap-*.x86_64.rpm)
if command -v rpm >/dev/null; then
  o=$(rpm --root "$r" --initdb 2>&1 && rpm --root "$r" -i --nodeps --nosignature "$rpmfile" 2>&1) &&
    pass "rpm: installed into the Debian 11 root" || fail "rpm: rpm --root -i" "$o"
  o=$(in_root gpumap --simulate mig 2>&1) && [[ $o == *MIG* ]] && pass "rpm: /usr/bin/gpumap runs there" || fail "rpm: gpumap" "$o"
  empty=$scratch/empty
  mkdir -p "$empty"
  rpm --root "$empty" --initdb && o=$(rpm --root "$empty" -i --nodeps --nosignature --noscripts "$rpmfile" 2>&1) ||
    fail "rpm: into an empty root" "$o"
  files=$(rpm --root "$empty" -ql gpumap)
  for f in /usr/bin/gpumap /usr/lib/libgpumap.so.1 /usr/lib/gpumap/gpumap-probe /usr/include/gpumap/gpumap.h \
    /usr/lib/pkgconfig/gpumap.pc /usr/share/gpumap/hosts/dgx8.json /usr/lib/systemd/system/gpumap-serve.service \
    /usr/share/zsh/site-functions/_gpumap /usr/lib/tmpfiles.d/gpumap.conf; do
    grep -qx "$f" <<<"$files" || fail "rpm: the file list lacks $f"
  done
  # (issue 53: RHEL's zsh reads site-functions; no made-up URL; the lease folder made at install)
  [ "$(rpm -qp --nosignature --qf '%{URL}' "$rpmfile")" = "(none)" ] || fail "rpm: URL $(rpm -qp --nosignature --qf '%{URL}' "$rpmfile")"
  rpm -qp --nosignature --scripts "$rpmfile" | grep -q 'systemd-tmpfiles --create gpumap.conf' &&
    pass "rpm: %post creates the lease folder (tmpfiles.d/gpumap.conf)" || fail "rpm: no %post for the lease folder"
  for d in /usr /usr/bin /usr/lib /usr/include /usr/share /usr/share/man /usr/lib/systemd/system; do
    ! grep -qx "$d" <<<"$files" || fail "rpm: claims the folder $d (the filesystem package's)"
  done
  [ "$(rpm --root "$empty" -qR gpumap | grep -v '^rpmlib(' | sort -u | tr '\n' ' ')" = "/bin/sh glibc >= $floor " ] &&
    pass "rpm: $(wc -l <<<"$files") paths, requires glibc >= $floor (and /bin/sh)" || fail "rpm: requires" "$(rpm --root "$empty" -qR gpumap)"
else
  fail "rpm is not installed on this machine (apt-get install rpm)"
fi

# --- the .deb on this machine (Debian 12) through apt-get, as a person would ---
if dpkg-query -W -f='${Status}' gpumap 2>/dev/null | grep -q "ok installed"; then
  echo "note: gpumap is installed on this machine: the apt-get check is left out"
else
  before=$(dpkg-query -W -f='${Package} ${Version}\n' | sort)
  o=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$out/gpumap_${version}_amd64.deb" 2>&1) && host_installed=1 &&
    pass "host: apt-get install ./gpumap_${version}_amd64.deb" || fail "host: apt-get install" "$o"
  [ "$(command -v gpumap)" = /usr/bin/gpumap ] && /usr/bin/gpumap --simulate seed-mixed >/dev/null &&
    pass "host: gpumap on PATH runs" || fail "host: gpumap on PATH"
  if command -v man >/dev/null; then
    [ "$(man -w gpumap 2>/dev/null)" = /usr/share/man/man1/gpumap.1.gz ] && man gpumap 2>/dev/null | grep -q CUDA_VISIBLE_DEVICES && pass "host: man gpumap" || fail "host: man -w gpumap: $(man -w gpumap 2>&1)"
  fi
  ls /usr/share/bash-completion/completions/gpumap >/dev/null && pass "host: bash completion installed" || fail "host: bash completion"
  if command -v cc >/dev/null && command -v pkg-config >/dev/null; then
    printf '#include <gpumap/gpumap.h>\n#include <stdio.h>\nint main(void) { printf("%%s %%d\\n", gpumap_version(), gpumap_api_version()); return gpumap_api_version() == GPUMAP_API_VERSION ? 0 : 1; }\n' >"$scratch/c.c"
    # shellcheck disable=SC2046  # (pkg-config's words)
    o=$(cc "$scratch/c.c" -o "$scratch/c" $(pkg-config --cflags --libs gpumap) 2>&1 && "$scratch/c" 2>&1) &&
      pass "host: a C program built with pkg-config runs ($o)" || fail "host: C program" "$o"
  fi
  if command -v lintian >/dev/null; then
    o=$(lintian --fail-on error,warning "$out/gpumap_${version}_amd64.deb" 2>&1) && pass "host: lintian clean" ||
      fail "host: lintian" "$o"
  fi
  o=$(DEBIAN_FRONTEND=noninteractive apt-get purge -y -q gpumap 2>&1) && host_installed= || fail "host: purge" "$o"
  left=$(find /usr /etc -path '*gpumap*' 2>/dev/null | grep -v "^$PWD" | head)
  [ -z "$left" ] && [ "$(dpkg-query -W -f='${Package} ${Version}\n' | sort)" = "$before" ] &&
    pass "host: purged; nothing left, no other package changed" || fail "host: after purge" "$left"
fi

[ "$failed" = 0 ] && echo "release: all passed" || echo "release: FAILED"
exit "$failed"
