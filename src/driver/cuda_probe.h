// Asking the CUDA driver itself which GPUs an environment gets.  cuInit reads the
// environment once per process, so every question runs in a child process (gpumap's
// hidden `__probe` command, or the gpumap-probe helper next to libgpumap.so).  cuInit plus device queries only: no context, no memory.
#pragma once
#include <string>
#include <vector>

#include "driver/driver_source.h"
#include "env/environment.h"
#include "model/cuda_devices.h"

namespace gpumap {

class DynLib;

/// The devices of an initialised CUDA (cuDeviceGetCount, then each ordinal's UUID through
/// cuDeviceGetUuid_v2, a MIG device's own, its PCI bus id and name): what the probe child and the
/// live view (driver/live_cuda.h) both list.  Throws Error(kExitNoDriver) for a missing symbol,
/// and for a failed cuDeviceGetCount, cuDeviceGet or cuDeviceGetUuid (naming the call, the
/// ordinal and the code): a device is never left out of the list.  A failed name or PCI bus id
/// query leaves that field empty.
std::vector<CudaDevice> list_cuda_devices(DynLib& lib);

/// In this process: load the CUDA library, cuInit, list the devices.  Only the hidden
/// `__probe` command calls this.  Throws Error(kExitNoDriver) if the library or a
/// required symbol is missing.
CudaProbe probe_in_process(const std::string& cuda_library);

/// The probe child's whole job (`gpumap __probe` and gpumap-probe): probe_in_process, the
/// answer written on the stdout the process started with while descriptor 1 points at stderr
/// (the wire format below).  Throws Error like probe_in_process, or when it cannot write.
void answer_probe(const std::string& cuda_library);

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
