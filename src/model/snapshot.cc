#include "model/snapshot.h"

#include <strings.h>

namespace gpumap {

const Gpu* Snapshot::find_uuid(const std::string& uuid) const {
  if (uuid.empty()) return nullptr;  // a GPU whose UUID NVML could not read (lost) has none to find
  for (const Gpu& g : gpus)
    if (strcasecmp(g.uuid.c_str(), uuid.c_str()) == 0) return &g;
  return nullptr;
}

Snapshot::DeviceRef Snapshot::find_device(const std::string& uuid) const {
  for (const Gpu& g : gpus) {
    if (strcasecmp(g.uuid.c_str(), uuid.c_str()) == 0) return {&g, nullptr};
    for (const MigDevice& m : g.mig_devices)
      if (strcasecmp(m.uuid.c_str(), uuid.c_str()) == 0) return {&g, &m};
  }
  return {};
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
