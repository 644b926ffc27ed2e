# Sourced by tests/release/*.sh (run.sh, aarch64.sh, image.sh): PASS/FAIL lines, the root check,
# the command run inside a chroot, and the checks every release tarball gets wherever it runs
# (x86_64 natively in a Debian 11 root, aarch64 under qemu-user in an arm64 one).
# usage (after `set -uo pipefail`): . tests/release/lib.sh SCRIPT-NAME WHY-ROOT
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/      /'; failed=1; }
[ "$(id -u)" = 0 ] || { echo "FAIL $1 needs root ($2)"; exit 2; }

# in_root CMD...: CMD inside the chroot $r with a clean environment.
in_root() { chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=xterm "$@"; }

# tarball_checks G VERSION: the unpacked tarball's gpumap (its path inside $r) maps, lists, finds a
# duplicate entry with exit 7, draws top, and says its version.
tarball_checks() {
  local G=$1 version=$2 o rc
  o=$(in_root "$G" --simulate dgx8 2>&1) && [[ $o == *SIMULATED* && $o == *cuda:7* ]] &&
    pass "tarball: gpumap --simulate dgx8 maps eight GPUs" || fail "tarball: gpumap --simulate dgx8" "$o"
  o=$(in_root "$G" list --json --simulate dgx8 2>&1) &&
    [ "$(printf '%s' "$o" | in_root python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"]))')" = 8 ] &&
    pass "tarball: list --json has eight GPUs" || fail "tarball: list --json" "${o:0:400}"
  o=$(in_root env CUDA_VISIBLE_DEVICES=0,0 "$G" doctor --simulate dgx8 2>&1); rc=$?
  [ "$rc" = 7 ] && [[ $o == *duplicate* ]] && pass "tarball: doctor finds a duplicate entry (exit 7)" ||
    fail "tarball: doctor (exit $rc)" "$o"
  o=$(in_root "$G" top --once --simulate dgx8 2>&1) && [[ $o == *"H100"* ]] &&
    pass "tarball: top --once draws the GPUs" || fail "tarball: top --once" "$o"
  in_root "$G" --version | grep -q "$version" && pass "tarball: --version" || fail "tarball: --version"
}
