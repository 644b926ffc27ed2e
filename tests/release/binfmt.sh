# shellcheck shell=bash
# Sourced by tests/release/aarch64.sh and tests/release/image.sh: aarch64 programs run on this
# x86_64 machine by the kernel's binfmt_misc through Debian 12's qemu-aarch64-static.
#   binfmt_aarch64_on   makes sure binfmt_misc is mounted and an enabled handler for aarch64 ELF
#                       files exists: one that was there is used as it is; a missing one is
#                       registered (flag F: the interpreter is opened now, so it also works inside
#                       a chroot without a copy of qemu there).  Sets binfmt_interp and binfmt_flags.
#   binfmt_restore      removes what binfmt_aarch64_on added (the handler, the binfmt_misc mount),
#                       nothing else; call it from the EXIT trap.
binfmt_dir=/proc/sys/fs/binfmt_misc
binfmt_mounted='' binfmt_registered='' binfmt_interp='' binfmt_flags=''
binfmt_aarch64_on() {
  local qemu=/usr/bin/qemu-aarch64-static f handler='' name=gpumap-qemu-aarch64
  if [ ! -x "$qemu" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends qemu-user-static >/dev/null 2>&1 ||
      { echo "qemu-user-static is not installed and could not be (apt-get install qemu-user-static)" >&2; return 1; }
  fi
  if [ ! -e "$binfmt_dir/register" ]; then
    mount -t binfmt_misc binfmt_misc "$binfmt_dir" || { echo "could not mount binfmt_misc on $binfmt_dir" >&2; return 1; }
    binfmt_mounted=1
  fi
  # An enabled handler for aarch64 ELF executables, whatever its name (binfmt-support and
  # systemd-binfmt call theirs qemu-aarch64).
  for f in "$binfmt_dir"/*; do
    [ -f "$f" ] && grep -q '^magic 7f454c460201010000000000000000000200b700' "$f" 2>/dev/null && grep -qx enabled "$f" &&
      { handler=$f; break; }
  done
  if [ -z "$handler" ]; then
    printf '%s' ":$name:M::\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02\\x00\\xb7\\x00:\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xfe\\xff\\xff\\xff:$qemu:F" \
      >"$binfmt_dir/register" || { echo "could not register $qemu with binfmt_misc" >&2; return 1; }
    binfmt_registered=$name handler=$binfmt_dir/$name
    echo "== registered $qemu for aarch64 ELF files ($handler; removed at the end)"
  else
    echo "== aarch64 ELF files run through the handler that was there: $handler"
  fi
  binfmt_interp=$(sed -n 's/^interpreter //p' "$handler")
  binfmt_flags=$(sed -n 's/^flags: //p' "$handler")
}
# Copies the interpreter into ROOT when the handler opens it at run time (no F flag).
binfmt_into_root() {
  [[ $binfmt_flags == *F* ]] || { mkdir -p "$1$(dirname "$binfmt_interp")" && cp "$binfmt_interp" "$1$binfmt_interp"; }
}
binfmt_restore() {
  if [ -n "$binfmt_registered" ] && [ -e "$binfmt_dir/$binfmt_registered" ]; then echo -1 >"$binfmt_dir/$binfmt_registered"; fi
  if [ -n "$binfmt_mounted" ]; then umount "$binfmt_dir" 2>/dev/null; fi
  binfmt_registered='' binfmt_mounted=''
  return 0
}
