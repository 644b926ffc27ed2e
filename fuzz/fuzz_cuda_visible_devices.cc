// CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER: parse, then resolve against three GPUs.
// Input: CDO bytes, a NUL, CVD bytes (no NUL: CDO unset, all bytes are CVD).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "env/cuda_visible_devices.h"
#include "resolve/cuda_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in(reinterpret_cast<const char*>(data), size);
  std::optional<std::string> cdo, cvd;
  if (size_t nul = in.find('\0'); nul != std::string::npos) {
    cdo = in.substr(0, nul);
    cvd = in.substr(nul + 1);
  } else {
    cvd = in;
  }
  auto entries = gpumap::parse_cuda_visible_devices(*cvd);
  if (entries.empty()) abort();  // even "" is one (empty) entry
  static const std::vector<std::string> order = {"GPU-28554ffd-acce-bd7e-cb9f-313a72e272e2",
                                                 "GPU-df9ecf4c-79e5-ad77-701c-fc88c196632b",
                                                 "GPU-df9e0000-6758-b581-24f3-9f00d2606170"};
  gpumap::CudaView v = gpumap::predict_cuda_view(order, cdo, cvd);
  // Properties: at most three GPUs, each once, all from the order; no list on error.
  if (v.uuids.size() > order.size()) abort();
  if (v.error != gpumap::CudaInitError::kNone && !v.uuids.empty()) abort();
  std::set<std::string> seen(v.uuids.begin(), v.uuids.end());
  if (seen.size() != v.uuids.size()) abort();
  for (const std::string& u : v.uuids)
    if (std::find(order.begin(), order.end(), u) == order.end()) abort();
  return 0;
}
