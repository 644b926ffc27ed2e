// The fault counters NVML keeps per GPU (model/gpu_fault.h GpuFaultCounters): ECC volatile and
// aggregate, retired pages, remapped rows, the current clock-event (throttle) reasons, the PCIe
// replay counter, and whether the GPU is lost.  Each call optional: an older driver without one
// leaves its counter N/A.  Implemented beside the snapshot reader (driver/nvml_reader.cc), which
// binds the same list of calls.
#pragma once
#include <vector>

#include "driver/driver_source.h"
#include "model/gpu_fault.h"

namespace gpumap {

/// Every GPU's counters, in NVML order.  Throws Error(kExitNoDriver) as read_snapshot does when
/// NVML cannot be loaded or initialised; a GPU whose handle or calls fail keeps its place, with
/// notes (NVML_ERROR_GPU_IS_LOST sets `lost`).  Bounded by src.driver_timeout_s like read_snapshot.
std::vector<GpuFaultCounters> read_fault_counters(const DriverSource& src);

}  // namespace gpumap
