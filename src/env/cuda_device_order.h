// CUDA_DEVICE_ORDER as the driver reads it (measured on 580.159.04): only the exact,
// upper-case FASTEST_FIRST and PCI_BUS_ID are accepted.  Anything else, the empty
// string and surrounding white space included, makes cuInit fail with
// CUDA_ERROR_INVALID_DEVICE (101), whatever CUDA_VISIBLE_DEVICES says.
#pragma once
#include <optional>
#include <string>

#include "model/cuda_view.h"  // DeviceOrder, DeviceOrderSetting

namespace gpumap {

DeviceOrderSetting parse_cuda_device_order(const std::optional<std::string>& value);

const char* device_order_name(DeviceOrder o);

}  // namespace gpumap
