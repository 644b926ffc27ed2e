#!/usr/bin/env bash
# The node image for contrib/kubernetes/gpumap-daemonset.yaml: an OCI image layout (oci-layout,
# index.json, blobs/sha256/), made from the release tarball(s) without a registry or a container
# runtime, byte for byte the same from the same inputs (sorted tar, fixed owners and mtimes, gzip -n).
#   scripts/image.sh ARTIFACTS IMAGEDIR [--arch x86_64|aarch64|all]
# ARTIFACTS: scripts/release.sh's OUTDIR (gpumap-VERSION-linux-ARCH.tar.gz); --arch: which (default:
# every architecture whose tarball is there); one manifest per architecture in one image index, tagged
# VERSION (org.opencontainers.image.ref.name) and named gpumap:VERSION for containerd's import
# (io.containerd.image.name: docker.io/library/gpumap:VERSION, the DaemonSet's `image: gpumap:VERSION`).
# Put it where the nodes pull from (docs/install.md, "Node image"):
#   skopeo copy --all oci:IMAGEDIR:VERSION docker://REGISTRY/gpumap:VERSION
#   tar -C IMAGEDIR -cf gpumap-image.tar . && ctr -n k8s.io images import --all-platforms gpumap-image.tar
#
# Two layers.  The base: Debian 12's libc6 and libgcc-s1 (.debs fetched with apt-get download from
# the Debian archive, $GPUMAP_IMAGE_MIRROR, kept in /var/cache/gpumap/image-debs/), merged-/usr like
# bookworm, without gconv, locales and manuals; /etc/passwd and /etc/group with root, nobody and the
# user the image runs as (gpumap, 65532); /etc/nsswitch.conf (files); /tmp; the two packages' control
# files in /var/lib/dpkg/status.d/ (scanners see glibc's version).  gpumap needs nothing else: every
# program in the release links only glibc (tests/release/check-artifacts.sh); the driver's libraries
# come from the node (the NVIDIA container runtime); serve and gpumap-kubelet make no outgoing TLS
# connection, so no CA certificates.  The second layer: the release's bin/gpumap, lib/gpumap/
# (gpumap-kubelet, gpumap-probe, the simulated driver), share/gpumap/ (the simulated hosts, the
# alert rules) and share/doc/gpumap/ under /usr; not the C API, headers, man page or completion.
# User 65532:65532 by default; reading other users' /proc/PID/environ (their cuda:N) needs
# CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH (docs/install.md): the DaemonSet runs it as root with those two.
# Mtimes: $SOURCE_DATE_EPOCH, else the commit date of HEAD.  As root (file owners in the layers).
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "image.sh: $*" >&2; exit 1; }
usage() { echo "usage: scripts/image.sh ARTIFACTS IMAGEDIR [--arch x86_64|aarch64|all]" >&2; exit 2; }
pos=() arches=()
while [ $# -gt 0 ]; do
  case $1 in
    --arch) [ $# -ge 2 ] || usage
      case $2 in x86_64 | aarch64) arches=("$2") ;; all) arches=(x86_64 aarch64) ;; *) die "--arch $2: x86_64, aarch64 or all" ;; esac
      shift 2 ;;
    -*) usage ;;
    *) pos+=("$1"); shift ;;
  esac
done
[ ${#pos[@]} = 2 ] || usage
artifacts=${pos[0]} imagedir=${pos[1]}
[ "$(id -u)" = 0 ] || die "needs root (the layers' files are root's); run: sudo scripts/image.sh $artifacts $imagedir"
version=$(sed -n 's/^project(gpumap VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
if [ ${#arches[@]} = 0 ]; then
  for a in x86_64 aarch64; do [ -f "$artifacts/gpumap-$version-linux-$a.tar.gz" ] && arches+=("$a"); done
  [ ${#arches[@]} -gt 0 ] || die "no gpumap-$version-linux-*.tar.gz in $artifacts (make them with scripts/release.sh $artifacts)"
fi
for a in "${arches[@]}"; do
  [ -f "$artifacts/gpumap-$version-linux-$a.tar.gz" ] || die "$artifacts/gpumap-$version-linux-$a.tar.gz is missing (scripts/release.sh $artifacts --arch $a)"
done
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD 2>/dev/null || echo 0)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
uid=65532
mirror=${GPUMAP_IMAGE_MIRROR:-http://deb.debian.org/debian}
debs=/var/cache/gpumap/image-debs
umask 022
export LC_ALL=C
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Debian 12's libc6 and libgcc-s1 for one architecture, with apt-get of this machine and a private
# list of sources (this machine's own apt configuration is not touched).
fetch_debs() {  # DEBARCH -> the .deb paths, one a line
  local da=$1 d=$debs/$1 apt
  mkdir -p "$d/state/lists/partial" "$d/cache/archives/partial" "$d/etc/preferences.d"
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s-security bookworm-security main\n' \
    "$mirror" "$mirror" "${mirror%/debian}/debian" >"$d/etc/sources.list"
  apt=(apt-get -q -o "Dir::State=$d/state" -o "Dir::Cache=$d/cache" -o "Dir::Etc::SourceList=$d/etc/sources.list"
    -o Dir::Etc::SourceParts=/nonexistent -o "Dir::Etc::Preferences=$d/etc/preferences" -o "Dir::Etc::PreferencesParts=$d/etc/preferences.d"
    -o "APT::Architecture=$da" -o "APT::Architectures::=$da" -o Debug::NoLocking=1)
  "${apt[@]}" update >"$d/update.log" 2>&1 || { tail -5 "$d/update.log" >&2; die "apt-get update for bookworm $da failed"; }
  (cd "$d" && rm -f ./*.deb && "${apt[@]}" download "libc6:$da" "libgcc-s1:$da" >"$d/download.log" 2>&1) ||
    { tail -5 "$d/download.log" >&2; die "apt-get download libc6:$da libgcc-s1:$da failed"; }
  ls "$d"/*.deb
}

# A layer: the folder's tree as a sorted tar (root's, mtime $epoch), gzip -n; its blob and diff_id.
blob() {  # FILE MEDIATYPE -> sets blob_digest blob_size; the file moved into blobs/
  local h
  h=$(sha256sum "$1" | awk '{print $1}')
  blob_size=$(stat -c %s "$1") blob_digest=sha256:$h
  mv "$1" "$imagedir.new/blobs/sha256/$h"
}
layer() {  # DIR -> sets layer_digest layer_size layer_diff
  local dir=$1 t=$scratch/layer.tar
  # (the top entries named in order; tar recurses into each in name order)
  (cd "$dir" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | sort | tar -cf "$t" --sort=name --format=posix \
    --numeric-owner --owner=0 --group=0 --mtime="@$epoch" --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
    --no-xattrs --no-acls --no-selinux -T -)
  layer_diff=sha256:$(sha256sum "$t" | awk '{print $1}')
  gzip -9n <"$t" >"$t.gz"
  rm -f "$t"
  blob "$t.gz"
  layer_digest=$blob_digest layer_size=$blob_size
}

rm -rf "$imagedir.new"
mkdir -p "$imagedir.new/blobs/sha256"
manifests=()
for arch in "${arches[@]}"; do
  case $arch in x86_64) da=amd64 triplet=x86_64-linux-gnu ;; aarch64) da=arm64 triplet=aarch64-linux-gnu ;; esac
  # --- the base layer ---
  base=$scratch/$arch/base
  mkdir -p "$base"
  mapfile -t pkgs < <(fetch_debs "$da")
  [ ${#pkgs[@]} = 2 ] || die "expected libc6 and libgcc-s1 for $da, got: ${pkgs[*]}"
  mkdir -p "$base/var/lib/dpkg/status.d"
  for p in "${pkgs[@]}"; do
    dpkg-deb -x "$p" "$base"
    name=$(dpkg-deb -f "$p" Package)
    dpkg-deb -f "$p" Package Version Architecture Source Multi-Arch Maintainer >"$base/var/lib/dpkg/status.d/$name"
  done
  # merged /usr, as bookworm: /lib, /lib64, /bin, /sbin are links into /usr
  for d in bin sbin lib lib64; do
    if [ -d "$base/$d" ] && [ ! -L "$base/$d" ]; then
      mkdir -p "$base/usr/$d" && cp -a "$base/$d/." "$base/usr/$d/" && rm -rf "${base:?}/$d"
    fi
    ln -s "usr/$d" "$base/$d"
  done
  mkdir -p "$base/usr/bin" "$base/usr/sbin" "$base/usr/lib64"
  # What gpumap never uses: character set converters, locales, manuals, lintian's notes, getconf.
  rm -rf "$base/usr/lib/$triplet/gconv" "$base/usr/share/locale" "$base/usr/share/man" "$base/usr/share/lintian" \
    "$base/usr/share/i18n" "$base/usr/libexec" "$base/usr/lib/$triplet/audit"
  find "$base/usr/share/doc" -type f ! -name copyright -delete
  # (/proc, /sys, /dev: where the runtime mounts them; nothing of the user's to own: it writes only /tmp)
  mkdir -p "$base/etc" "$base/tmp" "$base/root" "$base/proc" "$base/sys" "$base/dev"
  chmod 1777 "$base/tmp"
  chmod 700 "$base/root"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\ngpumap:x:%s:%s:gpumap:/nonexistent:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
    "$uid" "$uid" >"$base/etc/passwd"
  printf 'root:x:0:\ngpumap:x:%s:\nnogroup:x:65534:\n' "$uid" >"$base/etc/group"
  printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' >"$base/etc/nsswitch.conf"
  printf 'include /etc/ld.so.conf.d/*.conf\n' >"$base/etc/ld.so.conf"
  # --- the gpumap layer ---
  app=$scratch/$arch/app
  tree=$scratch/$arch/tarball
  mkdir -p "$app/usr/bin" "$app/usr/lib" "$app/usr/share/doc" "$tree"
  tar -xzf "$artifacts/gpumap-$version-linux-$arch.tar.gz" -C "$tree"
  top=$tree/gpumap-$version-linux-$arch
  cp -a "$top/bin/gpumap" "$app/usr/bin/"
  cp -a "$top/lib/gpumap" "$app/usr/lib/"
  cp -a "$top/share/gpumap" "$app/usr/share/"
  cp -a "$top/share/doc/gpumap" "$app/usr/share/doc/"
  # --- the image ---
  layer "$base"
  base_digest=$layer_digest base_size=$layer_size base_diff=$layer_diff
  layer "$app"
  app_digest=$layer_digest app_size=$layer_size app_diff=$layer_diff
  libc_version=$(dpkg-deb -f "$(printf '%s\n' "${pkgs[@]}" | grep /libc6_)" Version)
  python3 - "$scratch/config.json" "$da" "$created" "$uid" "$version" "$base_diff" "$app_diff" "$libc_version" <<'EOF'
import json, sys
path, arch, created, uid, version, base_diff, app_diff, libc = sys.argv[1:]
config = {
    "architecture": arch, "os": "linux", "created": created,
    "config": {
        "User": f"{uid}:{uid}",
        "Entrypoint": ["/usr/bin/gpumap"],
        "Cmd": ["serve", "--listen", "0.0.0.0:9467"],
        "Env": ["PATH=/usr/bin:/bin"],
        "WorkingDir": "/",
        "ExposedPorts": {"9467/tcp": {}},
        "Labels": {
            "org.opencontainers.image.title": "gpumap",
            "org.opencontainers.image.version": version,
            "org.opencontainers.image.description": "gpumap serve: a Prometheus exporter that knows each GPU process's pod and cuda:N",
            "org.opencontainers.image.licenses": "Apache-2.0",
            "org.opencontainers.image.base.name": f"debian bookworm libc6 {libc} (scripts/image.sh)",
        },
    },
    "rootfs": {"type": "layers", "diff_ids": [base_diff, app_diff]},
    "history": [
        {"created": created, "created_by": f"scripts/image.sh: Debian 12 libc6 {libc} and libgcc-s1, /etc/passwd, /etc/group, /tmp"},
        {"created": created, "created_by": f"scripts/image.sh: gpumap {version} from gpumap-{version}-linux tarball into /usr"},
    ],
}
open(path, "w").write(json.dumps(config, sort_keys=True, separators=(",", ":")))
EOF
  blob "$scratch/config.json"
  config_digest=$blob_digest config_size=$blob_size
  python3 - "$scratch/manifest.json" "$config_digest" "$config_size" "$base_digest" "$base_size" "$app_digest" "$app_size" <<'EOF'
import json, sys
path, cd, cs, bd, bs, ad, as_ = sys.argv[1:]
layer = "application/vnd.oci.image.layer.v1.tar+gzip"
m = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
     "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": int(cs)},
     "layers": [{"mediaType": layer, "digest": bd, "size": int(bs)}, {"mediaType": layer, "digest": ad, "size": int(as_)}]}
open(path, "w").write(json.dumps(m, sort_keys=True, separators=(",", ":")))
EOF
  blob "$scratch/manifest.json"
  manifests+=("$blob_digest $blob_size $da")
  echo "== $arch ($da): manifest $blob_digest; layers $((base_size / 1024)) KiB (Debian 12 libc6 $libc_version) + $((app_size / 1024)) KiB (gpumap)"
done
# index.json names one image index (a blob) that lists the manifest of each architecture: one tag,
# VERSION, for all of them (skopeo copy --all oci:IMAGEDIR:VERSION; containerd's import).
python3 - "$scratch/index.json" "${manifests[@]}" <<'EOF'
import json, sys
out, *ms = sys.argv[1:]
index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []}
for m in ms:
    digest, size, arch = m.split()
    index["manifests"].append({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest,
                               "size": int(size), "platform": {"architecture": arch, "os": "linux"}})
open(out, "w").write(json.dumps(index, sort_keys=True, separators=(",", ":")))
EOF
blob "$scratch/index.json"
python3 - "$imagedir.new" "$version" "$blob_digest" "$blob_size" <<'EOF'
import json, sys
out, version, digest, size = sys.argv[1:]
top = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [{
    "mediaType": "application/vnd.oci.image.index.v1+json", "digest": digest, "size": int(size),
    "annotations": {"org.opencontainers.image.ref.name": version,
                    "io.containerd.image.name": f"docker.io/library/gpumap:{version}"}}]}
open(out + "/index.json", "w").write(json.dumps(top, sort_keys=True, separators=(",", ":")))
open(out + "/oci-layout", "w").write(json.dumps({"imageLayoutVersion": "1.0.0"}))
EOF
rm -rf "$imagedir"
mv "$imagedir.new" "$imagedir"
total=$(du -sb "$imagedir/blobs" | awk '{print $1}')
echo "== OCI image layout in $imagedir: gpumap:$version for ${arches[*]}, $((total / 1024)) KiB of blobs"
