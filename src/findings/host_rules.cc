// Host rules: the host's own numbering against nvidia-smi's (CUDA's FASTEST_FIRST order), the
// container runtime's variable, MIG mode.
#include "env/nvidia_visible_devices.h"
#include "findings/rule_table.h"
#include "model/text.h"
#include "resolve/base_order.h"
#include "resolve/cuda_rules.h"

namespace gpumap {
namespace {

// CUDA's default order differs from nvidia-smi's, quoting the mapping the table shows.
bool fastest_first_differs(const RuleInput& r) {
  return r.in.fastest_first_order && *r.in.fastest_first_order != pci_order(r.s) &&
         r.v.order.order == DeviceOrder::kFastestFirst && r.v.error == CudaInitError::kNone;
}

void order_differs(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  if (!fastest_first_differs(r) || v.visible_set) return;
  std::vector<std::string> diffs;
  for (size_t i = 0; i < v.uuids.size(); ++i) {
    int idx = r.s.nvml_index_of(v.uuids[i]);
    if (idx < 0) diffs.push_back("cuda:" + std::to_string(i) + " is a GPU NVML could not identify");
    else if (idx != static_cast<int>(i)) diffs.push_back("cuda:" + std::to_string(i) + " is nvidia-smi GPU " + std::to_string(idx));
  }
  report.add(Severity::kWarning,
             "CUDA's order differs from nvidia-smi's (FASTEST_FIRST puts the fastest GPU first): " + join(diffs, ", ") +
                 ". Code that takes numbers from nvidia-smi lands on the wrong GPU",
             "export CUDA_DEVICE_ORDER=PCI_BUS_ID");
}

// UUID entries do not depend on the order; index entries count in CUDA's order.
void visible_devices_without_pci_order(const RuleInput& r, Report& report) {
  const CudaView& v = r.v;
  if (!fastest_first_differs(r) || !v.visible_set || !has_index_entries(v)) return;
  CudaView by_pci = predict_cuda_view(pci_order(r.s), std::string("PCI_BUS_ID"), r.in.env.get("CUDA_VISIBLE_DEVICES"));
  bool same = by_pci.error == CudaInitError::kNone && by_pci.uuids == v.uuids;
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.uuids.size(); ++i) parts.push_back("cuda:" + std::to_string(i) + " = " + r.s.describe(v.uuids[i]));
  report.add(same ? Severity::kInfo : Severity::kWarning,
             "CUDA_VISIBLE_DEVICES uses indices, and without CUDA_DEVICE_ORDER=PCI_BUS_ID they count in CUDA's "
             "order, not nvidia-smi's: `" + r.cvd + "` gives " + join(parts, ", ") +
                 (same ? " (the same GPUs as in nvidia-smi's order here, by luck of which indices were chosen)" : ""),
             "export CUDA_DEVICE_ORDER=PCI_BUS_ID   (or name GPUs by UUID: gpumap which ...)");
}

// NVIDIA_VISIBLE_DEVICES is read by the container runtime only.
void nvidia_visible_devices_outside_container(const RuleInput& r, Report& report) {
  auto nvd = r.in.env.get("NVIDIA_VISIBLE_DEVICES");
  if (parse_nvidia_visible_devices(nvd).mode == NvdMode::kUnset || r.in.in_container) return;
  report.add(Severity::kWarning,
             "NVIDIA_VISIBLE_DEVICES=" + nvd.value_or("") +
                 " is set, but only the container runtime reads it; CUDA and nvidia-smi on this host ignore it",
             "to choose GPUs for this process: export CUDA_VISIBLE_DEVICES=<UUIDs> (gpumap which ...)");
}

void container_renumbered(const RuleInput& r, Report& report) {
  if (!r.in.in_container || parse_nvidia_visible_devices(r.in.env.get("NVIDIA_VISIBLE_DEVICES")).mode != NvdMode::kList) return;
  report.add(Severity::kInfo,
             "inside this container only the injected GPUs exist, numbered from 0 by nvidia-smi and CUDA; host GPU "
             "numbers do not apply here. The UUIDs and PCI bus ids are the host's: use them to match",
             "");
}

void mig_enabled(const RuleInput& r, Report& report) {
  for (const Gpu& g : r.s.gpus)
    if (g.mig_enabled.value_or(false))
      report.add(Severity::kInfo,
                 "nvidia-smi GPU " + std::to_string(g.nvml_index) + " is in MIG mode: CUDA shows its MIG devices (" +
                     std::to_string(g.mig_devices.size()) + "), not the GPU; name them by MIG-<uuid>. Drivers before R570 "
                     "give a process exactly one MIG device",
                 "");
}

}  // namespace

const std::vector<Rule>& host_rules() {
  static const std::vector<Rule> table = {
      {"order-differs", order_differs},
      {"visible-devices-without-pci-order", visible_devices_without_pci_order},
      {"nvidia-visible-devices-outside-container", nvidia_visible_devices_outside_container},
      {"container-renumbered", container_renumbered},
      {"mig-enabled", mig_enabled},
  };
  return table;
}

}  // namespace gpumap
