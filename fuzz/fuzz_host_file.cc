// Simulated host files: load_host_file either succeeds or throws std::runtime_error.
// The input lives in a memfd (a regular file with no name): nothing is left in /tmp.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "fake/host_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("gpumap-fuzz-host", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  try {
    (void)gpumap::fake::load_host_file(path);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
