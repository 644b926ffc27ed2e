#include "env/cuda_device_order.h"

#include <algorithm>
#include <cctype>

namespace gpumap {

DeviceOrderSetting parse_cuda_device_order(const std::optional<std::string>& value) {
  DeviceOrderSetting s;
  if (!value) return s;
  s.set = true;
  if (value->size() >= kCudaDeviceOrderIgnoredBytes) {  // the driver reads it as unset: FASTEST_FIRST
    s.too_long = true;
    s.reason = std::to_string(value->size()) + " bytes long: the driver ignores a value of " +
               std::to_string(kCudaDeviceOrderIgnoredBytes) + " bytes or more, as if it were unset";
    return s;
  }
  if (*value == "FASTEST_FIRST") return s;
  if (*value == "PCI_BUS_ID") {
    s.order = DeviceOrder::kPciBusId;
    return s;
  }
  s.order = DeviceOrder::kInvalid;
  std::string norm;
  for (char c : *value)
    if (!std::isspace(static_cast<unsigned char>(c)))
      norm.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (value->empty())
    s.reason = "it is set but empty; an empty value is not the same as unset";
  else if (norm == "PCI_BUS_ID" || norm == "FASTEST_FIRST")
    s.reason = "only the exact upper-case `" + norm + "` without spaces is accepted";
  else
    s.reason = "`" + *value + "` is neither FASTEST_FIRST nor PCI_BUS_ID";
  return s;
}

const char* device_order_name(DeviceOrder o) {
  switch (o) {
    case DeviceOrder::kFastestFirst: return "FASTEST_FIRST";
    case DeviceOrder::kPciBusId: return "PCI_BUS_ID";
    case DeviceOrder::kInvalid: return "invalid";
  }
  return "?";
}

}  // namespace gpumap
