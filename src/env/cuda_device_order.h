// CUDA_DEVICE_ORDER as the driver reads it (measured on 580.159.04): only the exact,
// upper-case FASTEST_FIRST and PCI_BUS_ID are accepted.  Anything else, the empty
// string and surrounding white space included, makes cuInit fail with
// CUDA_ERROR_INVALID_DEVICE (101), whatever CUDA_VISIBLE_DEVICES says.
#pragma once
#include <optional>
#include <string>

namespace gpumap {

enum class DeviceOrder { kFastestFirst, kPciBusId, kInvalid };

struct DeviceOrderSetting {
  DeviceOrder order = DeviceOrder::kFastestFirst;
  bool set = false;    // the variable is present in the environment
  std::string reason;  // kInvalid: why, naming what was probably meant
};

DeviceOrderSetting parse_cuda_device_order(const std::optional<std::string>& value);

const char* device_order_name(DeviceOrder o);

}  // namespace gpumap
