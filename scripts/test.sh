#!/usr/bin/env bash
# Quick start, part 2: build everything and run every test (unit and black-box CLI).
# usage: scripts/test.sh [BUILD_DIR [extra cmake args...]]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
scripts/deps.sh --test
# GPUMAP_TESTS=ON explicitly: scripts/run.sh configures the same folder with the tests off.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUMAP_TESTS=ON "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
# GPUMAP_CTEST_EXCLUDE: a ctest -E regex, for a run by hand (CI leaves nothing out).
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" ${GPUMAP_CTEST_EXCLUDE:+-E "$GPUMAP_CTEST_EXCLUDE"}
