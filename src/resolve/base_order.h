// CUDA's base orders as far as NVML's view gives them: PCI bus order, and when that is all
// CUDA would use.  Pure: no I/O.  The mapping (resolve/resolve_mapping.h) asks the driver otherwise.
#pragma once
#include <string>
#include <vector>

#include "model/cuda_view.h"
#include "model/snapshot.h"

namespace gpumap {

/// UUIDs in PCI order (MIG devices in place of their parent).
std::vector<std::string> pci_order(const Snapshot& s);

/// True when CUDA's base order for `order` follows from NVML alone (measured rule:
/// identical GPUs enumerate in PCI order under FASTEST_FIRST too).
bool order_is_exact(const Snapshot& s, DeviceOrder order);

}  // namespace gpumap
