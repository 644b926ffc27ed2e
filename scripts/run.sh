#!/usr/bin/env bash
# Quick start, part 1: build gpumap (and the library the Python package loads) and show the GPU
# mapping of this machine.  Without
# an NVIDIA driver it shows the bundled simulated host `seed-mixed` (labelled SIMULATED).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --build  # only what the gpumap binary needs: the tests' packages come with scripts/test.sh
# The same folder as scripts/test.sh (one build for both), without the tests: configuring them needs
# GoogleTest and Python, which --build does not install.  scripts/test.sh turns them back on.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGPUMAP_TESTS=OFF >/dev/null
# gpumap, and libgpumap.so.1 with its helper: `PYTHONPATH=python python3 -c "import gpumap; gpumap.pin()"`
# uses it straight from build/ (README).  No tests, no benchmarks.
cmake --build build -j"$(nproc)" --target gpumap gpumap_shared >/dev/null
if build/gpumap list >/dev/null 2>&1; then
  exec build/gpumap map "$@"
fi
echo "(no NVIDIA driver on this machine: showing the simulated host seed-mixed)"
exec build/gpumap map --simulate seed-mixed "$@"
