// The sysfs seam: facts the kernel publishes about PCI devices.
#pragma once
#include <optional>
#include <string>

#include "model/pci.h"

namespace gpumap {

/// <sysfs_root>/bus/pci/devices/<dddd:bb:dd.f>/local_cpulist ("0-31,64-95"), or nullopt when it
/// cannot be read.  sysfs_root is /sys, or a fixture in tests (Seams::sysfs_root).
std::optional<std::string> pci_local_cpulist(const std::string& sysfs_root, const PciAddress& a);

}  // namespace gpumap
