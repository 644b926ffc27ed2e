# Cross-building the portable release for aarch64 (Grace nodes: GH200, GB200) inside the Debian 11
# root of scripts/release.sh: Debian's cross toolchain (crossbuild-essential-arm64: GCC 10,
# aarch64-linux-gnu-*), the arm64 -dev packages installed multiarch beside the amd64 ones
# (dpkg --add-architecture arm64: archives in /usr/lib/aarch64-linux-gnu, headers in
# /usr/include/aarch64-linux-gnu), protoc and grpc_cpp_plugin of the build machine.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.toolchain.cmake ...
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# find_library and find_package look in /usr/lib/aarch64-linux-gnu (and never in the amd64 folder).
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config (gRPC's and protobuf's .pc files): the arm64 ones only.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
unset(ENV{PKG_CONFIG_PATH})
# The build runs gpumap itself once (`gpumap __describe`: the man page and the completion) under
# qemu-user; the toolchain's loader and libc are in the root (libc6:arm64).
find_program(GPUMAP_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(GPUMAP_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${GPUMAP_QEMU_AARCH64})
endif()
