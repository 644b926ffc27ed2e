// NVIDIA_VISIBLE_DEVICES: any bytes parse to a mode, never crash.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "env/nvidia_visible_devices.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  auto nvd = gpumap::parse_nvidia_visible_devices(in);
  if (nvd.mode != gpumap::NvdMode::kList && !nvd.entries.empty()) abort();
  auto unset = gpumap::parse_nvidia_visible_devices(std::nullopt);
  if (unset.mode != gpumap::NvdMode::kUnset) abort();
  return 0;
}
