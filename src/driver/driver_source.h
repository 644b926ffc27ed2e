// Where the driver comes from: the real libraries, or the fake ones serving a host file.
#pragma once
#include <optional>
#include <string>

namespace gpumap {

struct DriverSource {
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string cuda_library = "libcuda.so.1";
  bool simulated = false;
  std::string host_file;  // absolute path of the simulated host, when simulated
  std::string host_name;  // as the user gave it ("seed-mixed")
};

/// The real driver, or the simulated host `spec` (a bundled name or a file path).
/// `spec` comes from --simulate, else $GPUMAP_SIMULATE.  Sets $GPUMAP_FAKE_HOST for the
/// fake libraries (and the children that inherit it).  Throws Error(kExitUsage) when the
/// host is unknown or its file is invalid, naming the file and the field.
DriverSource select_driver(const std::optional<std::string>& spec);

/// The bundled simulated hosts' names.
std::string bundled_host_names();

}  // namespace gpumap
