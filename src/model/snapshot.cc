#include "model/snapshot.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <unordered_map>

#include "model/uuid.h"

namespace gpumap {

struct Snapshot::UuidIndex {
  const Gpu* data = nullptr;  // gpus.data() and gpus.size() when built
  size_t size = 0;
  struct Ref {
    uint32_t gpu;
    int32_t mig;  // -1: the GPU itself
  };
  std::unordered_map<std::string, Ref> by_key;  // uuid_key: same_uuid's equality
  std::unordered_map<std::string, Ref> by_hex;  // uuid_hex: same_uuid_hex's
};

std::shared_ptr<const Snapshot::UuidIndex> Snapshot::uuid_index() const {
  std::shared_ptr<const UuidIndex> have;
  {
    std::lock_guard<std::mutex> lock(index_.mutex);
    have = index_.index;
  }
  if (have && have->data == gpus.data() && have->size == gpus.size()) return have;
  auto built = std::make_shared<UuidIndex>();
  built->data = gpus.data();
  built->size = gpus.size();
  built->by_key.reserve(gpus.size());
  built->by_hex.reserve(gpus.size());
  // In scan order, first entry kept: the same device the scans below return first.
  for (uint32_t i = 0; i < gpus.size(); ++i) {
    const Gpu& g = gpus[i];
    built->by_key.try_emplace(uuid_key(g.uuid), UuidIndex::Ref{i, -1});
    built->by_hex.try_emplace(uuid_hex(g.uuid), UuidIndex::Ref{i, -1});
    for (size_t m = 0; m < g.mig_devices.size(); ++m) {
      built->by_key.try_emplace(uuid_key(g.mig_devices[m].uuid), UuidIndex::Ref{i, static_cast<int32_t>(m)});
      built->by_hex.try_emplace(uuid_hex(g.mig_devices[m].uuid), UuidIndex::Ref{i, static_cast<int32_t>(m)});
    }
  }
  std::shared_ptr<const UuidIndex> out = std::move(built);
  std::lock_guard<std::mutex> lock(index_.mutex);
  index_.index = out;
  return out;
}

const Gpu* Snapshot::find_uuid(const std::string& uuid) const {
  if (uuid.empty()) return nullptr;  // a GPU whose UUID NVML could not read (lost) has none to find
  DeviceRef d = find_device(uuid);
  if (d.gpu && !d.mig) return d.gpu;
  if (!d.gpu) return nullptr;
  // A MIG device came first under this UUID (only a host file that repeats a UUID does that).
  for (const Gpu& g : gpus)
    if (same_uuid(g.uuid, uuid)) return &g;
  return nullptr;
}

Snapshot::DeviceRef Snapshot::scan_device(const std::string& uuid) const {
  for (const Gpu& g : gpus) {
    if (same_uuid(g.uuid, uuid)) return {&g, nullptr};
    for (const MigDevice& m : g.mig_devices)
      if (same_uuid(m.uuid, uuid)) return {&g, &m};
  }
  return {};
}

namespace {

/// The device an index entry names, if it is still within `gpus` (else both null).
template <class Ref>
Snapshot::DeviceRef resolve_ref(const std::vector<Gpu>& gpus, const Ref& r) {
  if (r.gpu >= gpus.size()) return {};
  const Gpu& g = gpus[r.gpu];
  if (r.mig < 0) return {&g, nullptr};
  if (static_cast<size_t>(r.mig) >= g.mig_devices.size()) return {};
  return {&g, &g.mig_devices[static_cast<size_t>(r.mig)]};
}

}  // namespace

Snapshot::DeviceRef Snapshot::find_device(const std::string& uuid) const {
  std::shared_ptr<const UuidIndex> index = uuid_index();
  auto it = index->by_key.find(uuid_key(uuid));
  if (it != index->by_key.end()) {
    DeviceRef d = resolve_ref(gpus, it->second);
    if (d.gpu && same_uuid(d.mig ? d.mig->uuid : d.gpu->uuid, uuid)) return d;
  }
  return scan_device(uuid);
}

namespace {

/// uuid_hex(uuid) == hex, without building the string: find_cuda_device runs once per visible
/// GPU, over every GPU (on 4 096 GPUs the allocations made `pick` take most of a minute).
bool hex_is(const std::string& uuid, const std::string& hex) {
  size_t start = uuid.rfind("GPU-", 0) == 0 || uuid.rfind("MIG-", 0) == 0 ? 4 : 0, k = 0;
  for (size_t i = start; i < uuid.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(uuid[i]);
    if (!std::isxdigit(c)) continue;
    if (k >= hex.size() || static_cast<char>(std::tolower(c)) != hex[k]) return false;
    ++k;
  }
  return k == hex.size();
}

}  // namespace

Snapshot::DeviceRef Snapshot::scan_cuda_device(const std::string& hex) const {
  for (const Gpu& g : gpus) {
    if (hex_is(g.uuid, hex)) return {&g, nullptr};
    for (const MigDevice& m : g.mig_devices)
      if (hex_is(m.uuid, hex)) return {&g, &m};
  }
  return {};
}

Snapshot::DeviceRef Snapshot::find_cuda_device(const std::string& cuda_uuid) const {
  std::string hex = uuid_hex(cuda_uuid);
  std::shared_ptr<const UuidIndex> index = uuid_index();
  auto it = index->by_hex.find(hex);
  if (it != index->by_hex.end()) {
    DeviceRef d = resolve_ref(gpus, it->second);
    if (d.gpu && hex_is(d.mig ? d.mig->uuid : d.gpu->uuid, hex)) return d;
  }
  return scan_cuda_device(hex);
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

uint32_t nvlinks_between(const Gpu& a, const Gpu& b) {
  if (&a == &b) return 0;
  uint64_t n = 0;
  for (const NvLinkPeer& p : a.nvlink_peers)
    if (p.uuid == b.uuid) n += p.links;
  if (a.nvswitch_fabric && a.nvswitch_fabric == b.nvswitch_fabric)
    n += std::min(a.nvswitch_links.value_or(0), b.nvswitch_links.value_or(0));
  return static_cast<uint32_t>(std::min<uint64_t>(n, 1u << 16));
}

std::vector<NvLinkPeer> nvlink_peers_of(const Snapshot& s, const Gpu& g) {
  std::vector<NvLinkPeer> out;
  if (!g.nvswitch_fabric) {  // direct links only: already one entry per peer
    out = g.nvlink_peers;
  } else {
    for (const Gpu& peer : s.gpus)
      if (uint32_t n = nvlinks_between(g, peer)) out.push_back({peer.uuid, n, peer.nvml_index});
  }
  std::sort(out.begin(), out.end(), [](const NvLinkPeer& a, const NvLinkPeer& b) { return a.nvml_index < b.nvml_index; });
  return out;
}

}  // namespace gpumap
