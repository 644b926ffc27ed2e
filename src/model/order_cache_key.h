// What identifies one cached base device order (os/order_cache.h stores it; the resolver
// builds it): the boot, the driver, the order kind and the exact set of devices.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

namespace gpumap {

struct OrderCacheKey {
  std::string boot_id;
  std::string driver_version;
  std::string order;               // "FASTEST_FIRST" or "PCI_BUS_ID"
  std::vector<std::string> uuids;  // every device NVML lists (GPUs and MIG devices)
  /// One string for the whole key, the device set in sorted order.
  std::string text() const {
    std::vector<std::string> sorted = uuids;
    std::sort(sorted.begin(), sorted.end());
    std::string s = boot_id + "|" + driver_version + "|" + order;
    for (const std::string& u : sorted) s += "|" + u;
    return s;
  }
};

}  // namespace gpumap
