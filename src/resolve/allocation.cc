#include "resolve/allocation.h"

#include <algorithm>
#include <set>

#include "model/text.h"
#include "model/uuid.h"

namespace gpumap {
namespace {

/// The GPUs by minor number (nvidia-smi order where a minor is unknown): gres.conf's usual order.
std::vector<const Gpu*> by_minor(const Snapshot& s) {
  std::vector<const Gpu*> gpus;
  for (const Gpu& g : s.gpus) gpus.push_back(&g);
  std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu* a, const Gpu* b) {
    if (a->minor_number && b->minor_number) return *a->minor_number < *b->minor_number;
    return a->nvml_index < b->nvml_index;
  });
  return gpus;
}

/// Every GPU has a minor number and they are not exactly 0..n-1: some of the node's GPUs are not
/// seen here (a device cgroup or a container hides them).
bool some_hidden(const Snapshot& s) {
  std::set<uint32_t> minors;
  for (const Gpu& g : s.gpus) {
    if (!g.minor_number) return false;
    minors.insert(*g.minor_number);
  }
  return !minors.empty() && (minors.size() != s.gpus.size() || *minors.rbegin() + 1 != s.gpus.size());
}

}  // namespace

bool Allocation::allows(const Snapshot& s, const std::string& uuid) const {
  const Gpu* g = s.find_device(uuid).gpu;
  if (!g) g = s.find_cuda_device(uuid).gpu;  // CUDA's name for a MIG device
  if (!g) return false;
  return std::any_of(uuids.begin(), uuids.end(), [&](const std::string& u) { return same_uuid(u, g->uuid); });
}

std::string Allocation::setting() const {
  if (variable.empty()) return "";
  std::vector<std::string> parts;
  for (uint32_t id : ids) parts.push_back(std::to_string(id));
  return variable + "=" + join(parts, ",");
}

std::string Allocation::words(const Snapshot& s) const {
  if (variable.empty()) return "";
  std::vector<std::string> here;
  for (const std::string& u : uuids) here.push_back(std::to_string(s.nvml_index_of(u)));
  switch (reading) {
    case SlurmIdReading::kPositions:
    case SlurmIdReading::kMinors:
      return setting() + " (nvidia-smi GPU" + (here.size() == 1 ? " " : "s ") + join(here, ", ") + " here)";
    case SlurmIdReading::kCgroup:
      return setting() + " (a device cgroup leaves this process only those GPUs: nvidia-smi GPU" +
             (here.size() == 1 ? " " : "s ") + join(here, ", ") + " here)";
    case SlurmIdReading::kUnknown:
    case SlurmIdReading::kNone: break;
  }
  return setting();
}

std::optional<uint32_t> Allocation::slurm_id_of(const std::string& uuid) const {
  for (size_t i = 0; i < ids.size() && i < id_uuids.size(); ++i)
    if (!id_uuids[i].empty() && same_uuid(id_uuids[i], uuid)) return ids[i];
  return std::nullopt;
}

std::string Allocation::uuid_of_slurm_id(uint32_t id) const {
  for (size_t i = 0; i < ids.size() && i < id_uuids.size(); ++i)
    if (ids[i] == id) return id_uuids[i];
  return "";
}

Allocation read_allocation(const Snapshot& s, const LauncherEnv& launch) {
  Allocation a;
  for (const Gpu& g : s.gpus) a.uuids.push_back(g.uuid);
  a.node_gpus_hidden = some_hidden(s);
  bool step = launch.slurm_step_gpus.has_value();
  const std::optional<IntList>& list = step ? launch.slurm_step_gpus : launch.slurm_job_gpus;
  if (!list || !list->error.empty() || list->values.empty()) return a;
  a.variable = step ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS";
  a.ids = list->values;

  auto place = [&](auto&& gpu_of) {
    std::vector<std::string> out;
    for (uint32_t id : a.ids) {
      const Gpu* g = gpu_of(id);
      if (!g) return std::vector<std::string>{};
      out.push_back(g->uuid);
    }
    return out;
  };
  std::vector<const Gpu*> ordered = by_minor(s);
  auto by_position = [&](uint32_t id) -> const Gpu* { return id < ordered.size() ? ordered[id] : nullptr; };
  auto by_minor_number = [&](uint32_t id) -> const Gpu* {
    for (const Gpu& g : s.gpus)
      if (g.minor_number == id) return &g;
    return nullptr;
  };
  std::vector<std::string> placed;
  if (some_hidden(s) && !(placed = place(by_minor_number)).empty()) {
    a.reading = SlurmIdReading::kMinors;
  } else if (!(placed = place(by_position)).empty()) {
    a.reading = SlurmIdReading::kPositions;
  } else {
    std::set<uint32_t> distinct(a.ids.begin(), a.ids.end());
    a.reading = s.gpus.size() <= distinct.size() ? SlurmIdReading::kCgroup : SlurmIdReading::kUnknown;
    a.id_uuids.assign(a.ids.size(), "");
    return a;
  }
  a.id_uuids = placed;
  std::vector<std::string> allowed;
  for (const Gpu& g : s.gpus)  // nvidia-smi order
    if (std::any_of(placed.begin(), placed.end(), [&](const std::string& u) { return same_uuid(u, g.uuid); }))
      allowed.push_back(g.uuid);
  a.restricts = allowed.size() < s.gpus.size();
  a.uuids = allowed;
  return a;
}

std::vector<std::string> allowed_only(const Snapshot& s, const Allocation& a, const std::vector<std::string>& uuids) {
  std::vector<std::string> out;
  for (const std::string& u : uuids)
    if (a.allows(s, u)) out.push_back(u);
  return out;
}

}  // namespace gpumap
