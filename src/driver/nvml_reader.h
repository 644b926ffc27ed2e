// Reads the host snapshot through NVML.  One failed query never drops a GPU: the field
// becomes N/A and the failure is kept in Gpu::notes (model/snapshot.h GpuNote): the call, the
// driver's raw code and the words.
#pragma once
#include "driver/driver_source.h"
#include "model/snapshot.h"

namespace gpumap {

struct ReadOptions {
  bool processes = true;  // NVML's compute and graphics process lists
  bool topology = false;  // CPU affinity (for pick/run/bind)
  bool nvlink = false;    // NVLink peers, through NVSwitches too (pick/run of several GPUs)
  bool mig = true;        // MIG devices of MIG-enabled GPUs
  bool utilization = true;  // GPU and memory utilisation (measured: 3.7 ms per GPU on H200, driver 580)
  /// What a monitor shows: temperature, power draw and limits, SM and memory clocks, fan, performance
  /// state, volatile ECC counts (list, metrics, top; not map/pick/run).
  bool sensors = false;
  /// Each process's SM and memory utilisation (processes must be read too): ps, metrics, top.  Its
  /// cost per GPU on a real host is measured by tools/device/checks/monitor_fields_real.sh (docs/cli.md).
  bool process_utilization = false;
};

/// Throws Error(kExitNoDriver) when libnvidia-ml cannot be loaded or initialised,
/// naming the library, the symbol and the code.
Snapshot read_snapshot(const DriverSource& src, const ReadOptions& opt);

}  // namespace gpumap
