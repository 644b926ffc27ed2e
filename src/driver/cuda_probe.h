// Asking the CUDA driver itself which GPUs an environment gets.  cuInit reads the
// environment once per process, so every question runs in a child process (gpumap's
// hidden `__probe` command, or the gpumap-probe helper next to libgpumap.so).  cuInit plus device queries only: no context, no memory.
#pragma once
#include <string>
#include <vector>

#include "driver/driver_source.h"
#include "env/environment.h"

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
  std::string error;  // "" on success, else "CUDA_ERROR_NO_DEVICE", ...
  int error_code = 0;
  std::vector<CudaDevice> devices;
  double elapsed_ms = 0;
};

/// In this process: load the CUDA library, cuInit, list the devices.  Only the hidden
/// `__probe` command calls this.  Throws Error(kExitNoDriver) if the library or a
/// required symbol is missing.
CudaProbe probe_in_process(const std::string& cuda_library);

/// In a child process (src.probe_command + "--cuda-lib" LIB) with exactly `env` (plus what
/// the simulated driver needs).  Throws Error(kExitError) when the child cannot run or answers nonsense.
CudaProbe probe_cuda(const DriverSource& src, const Environment& env);

/// The wire format between the two: one line per fact, tab-separated, a header line first and
/// an "end" line last.  The child writes it on the stdout it started with while descriptor 1
/// points at stderr, so a driver library's own prints never reach it.  parse_probe throws
/// Error(kExitError) for anything else (text before the header or after the end, no end, too
/// many devices).
std::string serialize_probe(const CudaProbe& p);
CudaProbe parse_probe(const std::string& text);

}  // namespace gpumap
