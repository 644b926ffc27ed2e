// CUDA as it already runs in the calling process (a library user's program: torch started it).
// cuInit reads CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER once, so after it the environment
// says nothing reliable about the devices; the running driver does (measured on driver
// 580.159.04: the device queries answer with the view of cuInit's time, in 0.21 ms, with no new
// context or memory; docs/driver-rules.md).
#pragma once
#include <optional>
#include <string>

#include "model/cuda_devices.h"

namespace gpumap {

/// The devices of the CUDA running in this process, or nullopt when `cuda_library` is not loaded
/// here or not initialised (its cuDeviceGetCount answers CUDA_ERROR_NOT_INITIALIZED).  Never
/// loads the library, never calls cuInit, creates no context.  elapsed_ms is the read's time.
/// The queries run on the CUDA driver thread (driver/driver_thread.h) under `timeout_s` (0: no
/// limit): a hung query throws Error(kExitNoDriver) (driver_timeout_error) at the deadline.  A
/// failed query throws as list_cuda_devices does (driver/cuda_probe.h): never a shorter list.
std::optional<CudaProbe> read_live_cuda(double timeout_s, const std::string& cuda_library = "libcuda.so.1");

/// Whether CUDA runs (is initialised) in this process: the first step of read_live_cuda alone
/// (one cuDeviceGetCount), under the same deadline.
bool live_cuda_started(double timeout_s, const std::string& cuda_library = "libcuda.so.1");

}  // namespace gpumap
