// What the CUDA driver itself answered for one environment (cuInit + device queries in a child
// process, driver/cuda_probe.h): plain data, shared by the driver seam and the resolver.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace gpumap {

/// More CUDA devices than this in one process is a broken driver (or an injected answer).
inline constexpr size_t kMaxCudaDevices = 4096;

struct CudaDevice {
  std::string uuid;        // "GPU-" + the 16 bytes of cuDeviceGetUuid_v2 (a MIG device's too: the
                           // caller relabels it by matching NVML's MIG UUIDs)
  std::string pci_bus_id;  // as CUDA wrote it
  std::string name;
};

struct CudaProbe {
  std::string error;  // "" on success, else "CUDA_ERROR_NO_DEVICE", ..., or "DRIVER_CRASH": the
                      // probe child died of a signal inside cuInit (error_code: minus the signal)
  int error_code = 0;
  std::vector<CudaDevice> devices;
  double elapsed_ms = 0;
};

}  // namespace gpumap
