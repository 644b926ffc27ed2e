#!/usr/bin/env bash
# The node image (scripts/image.sh), built and run where no container runtime is (CI's "node image"
# stage): built twice from the release tarball (the same bytes: reproducible); its OCI layout read
# back (every blob's sha256 is its name, sizes and diff_ids as declared, one manifest per
# architecture); its layers unpacked into a folder and its file list checked (the command, its
# helpers, the simulated driver and hosts, glibc; no shell, no package manager, no C API headers);
# then run from that folder as a plain process tree, the way a runtime would: a PID and mount
# namespace of its own (unshare), /proc mounted, chroot into it as the image's user with its
# entrypoint, `serve --simulate dgx8`; /metrics and /healthz scraped by curl from outside, the
# simulated host's eight GPUs checked in gpumap_gpu_info's labels, the process's uid checked.
# Every architecture whose release tarball is in OUTDIR: x86_64 natively, aarch64 under qemu-user
# (binfmt_misc, tests/release/binfmt.sh: registered if missing, left as found).
# Also measured here: which capabilities a non-root process needs to read another user's
# /proc/PID/environ (what docs/install.md tells the DaemonSet to add).
# usage: tests/release/image.sh [OUTDIR]  (default build-release/artifacts, holding the release
# tarball: scripts/release.sh OUTDIR, tests/release/run.sh); as root.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
out=${1:-build-release/artifacts}
. tests/release/lib.sh tests/release/image.sh "unshare, chroot"
version=$(sed -n 's/^project(gpumap VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
arches=()
for a in x86_64 aarch64; do [ -f "$out/gpumap-$version-linux-$a.tar.gz" ] && arches+=("$a"); done
[ ${#arches[@]} -gt 0 ] || { echo "FAIL no $out/gpumap-$version-linux-*.tar.gz: run scripts/release.sh $out first"; exit 1; }
out=$(cd "$out" && pwd)
. tests/release/binfmt.sh
scratch=$(mktemp -d)
pids=()
cleanup() {
  local p
  # (KILL: unshare --fork ignores TERM while it waits; --kill-child then ends serve with it)
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$scratch"
  binfmt_restore
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t0=$SECONDS
img=$out/image
scripts/image.sh "$out" "$img" || { echo "FAIL scripts/image.sh"; exit 1; }
echo "== built in $((SECONDS - t0)) s"
scripts/image.sh "$out" "$scratch/again" >/dev/null || fail "scripts/image.sh, the second time"
o=$(diff -r "$img" "$scratch/again" 2>&1) && pass "the image is the same bytes when built again ($(cut -c1-80 <"$img/index.json")...)" ||
  fail "the second build differs" "$o"
rm -rf "$scratch/again"

for arch in "${arches[@]}"; do
  echo "== $arch"
  if [ "$arch" != "$(uname -m)" ]; then
    [ "$arch" = aarch64 ] && binfmt_aarch64_on || { fail "$arch: no way to run its programs here"; continue; }
  fi
  # --- the OCI layout, read back ---
  rootfs=$scratch/rootfs-$arch
  mkdir -p "$rootfs"
  o=$(python3 - "$img" "$rootfs" "$arch" <<'EOF' 2>&1
import gzip, hashlib, json, os, sys, tarfile
img, rootfs, arch = sys.argv[1:]
goarch = {"x86_64": "amd64", "aarch64": "arm64"}[arch]
def blob(desc, media):
    assert desc["mediaType"] == media, (desc["mediaType"], media)
    algo, h = desc["digest"].split(":")
    data = open(os.path.join(img, "blobs", algo, h), "rb").read()
    assert algo == "sha256" and hashlib.sha256(data).hexdigest() == h, "blob " + h + ": its sha256 is not its name"
    assert len(data) == desc["size"], "blob " + h + ": size differs from its descriptor"
    return data
assert json.load(open(os.path.join(img, "oci-layout"))) == {"imageLayoutVersion": "1.0.0"}
top = json.load(open(os.path.join(img, "index.json")))
assert top["schemaVersion"] == 2 and len(top["manifests"]) == 1, "index.json: one tagged index expected"
tagged = top["manifests"][0]
idx = json.loads(blob(tagged, "application/vnd.oci.image.index.v1+json"))
mine = [m for m in idx["manifests"] if m["platform"] == {"architecture": goarch, "os": "linux"}]
assert len(mine) == 1, "no single linux/" + goarch + " manifest"
man = json.loads(blob(mine[0], "application/vnd.oci.image.manifest.v1+json"))
cfg = json.loads(blob(man["config"], "application/vnd.oci.image.config.v1+json"))
assert cfg["architecture"] == goarch and cfg["os"] == "linux"
diffs = []
for layer in man["layers"]:
    raw = gzip.decompress(blob(layer, "application/vnd.oci.image.layer.v1.tar+gzip"))
    diffs.append("sha256:" + hashlib.sha256(raw).hexdigest())
    with tarfile.open(os.path.join(img, "blobs", *layer["digest"].split(":")), "r:gz") as t:
        for m in t.getmembers():
            assert not os.path.basename(m.name).startswith(".wh."), "a whiteout in a fresh image: " + m.name
            assert m.uid == 0 and m.gid == 0, m.name + " is not root's"
        t.extractall(rootfs, numeric_owner=True)
assert cfg["rootfs"]["diff_ids"] == diffs, "diff_ids differ from the layers"
c = cfg["config"]
print(tagged["annotations"]["org.opencontainers.image.ref.name"], c["User"], json.dumps(c["Entrypoint"], separators=(",", ":")),
      json.dumps(c["Cmd"], separators=(",", ":")), sum(l["size"] for l in man["layers"]) + man["config"]["size"] + mine[0]["size"],
      len(man["layers"]), ":".join(c["Env"]))
EOF
  )
  if [ $? = 0 ]; then
    read -r ref user entrypoint cmd compressed nlayers env <<<"$o"
    [ "$ref" = "$version" ] && [ "$user" = 65532:65532 ] && [ "$entrypoint" = '["/usr/bin/gpumap"]' ] &&
      [ "$cmd" = '["serve","--listen","0.0.0.0:9467"]' ] &&
      pass "OCI layout: tag $ref, linux/$arch manifest, $nlayers layers whose digests, sizes and diff_ids hold; user $user, entrypoint $entrypoint $cmd" ||
      fail "the image's config" "$o"
  else
    fail "the OCI layout" "$o"
  fi

  # --- its file list ---
  files=$(cd "$rootfs" && find . -mindepth 1 \( -type f -o -type l \) -printf '%P\n' | sort)
  for f in usr/bin/gpumap usr/lib/gpumap/gpumap-kubelet usr/lib/gpumap/gpumap-probe usr/lib/gpumap/sim/libcuda.so.1 \
    usr/lib/gpumap/sim/libnvidia-ml.so.1 usr/share/gpumap/hosts/dgx8.json usr/share/gpumap/prometheus/gpumap-alerts.yml \
    usr/share/doc/gpumap/LICENSE "usr/lib/$arch-linux-gnu/libc.so.6" etc/passwd etc/group etc/nsswitch.conf \
    usr/share/doc/libc6/copyright var/lib/dpkg/status.d/libc6 lib lib64 bin sbin; do
    grep -qx "$f" <<<"$files" || fail "the image lacks /$f"
  done
  [ "$(cd "$rootfs" && ls usr/bin)" = gpumap ] && [ -z "$(ls "$rootfs/usr/sbin")" ] &&
    pass "the image's /usr/bin holds gpumap alone (no shell, no package manager, nothing in /usr/sbin)" ||
    fail "the image's /usr/bin and /usr/sbin" "$(ls "$rootfs/usr/bin" "$rootfs/usr/sbin")"
  bad=$(grep -E '^(usr/include|usr/lib/libgpumap|usr/lib/pkgconfig|usr/lib/cmake|usr/share/man|usr/share/(bash-completion|zsh|fish)|usr/lib/systemd|usr/lib/.*/gconv|usr/share/locale|bin/sh$|usr/bin/(sh|bash|dash|apt|dpkg))' <<<"$files")
  [ -z "$bad" ] && pass "the image holds no headers, C API, man page, completion, service file, gconv or locales" ||
    fail "the image holds what it should not" "$bad"
  [ "$(stat -c %a "$rootfs/tmp")" = 1777 ] && grep -q '^gpumap:x:65532:65532:' "$rootfs/etc/passwd" &&
    pass "/tmp is 1777; the user 65532 is gpumap in /etc/passwd" || fail "/tmp or /etc/passwd"
  size=$(du -sb "$rootfs" | awk '{print $1}')
  echo "== image: $(wc -l <<<"$files") files, $((compressed / 1024)) KiB compressed (what a node pulls), $((size / 1024)) KiB unpacked"

  # --- run it: serve from its own file system, as its user ---
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  # (a mount and PID namespace of its own: /proc mounted there goes away with it; --kill-child ends
  # serve when the unshare process is killed; chroot then execs the entrypoint inside the image)
  unshare --mount --pid --fork --kill-child --propagation private sh -c '
    mount -t proc proc "$1/proc" && exec env -i "$2" "$6" --userspec="$3" "$1" "$4" serve --simulate dgx8 --listen "127.0.0.1:$5"
  ' sh "$rootfs" "$env" "$user" /usr/bin/gpumap "$port" "$(command -v chroot)" >"$scratch/serve.log" 2>&1 &
  pids+=($!)
  code=000
  for _ in $(seq 300); do
    code=$(curl -s -m 5 -o "$scratch/m.prom" -w '%{http_code}' "http://127.0.0.1:$port/metrics")
    [ "$code" = 000 ] || break
    sleep 0.1
  done
  want=$(python3 -c 'import json,sys; print("\n".join(sorted(g["uuid"] for g in json.load(open(sys.argv[1]))["gpus"])))' "$rootfs/usr/share/gpumap/hosts/dgx8.json")
  got=$(sed -n 's/^gpumap_gpu_info{.*uuid="\([^"]*\)".*/\1/p' "$scratch/m.prom" 2>/dev/null | sort)
  idx=$(sed -n 's/^gpumap_gpu_info{.*nvml_index="\([0-9]*\)".*/\1/p' "$scratch/m.prom" 2>/dev/null | sort -n | tr '\n' ' ')
  [ "$code" = 200 ] && [ "$got" = "$want" ] && [ "$idx" = "0 1 2 3 4 5 6 7 " ] &&
    grep -q '^gpumap_driver_info{.*simulated="true"' "$scratch/m.prom" && grep -qx 'gpumap_exporter_up 1' "$scratch/m.prom" &&
    pass "serve from the image: 200, gpumap_gpu_info for the dgx8's eight GPUs (uuid and nvml_index 0-7 labels), driver_info simulated, exporter_up 1" ||
    fail "serve from the image answered $code" "$(cat "$scratch/serve.log"; grep -E '^gpumap_(gpu_info|driver_info|exporter_up)' "$scratch/m.prom" 2>/dev/null | head)"
  code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")
  [ "$code" = 200 ] && pass "serve from the image: /healthz 200 (the DaemonSet's probes)" || fail "/healthz answered $code"
  spid=$(pgrep -P "${pids[-1]}" | head -1)
  uid=$(awk '/^Uid:/ {print $2}' "/proc/$spid/status" 2>/dev/null)
  exe=$(readlink "/proc/$spid/root" 2>/dev/null)
  [ "$uid" = 65532 ] && [ "$exe" = "$rootfs" ] && pass "serve runs as uid 65532 with the image as its root" ||
    fail "serve's uid '$uid', root '$exe'"
  # (serve itself is stopped, as a runtime stops a container; unshare ignores TERM while it waits)
  [ -n "$spid" ] && kill -TERM "$spid" 2>/dev/null
  wait "${pids[-1]}" 2>/dev/null
  [ -n "$spid" ] && ! kill -0 "$spid" 2>/dev/null && pass "serve ended with its namespace" || fail "serve ('$spid') still runs, or never ran"

done

# --- the capabilities the DaemonSet gives it, measured on this kernel (proc_pid_environ(5): a
# PTRACE_MODE_READ_FSCREDS check; the file is 0400, its owner's) ---
sleep 60 &
target=$!
pids+=("$target")
r=''
for caps in none +sys_ptrace +dac_read_search +sys_ptrace,+dac_read_search; do
  a=()
  [ "$caps" = none ] || a=(--inh-caps "$caps" --ambient-caps "$caps")
  if setpriv --reuid 65532 --regid 65532 --clear-groups "${a[@]}" head -c 1 "/proc/$target/environ" >/dev/null 2>&1; then
    r="$r $caps:read"
  else
    r="$r $caps:denied"
  fi
done
[ "$r" = " none:denied +sys_ptrace:denied +dac_read_search:denied +sys_ptrace,+dac_read_search:read" ] &&
  pass "uid 65532 reads root's /proc/PID/environ with CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, not with either alone" ||
  fail "reading another user's environ:$r"

echo "== node image stage: $((SECONDS - t0)) s"
[ "$failed" = 0 ] && echo "image: all passed" || echo "image: FAILED"
exit "$failed"
