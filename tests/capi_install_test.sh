#!/usr/bin/env bash
# The installed C API: `cmake --install` into a temporary prefix, then build the C test program
# against it twice, with pkg-config and with find_package(gpumap), and run both (the installed
# library must find its probe helper, simulated hosts and fake driver beside it).
# usage: capi_install_test.sh SOURCE_DIR BUILD_DIR [LIBDIR (GNUInstallDirs, default lib)]
set -euo pipefail
src=$1 build=$2 libdir=${3:-lib}
tmp=$(mktemp -d /tmp/gpumap-capi-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# The test's live part loads the build's fake libcuda (GPUMAP_TEST_BUILD_DIR), as capi_test does.
cc -o "$tmp/by-pkg-config" "$src/tests/capi_test.c" -DGPUMAP_TEST_BUILD_DIR="\"$build\"" \
  $(PKG_CONFIG_PATH="$tmp/prefix/$libdir/pkgconfig" pkg-config --cflags --libs gpumap)
# GPUMAP_TEST_PRELOAD (ctest sets it under the sanitizers): the ASan runtime, which must come first
# in a program not built with it that loads the instrumented library.
preload=${GPUMAP_TEST_PRELOAD:-}
LD_PRELOAD=$preload LD_LIBRARY_PATH="$tmp/prefix/$libdir" "$tmp/by-pkg-config"
cat >"$tmp/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(uses_gpumap C)
find_package(gpumap 0.1 REQUIRED)
add_executable(by-find-package "$src/tests/capi_test.c")
target_link_libraries(by-find-package PRIVATE gpumap::gpumap \${CMAKE_DL_LIBS})
target_compile_definitions(by-find-package PRIVATE GPUMAP_TEST_BUILD_DIR="$build")
CMAKE
cmake -S "$tmp" -B "$tmp/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/b" >/dev/null
LD_PRELOAD=$preload "$tmp/b/by-find-package"
echo "PASS: the installed C API works through pkg-config and find_package"
