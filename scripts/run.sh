#!/usr/bin/env bash
# Quick start, part 1: build gpumap and show the GPU mapping of this machine.  Without
# an NVIDIA driver it shows the bundled simulated host `seed-mixed` (labelled SIMULATED).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null  # as scripts/test.sh: one build for both
cmake --build build -j"$(nproc)" --target gpumap >/dev/null
if build/gpumap list >/dev/null 2>&1; then
  exec build/gpumap map "$@"
fi
echo "(no NVIDIA driver on this machine: showing the simulated host seed-mixed)"
exec build/gpumap map --simulate seed-mixed "$@"
