// Simulated host files: parse_host_file either succeeds or throws std::runtime_error.
// The bytes are parsed as they are (reading the file, load_host_file, adds nothing to fuzz).
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "formats/host_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)gpumap::parse_host_file(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
