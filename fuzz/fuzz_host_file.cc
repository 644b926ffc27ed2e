// Simulated host files: load_host_file either succeeds or throws std::runtime_error.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "fake/host_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/gpumap-fuzz-host-" + std::to_string(getpid()) + ".json";
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  try {
    (void)gpumap::fake::load_host_file(path);
  } catch (const std::runtime_error&) {
  }
  return 0;
}
