#include "resolve/launch_env.h"

#include <unordered_map>

#include "model/text.h"
#include "model/uuid.h"
#include "resolve/base_order.h"
#include "resolve/cuda_rules.h"

namespace gpumap {

std::optional<CvdForm> parse_cvd_form(const std::string& text) {
  if (text == "index") return CvdForm::kIndex;
  if (text == "uuid") return CvdForm::kUuid;
  return std::nullopt;
}

std::string LaunchVisibility::assignments() const {
  return "CUDA_DEVICE_ORDER=" + cuda_device_order + " CUDA_VISIBLE_DEVICES=" + cuda_visible_devices;
}

std::vector<std::pair<std::string, std::string>> LaunchVisibility::variables() const {
  return {{"CUDA_DEVICE_ORDER", cuda_device_order}, {"CUDA_VISIBLE_DEVICES", cuda_visible_devices}};
}

std::optional<size_t> pci_index_of(const Snapshot& s, const std::string& uuid) {
  // Indices under PCI_BUS_ID follow from NVML only when its order is exact (no MIG, every GPU placed).
  if (!order_is_exact(s, DeviceOrder::kPciBusId)) return std::nullopt;
  std::vector<std::string> pci = pci_order(s);
  for (size_t i = 0; i < pci.size(); ++i)
    if (same_uuid_hex(pci[i], uuid)) return i;
  return std::nullopt;
}

LaunchVisibility launch_visibility(const Snapshot& s, const std::vector<std::string>& uuids, CvdForm wanted) {
  LaunchVisibility out;
  std::vector<std::string> indices;
  if (wanted == CvdForm::kIndex) {
    // pci_index_of for each UUID, with the order built once (pick --gpus 4096 on 16 384 GPUs
    // sorted the host once per GPU picked: issue 34 point 9).
    std::unordered_map<std::string, size_t> pci_index;  // uuid_hex -> index, the first of equal ones
    if (order_is_exact(s, DeviceOrder::kPciBusId)) {
      std::vector<std::string> pci = pci_order(s);
      pci_index.reserve(pci.size());
      for (size_t i = 0; i < pci.size(); ++i) pci_index.try_emplace(uuid_hex(pci[i]), i);
    }
    for (const std::string& u : uuids) {
      auto found = pci_index.find(uuid_hex(u));
      std::optional<size_t> i = found == pci_index.end() ? std::nullopt : std::optional<size_t>(found->second);
      if (!i) {
        out.note = s.any_mig() ? "UUIDs, not indices: MIG devices have no index, and a list cannot mix both"
                               : "UUIDs, not indices: NVML could not place every GPU on the PCI bus";
        indices.clear();
        break;
      }
      indices.push_back(std::to_string(*i));
    }
  }
  if (wanted == CvdForm::kIndex && out.note.empty()) {
    out.form = CvdForm::kIndex;
    out.cuda_visible_devices = join(indices, ",");
  } else {
    out.form = CvdForm::kUuid;
    out.cuda_visible_devices = join(uuids, ",");
  }
  return out;
}

}  // namespace gpumap
