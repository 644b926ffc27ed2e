#include "resolve/container_view.h"

#include <set>

#include "model/error.h"
#include "model/pci.h"
#include "model/uuid.h"

namespace gpumap {
namespace {

[[noreturn]] void refuse(const NvdEntry& e, const std::string& why) {
  throw Error(kExitUsage,
              "NVIDIA_VISIBLE_DEVICES entry `" + e.raw + "`: " + why +
                  ": the container runtime would refuse to start the container",
              "name host GPUs by nvidia-smi index, full UUID, PCI bus id, MIG- UUID or <gpu>:<mig> (gpumap list)");
}

}  // namespace

ContainerView container_view(const Snapshot& host, const std::string& value) {
  NvidiaVisibleDevices nvd = parse_nvidia_visible_devices(value);
  // Per host GPU: injected at all, and which of its MIG devices (empty: the whole GPU).
  std::vector<bool> whole(host.gpus.size(), false);
  std::vector<std::set<size_t>> migs(host.gpus.size());
  if (nvd.mode == NvdMode::kAll) whole.assign(host.gpus.size(), true);
  for (const NvdEntry& e : nvd.entries) {
    bool found = false;
    for (size_t i = 0; i < host.gpus.size() && !found; ++i) {
      const Gpu& g = host.gpus[i];
      switch (e.kind) {
        case NvdEntryKind::kIndex: found = g.nvml_index == e.index; if (found) whole[i] = true; break;
        case NvdEntryKind::kUuid: found = same_uuid(g.uuid, e.raw); if (found) whole[i] = true; break;
        case NvdEntryKind::kPciAddress: {
          auto a = parse_pci_address(e.raw);
          found = a && g.pci && *a == *g.pci;
          if (found) whole[i] = true;
          break;
        }
        case NvdEntryKind::kMigIndex:
          if (g.nvml_index == e.index) {
            if (e.mig_index >= g.mig_devices.size()) refuse(e, "GPU " + std::to_string(e.index) + " has no MIG device " + std::to_string(e.mig_index));
            migs[i].insert(e.mig_index);
            found = true;
          }
          break;
        case NvdEntryKind::kMigUuid:
          for (size_t m = 0; m < g.mig_devices.size(); ++m)
            if (same_uuid(g.mig_devices[m].uuid, e.raw)) migs[i].insert(m), found = true;
          break;
        case NvdEntryKind::kInvalid: refuse(e, e.reason);
      }
    }
    if (!found) refuse(e, "no such GPU on this host");
  }
  ContainerView v;
  v.snapshot = host;
  v.snapshot.gpus.clear();
  std::vector<std::string> from;
  for (size_t i = 0; i < host.gpus.size(); ++i) {
    if (!whole[i] && migs[i].empty()) continue;
    Gpu g = host.gpus[i];
    if (!whole[i]) {  // only some MIG devices were injected
      std::vector<MigDevice> kept;
      for (size_t m : migs[i]) kept.push_back(g.mig_devices[m]);
      g.mig_devices = kept;
    }
    from.push_back(std::to_string(g.nvml_index));
    g.nvml_index = static_cast<uint32_t>(v.snapshot.gpus.size());
    v.snapshot.gpus.push_back(g);
  }
  std::string list;
  for (const std::string& f : from) list += (list.empty() ? "" : ", ") + f;
  v.what = nvd.mode == NvdMode::kVoid ? "no GPU and no driver libraries"
           : from.empty()            ? "no GPU"
                                     : std::string(from.size() == 1 ? "host GPU " : "host GPUs ") + list + ", renumbered from 0";
  v.snapshot.source = host.source + ", inside a container with NVIDIA_VISIBLE_DEVICES=" + value + " (" + v.what + ")";
  return v;
}

std::vector<uint32_t> host_indices(const Snapshot& inside, const std::optional<std::string>& value) {
  NvidiaVisibleDevices nvd = parse_nvidia_visible_devices(value);
  if (nvd.mode != NvdMode::kList) return {};
  std::set<uint32_t> named;
  for (const NvdEntry& e : nvd.entries) {
    if (e.kind != NvdEntryKind::kIndex) return {};
    named.insert(e.index);
  }
  if (named.size() != inside.gpus.size()) return {};
  return {named.begin(), named.end()};  // in the host's order, as the runtime numbers them
}

}  // namespace gpumap
