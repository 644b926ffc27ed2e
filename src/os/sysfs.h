// The sysfs seam: facts the kernel publishes about PCI devices.
#pragma once
#include <optional>
#include <string>

#include "model/pci.h"

namespace gpumap {

/// /sys/bus/pci/devices/<dddd:bb:dd.f>/local_cpulist ("0-31,64-95"), or nullopt when it cannot be
/// read.  $GPUMAP_SYSFS_ROOT replaces /sys (tests).
std::optional<std::string> pci_local_cpulist(const PciAddress& a);

}  // namespace gpumap
