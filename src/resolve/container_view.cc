#include "resolve/container_view.h"

#include <algorithm>
#include <cctype>
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

std::optional<std::vector<uint32_t>> cgroup_allowed_minors(const std::vector<std::string>& device_rules) {
  std::set<uint32_t> minors;
  for (const std::string& rule : device_rules) {
    // "TYPE MAJOR:MINOR ACCESS": type a (all), c or b; * for any number.
    std::string type, numbers;
    size_t sp = rule.find(' ');
    if (sp == std::string::npos) continue;
    type = rule.substr(0, sp);
    numbers = rule.substr(sp + 1, rule.find(' ', sp + 1) - sp - 1);
    if (type == "a") return std::nullopt;
    if (type != "c") continue;
    size_t colon = numbers.find(':');
    if (colon == std::string::npos) continue;
    std::string maj = numbers.substr(0, colon), min = numbers.substr(colon + 1);
    if (maj != "*" && maj != "195") continue;
    if (min == "*") return std::nullopt;
    if (min.empty() || min.size() > 6 || !std::all_of(min.begin(), min.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    uint32_t m = static_cast<uint32_t>(std::stoul(min));
    if (m < 254) minors.insert(m);  // 254 nvidia-modeset, 255 nvidiactl: no GPU
  }
  return std::vector<uint32_t>(minors.begin(), minors.end());
}

bool ContainerGrant::sees_more() const {
  if (!extra.empty()) return true;
  if (given) return false;
  return (privileged && seen.size() >= 2) || envvar_not_from_plugin;
}

namespace {

// The whole GPU a given entry names here (its UUID; a MIG device's parent), "" when none: a UUID
// (GPU- or MIG-), or an nvidia-smi index (a container that sees every GPU numbers them as the host).
std::string given_gpu(const Snapshot& s, const std::string& entry) {
  for (const Gpu& g : s.gpus) {
    if (same_uuid(g.uuid, entry)) return g.uuid;
    for (const MigDevice& m : g.mig_devices)
      if (same_uuid(m.uuid, entry)) return g.uuid;
  }
  if (!entry.empty() && entry.size() < 6 && std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; }))
    for (const Gpu& g : s.gpus)
      if (g.nvml_index == std::stoul(entry)) return g.uuid;
  return "";
}

}  // namespace

ContainerGrant container_grant(const Snapshot& inside, const ContainerFacts& facts, const Environment& env) {
  ContainerGrant c;
  for (const Gpu& g : inside.gpus) c.seen.push_back(g.uuid);
  c.privileged = facts.privileged.value_or(false);
  if (facts.cgroup == DeviceCgroup::kV1) c.cgroup_allows_all = !cgroup_allowed_minors(facts.device_rules).has_value();
  std::optional<std::string> nvd_value = env.get("NVIDIA_VISIBLE_DEVICES");
  NvidiaVisibleDevices nvd = parse_nvidia_visible_devices(nvd_value);
  bool in_pod = env.get("KUBERNETES_SERVICE_HOST").has_value();
  bool index_entries = false;
  for (const NvdEntry& e : nvd.entries) index_entries |= e.kind == NvdEntryKind::kIndex || e.kind == NvdEntryKind::kMigIndex;
  c.envvar_not_from_plugin = in_pod && (nvd.mode == NvdMode::kAll || (nvd.mode == NvdMode::kList && index_entries));
  std::vector<std::string> given_gpus;  // whole GPUs
  if (facts.given) {
    c.given = std::vector<std::string>{};
    for (const std::string& e : *facts.given) {
      std::string g = given_gpu(inside, e);
      if (g.empty()) continue;
      c.given->push_back(e);
      given_gpus.push_back(g);
    }
    c.given_by = facts.given_by.empty() ? "what the container was given" : facts.given_by;
  } else if (nvd.mode == NvdMode::kNone) {
    c.given = std::vector<std::string>{};
    c.given_by = "NVIDIA_VISIBLE_DEVICES=" + nvd_value.value_or("");
  } else if (nvd.mode == NvdMode::kList && inside.gpus.size() > nvd.entries.size()) {
    // More GPUs listed than the variable names: the runtime did not narrow this container to them,
    // so NVML numbers them as the host does and an index entry is the host's.
    std::vector<std::string> named;
    for (const NvdEntry& e : nvd.entries) {
      std::string g = e.kind == NvdEntryKind::kMigIndex ? given_gpu(inside, std::to_string(e.index)) : given_gpu(inside, e.raw);
      if (g.empty()) break;
      named.push_back(g);
    }
    if (named.size() == nvd.entries.size()) {
      c.given = named;
      given_gpus = named;
      c.given_by = "NVIDIA_VISIBLE_DEVICES=" + nvd_value.value_or("");
    }
  }
  if (c.given)
    for (const std::string& u : c.seen)
      if (std::find(given_gpus.begin(), given_gpus.end(), u) == given_gpus.end()) c.extra.push_back(u);
  if (facts.dev_nodes)
    for (const std::string& u : c.extra) {
      const Gpu* g = inside.find_uuid(u);
      if (g && g->minor_number &&
          std::find(facts.dev_nodes->begin(), facts.dev_nodes->end(), *g->minor_number) != facts.dev_nodes->end())
        c.extra_nodes = true;
    }
  return c;
}

}  // namespace gpumap
