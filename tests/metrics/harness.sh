# Sourced by tests/metrics/*_test.sh: the tools each needs checked first, PASS/FAIL lines, a
# temporary folder and the processes started by PID, both gone on exit (the trap), bounded waits.
# usage (after `set -uo pipefail`): . "$(dirname "$0")/harness.sh" GPUMAP_BINARY TOOL...
[ -n "${1:-}" ] || { echo "usage: $0 GPUMAP_BINARY" >&2; exit 2; }
gpumap=$(readlink -f "$1")
shift
for t in "$@"; do
  command -v "$t" >/dev/null || { echo "FAIL: $t is not installed (scripts/deps.sh installs it)"; exit 2; }
done
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; printf '%s\n' "${2:-}" | sed 's/^/      /'; failed=1; }

dir=$(mktemp -d)
pids=()  # each process a test starts: killed, then waited for, on exit
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT

# A free loopback port: bound to 0 by the kernel, then released for the program that takes it.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# wait_for SECONDS COMMAND...: until COMMAND succeeds, at most SECONDS.
wait_for() {
  local until=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do [ $SECONDS -lt $until ] || return 1; sleep 0.2; done
}
