#include "resolve/base_order.h"

#include <algorithm>

namespace gpumap {

std::vector<std::string> pci_order(const Snapshot& s) {
  std::vector<const Gpu*> gpus;
  for (const Gpu& g : s.gpus) gpus.push_back(&g);
  std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu* a, const Gpu* b) {
    if (a->pci && b->pci) return *a->pci < *b->pci;
    return a->nvml_index < b->nvml_index;
  });
  std::vector<std::string> out;
  for (const Gpu* g : gpus) {
    if (g->mig_enabled.value_or(false)) {
      for (const MigDevice& m : g->mig_devices) out.push_back(m.uuid);
    } else {
      out.push_back(g->uuid);
    }
  }
  return out;
}

bool order_is_exact(const Snapshot& s, DeviceOrder order) {
  if (s.any_mig()) return false;  // documented, not measured: ask the driver
  for (const Gpu& g : s.gpus)
    if (g.uuid.empty() || !g.pci) return false;  // NVML could not read a GPU: CUDA may not see it either
  if (order == DeviceOrder::kPciBusId) return true;
  return s.all_same_model();
}

}  // namespace gpumap
