// Where the driver comes from: the real libraries, or the fake ones serving a host file.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/error.h"
#include "model/seams.h"

namespace gpumap {

struct DriverSource {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string cuda_library = "libcuda.so.1";
  bool simulated = false;
  std::string host_file;  // absolute path of the simulated host, when simulated
  std::string host_name;  // as the user gave it ("seed-mixed")
  /// How to ask CUDA in a child process (Seams::probe_command).
  std::vector<std::string> probe_command;
  std::string sysfs_root = "/sys";  // for the GPUs' local CPUs (Seams::sysfs_root)
  bool trace = false;               // time each NVML call (Seams::trace)
  double driver_timeout_s = 60;     // bound on reading NVML (Seams::driver_timeout_s; 0: none)
  /// Bound on the CUDA probe child (cuInit); negative: driver_timeout_s.  `gpumap serve` reads NVML
  /// unbounded in its reader thread but must not let a hung cuInit hold NVML's data back.
  double probe_timeout_s = -1;
};

/// The real driver, or the simulated host `seams.simulate` (a bundled name or a file path,
/// looked up in seams.hosts_dirs; the fake libraries in seams.sim_lib_dirs).  Changes nothing
/// in the process: the fake NVML is told its host file when it is loaded, the probe child
/// gets it in its environment.  Throws Error(kExitUsage) when the host is unknown.  The host
/// file's contents are not read here (the driver layer does not know the fake's format):
/// select_checked_driver (session/session.h) checks them.
DriverSource select_driver(const Seams& seams);

/// The error for a driver that did not answer within src.driver_timeout_s: "the NVIDIA driver
/// (LIBRARY) did not answer within N s (WHAT)", exit 3, with the hint (GPUMAP_DRIVER_TIMEOUT).
Error driver_timeout_error(const DriverSource& src, const std::string& library, const std::string& what);
/// The same for a bound of `timeout_s` seconds.
Error driver_timeout_error(double timeout_s, const std::string& library, const std::string& what);

/// The bundled simulated hosts' names, sorted, from the first of seams.hosts_dirs that has any.
std::vector<std::string> bundled_hosts(const Seams& seams);
/// The same, joined with ", " (for messages).
std::string bundled_host_names(const Seams& seams);


}  // namespace gpumap
