#!/usr/bin/env bash
# `pip install ./python` offline into a fresh virtual environment, then use the installed copy
# from elsewhere (no PYTHONPATH, no GPUMAP_BUILD_DIR): it must find the library it carries.
# usage: python_install_test.sh PYTHON SOURCE_DIR BUILD_DIR
set -euo pipefail
python=$1 src=$2 build=$3
tmp=$(mktemp -d /tmp/gpumap-pip-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
# --no-index: nothing may come from the network; the build backend needs only the stdlib.
GPUMAP_BUILD_DIR=$build "$tmp/venv/bin/pip" install --no-index --no-cache-dir -q "$src/python"
cd "$tmp"
# GPUMAP_TEST_PRELOAD (ctest sets it under the sanitizers): the ASan runtime, which an instrumented
# libgpumap.so needs first in Python; Python's own leaks are not checked.
preload=()
[ -n "${GPUMAP_TEST_PRELOAD:-}" ] && preload=(LD_PRELOAD="$GPUMAP_TEST_PRELOAD" ASAN_OPTIONS=detect_leaks=0)
out=$(env -u PYTHONPATH -u GPUMAP_BUILD_DIR -u GPUMAP_LIBRARY "${preload[@]}" GPUMAP_SIMULATE=h200x2 GPUMAP_LOCK_DIR="$tmp/leases" \
  "$tmp/venv/bin/python" -c '
import gpumap
print(gpumap.__file__)
print([d["nvml_index"] for d in gpumap.devices()])
with gpumap.pin() as p:
    print(len(p.uuids))
')
echo "$out"
grep -q "^$tmp/venv/lib/.*/site-packages/gpumap/__init__.py$" <<<"$out" || { echo "FAIL: not the installed copy"; exit 1; }
grep -qx '\[0, 1\]' <<<"$out" || { echo "FAIL: devices"; exit 1; }
grep -qx '1' <<<"$out" || { echo "FAIL: pin"; exit 1; }
echo "PASS: pip install ./python works offline and the installed package finds its library"

# The wheel carries the command: `python -m gpumap` is doctor for the interpreter's environment,
# and pip put a `gpumap` on the environment's PATH.
set +e
out=$(env -u PYTHONPATH -u GPUMAP_BUILD_DIR "${preload[@]}" GPUMAP_SIMULATE=h200x2 CUDA_VISIBLE_DEVICES=0,0 \
  "$tmp/venv/bin/python" -m gpumap 2>&1)
rc=$?
set -e
[ "$rc" = 7 ] && grep -q duplicate <<<"$out" || { echo "FAIL: python -m gpumap (exit $rc): $out"; exit 1; }
out=$(env -u PYTHONPATH "${preload[@]}" "$tmp/venv/bin/gpumap" list --simulate h200x2) && grep -q H200 <<<"$out" ||
  { echo "FAIL: the gpumap command pip installed: $out"; exit 1; }
echo "PASS: python -m gpumap runs doctor for this environment (exit 7 on a duplicate entry); gpumap is on the venv's PATH"

# Without a built library the wheel build stops and says what to build (a copy of the package
# away from the checkout, so that neither GPUMAP_BUILD_DIR nor ../build finds one).
mkdir -p "$tmp/alone"
cp -r "$src/python" "$tmp/alone/python"
if out=$(env -u GPUMAP_BUILD_DIR "$tmp/venv/bin/pip" install --no-index --no-cache-dir -q "$tmp/alone/python" 2>&1); then
  echo "FAIL: a wheel without libgpumap was built"; exit 1
fi
grep -q "no built libgpumap.so.1 found" <<<"$out" || { echo "FAIL: no clear message: $out"; exit 1; }
echo "PASS: without a built library, pip install says what to build"
