#include "resolve/renumbering.h"

namespace gpumap {
namespace {

// The GPU (and MIG device) behind a CUDA device's UUID: NVML's name first, then CUDA's (a MIG
// device that CUDA writes `GPU-<hex>`).
Snapshot::DeviceRef device_of(const Snapshot& s, const std::string& uuid) {
  Snapshot::DeviceRef d = s.find_device(uuid);
  return d.gpu ? d : s.find_cuda_device(uuid);
}

}  // namespace

std::string renumbering_line(const Snapshot& s, const std::vector<std::string>& uuids, const GpuPlace& where) {
  bool identity = true;
  std::vector<std::string> parts;
  for (size_t i = 0; i < uuids.size(); ++i) {
    Snapshot::DeviceRef d = device_of(s, uuids[i]);
    std::optional<OuterNumber> outer = outer_number(s, where, uuids[i]);
    if (!d.gpu || d.mig || d.gpu->nvml_index != i || (outer && outer->value != i)) identity = false;
    if (parts.size() == kRenumberingNamed) continue;
    std::string part = "cuda:" + std::to_string(i) + " = ";
    if (!d.gpu) part += s.describe(uuids[i]);
    else part += (parts.empty() ? "nvidia-smi GPU " : "GPU ") + std::to_string(d.gpu->nvml_index);
    if (d.gpu && d.mig) part += " MIG device " + std::to_string(d.mig - d.gpu->mig_devices.data());
    if (outer) part += std::string(" (") + (outer->key == std::string("host_index") ? "host GPU " : "Slurm id ") +
                       std::to_string(outer->value) + ")";
    parts.push_back(part);
  }
  if (identity || parts.empty()) return "";
  std::string line;
  for (const std::string& p : parts) line += (line.empty() ? "" : ", ") + p;
  if (uuids.size() > parts.size())
    line += ", and " + std::to_string(uuids.size() - parts.size()) + " more (gpumap map lists them)";
  return line;
}

}  // namespace gpumap
