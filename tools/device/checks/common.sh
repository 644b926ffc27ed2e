# Sourced by the checks in tools/device/checks/: the carried build folder, the log under $OUT,
# and check NAME CONDITION (prints PASS/FAIL, counts failures in $fails).
# usage, in a script: source "$(dirname "$0")/common.sh" LOG_NAME "${1:-${BUILD:-build}}"
set -u
B=$2
G=$(cd "$(dirname "$B/gpumap")" && pwd)/gpumap
OUT=${OUT:-/tmp/$1-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/$1.log") 2>&1
fails=0
check() { if eval "$2"; then echo "PASS: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi; }
