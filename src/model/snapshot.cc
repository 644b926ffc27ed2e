#include "model/snapshot.h"

#include "model/uuid.h"

namespace gpumap {

const Gpu* Snapshot::find_uuid(const std::string& uuid) const {
  if (uuid.empty()) return nullptr;  // a GPU whose UUID NVML could not read (lost) has none to find
  for (const Gpu& g : gpus)
    if (same_uuid(g.uuid, uuid)) return &g;
  return nullptr;
}

Snapshot::DeviceRef Snapshot::find_device(const std::string& uuid) const {
  for (const Gpu& g : gpus) {
    if (same_uuid(g.uuid, uuid)) return {&g, nullptr};
    for (const MigDevice& m : g.mig_devices)
      if (same_uuid(m.uuid, uuid)) return {&g, &m};
  }
  return {};
}

Snapshot::DeviceRef Snapshot::find_cuda_device(const std::string& cuda_uuid) const {
  std::string hex = uuid_hex(cuda_uuid);
  for (const Gpu& g : gpus) {
    if (uuid_hex(g.uuid) == hex) return {&g, nullptr};
    for (const MigDevice& m : g.mig_devices)
      if (uuid_hex(m.uuid) == hex) return {&g, &m};
  }
  return {};
}

int Snapshot::nvml_index_of(const std::string& uuid) const {
  if (uuid.empty()) return -1;  // a GPU whose UUID NVML could not read matches nothing
  DeviceRef d = find_device(uuid);
  return d.gpu ? static_cast<int>(d.gpu->nvml_index) : -1;
}

std::string Snapshot::describe(const std::string& uuid) const {
  if (uuid.empty()) return "a GPU NVML could not identify";
  DeviceRef d = find_device(uuid);
  if (!d.gpu) return "unknown GPU " + uuid;
  std::string gpu = "nvidia-smi GPU " + std::to_string(d.gpu->nvml_index);
  if (!d.mig) return gpu;
  return gpu + " MIG device " + std::to_string(d.mig - d.gpu->mig_devices.data());
}

bool Snapshot::any_mig() const {
  for (const Gpu& g : gpus)
    if (g.mig_enabled.value_or(false)) return true;
  return false;
}

bool Snapshot::all_same_model() const {
  for (const Gpu& g : gpus)
    if (g.name != gpus.front().name || g.compute_capability != gpus.front().compute_capability)
      return false;
  return true;
}

}  // namespace gpumap
